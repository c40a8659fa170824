"""What the tests of ``queuesim import slurm`` and ``queuesim import pbs`` both read from an
import: the site file as YAML data, its entries by name, the settings reported as not
modelled."""

from __future__ import annotations

from typing import Any

import yaml

from queuesim.site.import_report import ImportReport
from queuesim.site.site_draft import render_site_yaml


def site_of(result: Any) -> dict[str, Any]:
    """The site file an import (Slurm or PBS: its ``draft`` and ``report``) writes."""
    data = yaml.safe_load(render_site_yaml(result.draft, result.report, "queuesim import x"))
    assert isinstance(data, dict)
    return data


def by_name(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in entries}


def skipped(report: ImportReport) -> dict[str, list[str]]:
    """Every setting read but not modelled: key -> its values."""
    out: dict[str, list[str]] = {}
    for n in report.not_modelled:
        out.setdefault(n.key, []).append(n.value)
    return out
