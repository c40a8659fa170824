"""``queuesim import-machines``: an Alea machine file as a site file's ``clusters:``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.console import Console

from queuesim.cli.options import paragraph, subparser

HELP = "print the clusters of an Alea machine file as a site file's clusters: section"
DESCRIPTION = paragraph(
    """
    Read an Alea machine description and print it as the clusters: section of a site file
    (YAML, with comments saying where each number came from), ready to paste into a site
    file. FILE is an Alea or AleaNG .machines file (6 or 8 columns) or an Alea .mwf machine
    description (MetaCentrum 2009); the format is taken from the file name unless --format
    says it.
    """
)


def add_parser(sub: Any) -> None:
    parser = subparser(sub, "import-machines", HELP, DESCRIPTION)
    parser.add_argument("file", metavar="FILE", help="the machine file")
    parser.add_argument(
        "--format",
        choices=("machines", "mwf"),
        help="machines: Alea/AleaNG .machines; mwf: Alea .mwf; default: from FILE's suffix",
    )
    parser.add_argument(
        "--property",
        action="append",
        default=[],
        metavar="CLUSTER=P1,P2",
        help="give the nodes of CLUSTER these node properties (features), which jobs may "
        "require; repeat for several clusters. Machine files say little of properties: "
        "take them from the jobs (queuesim inspect) and the site's documentation",
    )
    parser.set_defaults(handler=cmd_import_machines)


def cmd_import_machines(args: argparse.Namespace, console: Console) -> int:
    import shlex

    from queuesim.site.alea_machines import clusters_yaml, read_machine_file, with_properties

    groups = with_properties(read_machine_file(args.file, args.format), args.property)
    command = ["queuesim", "import-machines", str(args.file)]
    if args.format:
        command += ["--format", args.format]
    for given in args.property:
        command += ["--property", given]
    # Plain stdout, not the rich console: no markup, no wrapping of the YAML.
    sys.stdout.write(clusters_yaml(groups, args.file, command=shlex.join(command)))
    return 0
