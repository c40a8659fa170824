"""Write a trace read in any format as SWF or as Parquet (``queuesim convert``).

* **SWF** (``.swf``, ``.swf.gz``): the 18 standard fields, written by
  :func:`queuesim.traces.swf.write_swf`. The header keeps the trace's own header lines,
  which for a site log map the numbers SWF needs back to names (``; Queue: 1 workq``,
  ``; User: 3 alice``, ``; Group: 2 physics``), and adds a note naming the source file and
  its format. A trace whose queues have names but no numbers (Alea's extended SWF) gets
  them numbered in order of first appearance, with ``; Queue: n name`` lines.
* **Parquet** (``.parquet``): every column of the trace, names kept (``queue_name``,
  ``user_name``, ``properties``, ``source_id`` ...), with the header lines in the file's
  key-value metadata under ``queuesim.header``; for pandas, evalys and any Arrow reader.
  The same trace always gives the same bytes.

Both are written atomically.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa

from queuesim.common.atomic import atomic_path
from queuesim.traces.swf import SwfTrace, write_swf

__all__ = ["EXPORT_SUFFIXES", "export_trace", "write_parquet"]

#: what :func:`export_trace` writes, by the end of the output's name
EXPORT_SUFFIXES = (".swf", ".swf.gz", ".parquet")


def _numbered_queues(trace: SwfTrace) -> tuple[pd.DataFrame, list[str]]:
    """The jobs with their queue field numbered from their queue names, and the
    ``; Queue: n name`` lines, where the trace names queues the SWF field does not number
    (Alea's extended SWF: the field is -1 on every line, the name is in ``queue_name``);
    the trace unchanged otherwise."""
    jobs = trace.jobs
    if "queue_name" not in jobs.columns or trace.header.queues or (jobs["queue"] >= 0).any():
        return jobs, []
    codes, names = pd.factorize(jobs["queue_name"].astype(str), sort=False)
    numbered = jobs.copy()
    numbered["queue"] = codes.astype("int64") + 1
    lines = [f"; Queue: {i} {name}" for i, name in enumerate(names, start=1)]
    return numbered, lines


def export_trace(trace: SwfTrace, out: str | Path, source_format: str) -> Path:
    """Write ``trace`` to ``out`` as SWF or Parquet, by its suffix (module docstring)."""
    out = Path(out)
    note = f"; Note: converted by queuesim from {trace.path.name} ({source_format})"
    header = [*trace.header.lines, note]
    name = out.name.lower()
    if name.endswith((".swf", ".swf.gz")):
        jobs, queue_lines = _numbered_queues(trace)
        write_swf(out, jobs, [*trace.header.lines, *queue_lines, note])
    elif name.endswith(".parquet"):
        write_parquet(out, trace.jobs, {"queuesim.header": "\n".join(header)})
    else:
        raise ValueError(
            f"{out}: cannot tell the output format from its name; expected it to end in "
            + ", ".join(EXPORT_SUFFIXES)
        )
    return out


def write_parquet(
    out: str | Path, frame: pd.DataFrame, metadata: dict[str, str] | None = None
) -> None:
    """Write ``frame`` (its columns, not its index) as Parquet through pyarrow, atomically,
    with ``metadata`` in the file's key-value metadata. Deterministic: no pandas metadata
    (it names the pandas version and carries nothing the columns do not), zstd, no
    statistics; the same frame gives the same bytes with the same pyarrow."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    kept = dict(table.schema.metadata or {})
    kept.pop(b"pandas", None)
    kept.update({k.encode("utf-8"): v.encode("utf-8") for k, v in (metadata or {}).items()})
    table = table.replace_schema_metadata(kept or None)
    # dictionary pages only for text: for numbers they cost a hash table per column
    # (HPC2N's job table: 70 MB more memory and twice the time) and save little after zstd
    text = [
        f.name
        for f in table.schema
        if pa.types.is_string(f.type)
        or pa.types.is_large_string(f.type)
        or pa.types.is_dictionary(f.type)
    ]
    # imported here: a run that writes no Parquet file does without pyarrow's file systems
    import pyarrow.parquet as pq

    with atomic_path(out) as tmp:
        pq.write_table(table, tmp, compression="zstd", write_statistics=False, use_dictionary=text)
