"""A sweep's results on disk: one Parquet file per cell, named by the cell's key.

``OUT/cells/<key>.parquet`` holds the cell's one row, written atomically (temporary file,
then rename) as soon as the cell ends, so a sweep stopped at any instant (Ctrl-C,
``kill -9``) keeps every finished cell and never a half-written one; a cell run again
replaces its own file, so no row is ever duplicated. The folder is a Parquet dataset:
``pandas.read_parquet(OUT / "cells")`` reads it too, where the cells' columns agree.
Per-job tables, when asked for, go to ``OUT/jobs/<key>.parquet`` the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from queuesim.common.atomic import atomic_path
from queuesim.common.errors import QueuesimError

__all__ = ["CELLS", "JOBS", "finished_keys", "read_rows", "write_jobs", "write_row"]

CELLS = "cells"
JOBS = "jobs"
_SUFFIX = ".parquet"


def write_row(out: Path, row: Mapping[str, Any]) -> Path:
    """Write one cell's row to ``out/cells/<key>.parquet``, atomically."""
    target = out / CELLS / f"{row['key']}{_SUFFIX}"
    table = pa.Table.from_pylist([dict(row)])
    with atomic_path(target) as tmp:
        pq.write_table(table, tmp)
    return target


def write_jobs(out: Path, key: str, jobs: pd.DataFrame) -> Path:
    """Write one cell's per-job table to ``out/jobs/<key>.parquet``, atomically."""
    target = out / JOBS / f"{key}{_SUFFIX}"
    with atomic_path(target) as tmp:
        jobs.to_parquet(tmp, index=False)
    return target


def _files(out: str | Path) -> list[Path]:
    folder = Path(out) / CELLS
    return sorted(folder.glob(f"*{_SUFFIX}")) if folder.is_dir() else []


def finished_keys(out: str | Path) -> set[str]:
    """The keys of the cells that ran to the end (``status`` ``done``): a sweep skips them.
    Failed cells are run again."""
    done = set()
    for path in _files(out):
        status = pq.read_table(path, columns=["status"]).column("status").to_pylist()
        if status == ["done"]:
            done.add(path.name.removesuffix(_SUFFIX))
    return done


def read_rows(out: str | Path) -> pd.DataFrame:
    """Every cell's row (in key order); columns a cell lacks (another site's queues) are
    empty there."""
    files = _files(out)
    if not files:
        raise QueuesimError(f"{out}: no sweep results here (no {CELLS}/*{_SUFFIX})")
    tables = [pq.read_table(path) for path in files]
    table = pa.concat_tables(tables, promote_options="default")
    frame: pd.DataFrame = table.to_pandas()
    return frame
