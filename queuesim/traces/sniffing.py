"""How each site-log format is recognised from the first lines of a file that are neither
blank nor comments (:func:`~.registry.detect_format` tries them in turn): a module apart
from the readers, so that reading a trace imports only its own format's reader and not
every other one's (with their value parsers and compiled scans)."""

from __future__ import annotations

import re

from queuesim.common.files import UTF8_BOM

#: the start of a PBS accounting record: ``MM/DD/YYYY HH:MM:SS;type;id;``
_PBS_RECORD = re.compile(rb"^\d\d/\d\d/\d{4} \d\d:\d\d:\d\d;[A-Za-z];[^;]*;")


def looks_like_pbs(first_lines: list[bytes]) -> bool:
    """Whether the first content lines are PBS accounting records."""
    return bool(first_lines) and all(_PBS_RECORD.match(line) for line in first_lines[:5])


def _first_content(first_lines: list[bytes]) -> bytes | None:
    for index, raw in enumerate(first_lines):
        line = raw.removeprefix(UTF8_BOM).strip() if index == 0 else raw.strip()
        if line:
            return line
    return None


def looks_like_sacct(first_lines: list[bytes]) -> bool:
    """Whether the first lines of a file look like ``sacct --parsable2`` output: a header
    line naming JobID, or a job line of the 26 XDMoD fields starting with a job id."""
    line = _first_content(first_lines)
    if line is None or b"|" not in line:
        return False
    # only a line with a "|" asks Slurm's field names and job id syntax
    from queuesim.traces.slurm_values import _JOB_ID, XDMOD_FIELDS

    fields = [f.strip().decode("utf-8", "replace") for f in line.split(b"|")]
    if any(f.lower() == "jobid" for f in fields):
        return True
    return len(fields) == len(XDMOD_FIELDS) and _JOB_ID.fullmatch(fields[0]) is not None


def looks_like_jobcomp(first_lines: list[bytes]) -> bool:
    """Whether the first lines of a file look like a Slurm jobcomp/filetxt log."""
    line = _first_content(first_lines)
    return (
        line is not None
        and line.startswith(b"JobId=")
        and (b" JobState=" in line or b" UserId=" in line)
    )
