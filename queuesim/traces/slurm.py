"""Read Slurm accounting: ``sacct --parsable2`` output and the ``jobcomp/filetxt`` log.

**sacct** (:func:`read_sacct`). The command a site runs, for one month, one line per job::

    TZ=UTC sacct --allusers --allocations --parsable2 \\
        --starttime 2024-01-01T00:00:00 --endtime 2024-02-01T00:00:00 \\
        --format=JobID,JobIDRaw,Cluster,Partition,QOS,Account,Group,GID,User,UID,\\
    Submit,Eligible,Start,End,Elapsed,ExitCode,State,NNodes,NCPUS,ReqCPUS,ReqMem,ReqTRES,\\
    AllocTRES,Timelimit,NodeList,Constraints > jobs.sacct

(the fields are :data:`SACCT_FIELDS`; add ``--clusters=NAME`` on a multi-cluster database).

* ``--allocations`` (``-X``) is recommended: a job's row already holds what a simulator
  needs (its times, CPUs, nodes, memory and GPU request); the step rows (``123.batch``,
  ``123.extern``, ``123.0``) only multiply the rows. Files with steps are read too: each
  step is folded into its job (the job row wins) and counted, one ``step_folded`` note per
  step row; a step whose job row is absent is dropped (``orphan_step``).
* no ``--duplicates`` (``-D``): sacct then shows only the last run of a requeued job, which
  is what a trace wants. With ``-D`` the earlier runs (state ``REQUEUED``) are dropped,
  one ``requeued`` note each, and the last record is kept as it is.
* ``TZ=UTC``: sacct prints times (``YYYY-MM-DDTHH:MM:SS``) in the time zone of the shell
  that runs it. They are read as naive wall-clock times turned into epoch seconds as if
  UTC; with ``TZ=UTC`` that is exact, otherwise DST shifts are not corrected (an hour
  lost or repeated twice a year). ``Unknown``, ``None`` and empty are unknown (NaN).
* ``--parsable2`` separates fields with ``|`` and escapes nothing, so a ``|`` in a
  free-text value (a job name, an OR constraint ``a|b``) adds a field. When the **last**
  column is ``Constraints`` or ``JobName`` the extra fields are given back to it (this is
  why the recommended list ends with ``Constraints`` and leaves ``JobName`` out: it says
  nothing a simulator uses). Any other row with the wrong field count is malformed.
* ``--starttime/--endtime`` select the jobs eligible or running in the window, including
  jobs still pending or running at ``--endtime``: those are not ended and are dropped
  (``not_ended``). Choose an end time some days in the past.

A header line (field names, ``|``-separated, as sacct prints without ``--noheader``) names
the columns: they are taken by name (case-insensitive), in any order, unknown ones
ignored; ``JobID``, ``Submit``, ``Start``, ``End`` and ``State`` are required, and one of
``NCPUS``, ``ReqCPUS``, ``AllocTRES`` or ``ReqTRES``. Without a header the file must have
the 26 fields of Open XDMoD's Slurm shredder, :data:`XDMOD_FIELDS` (``JobID`` to
``JobName``; Open XDMoD runs ``sacct --noheader`` with that ``--format``).

What each column becomes (``LogJobs``, :mod:`queuesim.traces.log_frame`):

* JobID: the job's ``source_id``. Array elements ``123_4`` are jobs. An unstarted array
  range ``123_[1-3,7%2]`` stands for its elements (``123_1``, ``123_2``, ``123_3``,
  ``123_7``; ``%2`` is a throttle), each one job, as Open XDMoD expands them; pending ones
  are then dropped as ``not_ended``. Components of a heterogeneous job ``123+0``,
  ``123+1`` are each a job (they start together; the simulator does not tie them), one
  ``het_component`` warning each;
* State -> SWF status: ``COMPLETED`` 1; ``FAILED TIMEOUT NODE_FAIL OUT_OF_MEMORY
  PREEMPTED BOOT_FAIL DEADLINE`` 0; ``CANCELLED`` (``CANCELLED by 123``) 5 (cleaning
  keeps cancelled jobs that ran); ``PENDING RUNNING SUSPENDED REQUEUED RESIZING
  REQUEUE_HOLD REQUEUE_FED SPECIAL_EXIT`` at the end of the log: not ended, dropped
  (``not_ended``); ``REVOKED`` (a federated sibling that ran elsewhere) dropped
  (``revoked``); any other state is kept as failed (0) with an ``unknown_state`` warning
  (Open XDMoD skips such jobs with a warning). ``state`` keeps the text as written;
* ExitCode ``N:S``: ``exit_status`` N, or 128 + S when a signal S killed it; -1 unknown;
* Submit, Eligible, Start, End: times (above). The runtime is End - Start (Elapsed is not
  needed, and differs only for suspended jobs);
* Timelimit -> requested walltime: ``[D-]HH:MM:SS``, ``D-HH[:MM]``, ``MM:SS``, a plain
  number of minutes, fractions of a second ignored; ``UNLIMITED``, ``Partition_Limit``
  (the partition's limit, unknown here) and ``0`` are unknown, with a
  ``walltime_unlimited`` warning for the first two;
* CPUs: requested = ReqCPUS, else the ``cpu`` of ReqTRES; allocated = NCPUS, else the
  ``cpu`` of AllocTRES. Nodes = NNodes, else the ``node`` of AllocTRES, else ReqTRES.
  GPUs = the ``gres/gpu`` of AllocTRES (or the sum of its typed ``gres/gpu:TYPE``
  entries), else of ReqTRES;
* ReqMem -> the job's memory: ``48000Mn`` per node (x nodes), ``3000Mc`` per CPU (x the
  requested, else allocated CPUs), units ``K M G T`` (M when none). A plain ``48000M``
  (Slurm 21.08 and later print no suffix) is the job's total, as the ``mem`` of ReqTRES
  is. Slurm before 17.02 flagged per-CPU memory with bit 31 of a 32-bit number; a newer
  sacct shows such records as ``2147486448Mn``: values above 2^31 and below 2^32 MB are
  decoded as (value - 2^31) MB per CPU. In the 2016 XDMoD log this equals the ``mem`` of
  ReqTRES on all 10,626 such jobs; a decoded value that ReqTRES does not confirm gets a
  ``memory_per_cpu_flag`` note (repaired). Other values from 2^31 up (and text that is not
  a size) are unknown, with a ``memory_unset`` warning. ``0`` (``--mem=0``: all of a
  node's memory) is unknown. Without ReqMem the ``mem`` of ReqTRES is used;
* Partition -> ``queue_name`` (a pending job's list ``a,b``: the first, with a
  ``partition_list`` warning); Account -> ``account``; User (else UID) -> ``user_name``;
  Group (else GID) -> ``group_name``;
* NodeList -> ``hosts``: host ranges expanded (``cpn-f13-03-[01-02,05]``, several bracket
  groups, zero padding kept), joined by ``+``; ``None assigned`` -> ``""``;
* ``ppn``: a Slurm job's node count is a hard request, so when the CPUs (allocated, else
  requested) divide evenly over the nodes, ppn = CPUs / nodes (a one-node job: all its
  CPUs on one node); otherwise 0 (free spread) with a ``ppn_uneven`` warning;
* Constraints (``--constraint``, node features) -> ``properties``: ``a&b`` -> ``a:b``; OR
  (``a|b``), brackets, counts (``a*2``) or commas cannot be expressed: no properties and a
  ``constraint_not_modelled`` warning;
* ``exclusive``: sacct has no column that tells ``--exclusive`` (it shows only what was
  allocated); always False;
* optional extra column TotalCPU (``[D-]HH:MM:SS`` or ``MM:SS.mmm``): the CPU time;
  without it the SWF average CPU time is unknown. Used memory is always unknown (MaxRSS
  lives on step rows).

A time (Submit, Eligible, Start, End) that is neither a time nor unknown, or a count
(NCPUS, ReqCPUS, NNodes) that is not a whole number of 0 or more (nor a range ``1-2``,
unknown), is an error naming the
file, line, column and value; with ``skip_bad_lines`` the job is kept with that value
unknown and a ``bad_<column>`` note (``bad_submit``, ``bad_ncpus``...).

The same job id twice (``-D``, or two clusters' ids in one file: the key is Cluster and
JobID): an earlier record in a requeue state is dropped (``requeued``, repaired); any other
earlier record stays a job of its own, with a ``duplicate_id`` warning.

Notes (:attr:`SwfTrace.notes`) come grouped by reason, each group in file order.

Speed and memory: the file is read a piece of whole lines at a time (a few MB; gzip too),
each piece split by pyarrow's CSV reader, times parsed by it, every other value a string,
so only the columns are held, never the whole text; the columns other than JobID and the
times are read as dictionaries and converted through their distinct values (a million-job
log has a few thousand distinct ReqMem, TRES, NodeList...); job ids stay Arrow strings from
the file to the frame's ``source_id`` (never a Python object each), the codes into distinct
values are 32-bit and only the numbers a job uses are spread over the rows. Only when a row
has the wrong field count (or there is a blank line) is the file read whole and its lines
walked one by one, to number them. A million-row sacct file (the 2016 XDMoD log repeated
with shifted ids and times, 350 MB) reads in about 2 s on one core.

**jobcomp/filetxt** (:func:`read_slurm_jobcomp`): the file ``JobCompLoc`` names when
``JobCompType=jobcomp/filetxt``, one line per ended job: ``JobId=123 UserId=alice(1000)
GroupId=g(100) Name=x JobState=COMPLETED Partition=p TimeLimit=60 StartTime=... EndTime=...
NodeList=n[1-2] NodeCnt=2 ProcCnt=24 WorkDir=/home/x ReservationName= Tres=cpu=24,...
Account=a QOS=normal WcKey= Cluster=c SubmitTime=... EligibleTime=... DerivedExitCode=0:0
ExitCode=0:0``. Pairs are split at `` Key=`` for the keys of :data:`JOBCOMP_KEYS` (so that
Name and WorkDir may hold spaces; an unknown key stays inside the value before it).
TimeLimit is in minutes (or ``UNLIMITED``); ``Tres`` is what was allocated (AllocTRES);
NodeCnt and ProcCnt are NNodes and NCPUS; the rest is read as for sacct. No real
jobcomp file with a licence that allows redistribution was found: the tests use lines
written by hand from the Slurm documentation.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from queuesim.common.errors import WorkloadError
from queuesim.common.files import decode_line, read_bytes
from queuesim.traces.log_frame import (
    LogJobs,
    log_trace,
)
from queuesim.traces.slurm_table import _Table, read_rows
from queuesim.traces.slurm_values import (
    _COUNTS,
    _JOB_ID,
    _JOBCOMP_COLUMNS,
    _JOBCOMP_REQUIRED,
    _MEM_FLAG,
    _MEM_PER_CPU,
    _MEM_PER_NODE,
    _MEM_UNSET,
    _REQUEUE,
    _TIMES,
    _USER_ID,
    JOBCOMP_KEYS,
    SACCT_FIELDS,
    XDMOD_FIELDS,
    BoolArray,
    TextArray,
    _array_indices,
    _constraint,
    _duration,
    _exit_status,
    _hosts,
    _partition,
    _req_mem,
    _state,
    _tres,
    expand_hostlist,
    gpus_of_tres,
)
from queuesim.traces.sniffing import looks_like_jobcomp, looks_like_sacct
from queuesim.traces.swf import BadLine, SwfTrace, reader_notes

__all__ = [
    "JOBCOMP_KEYS",
    "SACCT_FIELDS",
    "XDMOD_FIELDS",
    "expand_hostlist",
    "gpus_of_tres",
    "looks_like_jobcomp",
    "looks_like_sacct",
    "read_sacct",
    "read_slurm_jobcomp",
]


# =========================================================================== jobs


class _Notes:
    def __init__(self) -> None:
        self.frames: list[pd.DataFrame] = []

    def add(self, lines: Any, jobs: Any, reason: str, action: str) -> None:
        if len(lines):
            self.frames.append(reader_notes(np.asarray(lines), np.asarray(jobs), reason, action))

    def frame(self) -> pd.DataFrame:
        if not self.frames:
            return reader_notes()
        return pd.concat(self.frames, ignore_index=True)


def _row_text(table: _Table, row: int) -> str:
    return "|".join(table.cell(name, row) for name in table.columns)


def _objects(values: pa.Array) -> TextArray:
    """Arrow strings as a numpy array of str (for the few rows a note names)."""
    return np.asarray(values.to_numpy(zero_copy_only=False), dtype=object)


def _job_ids(
    path: Path, table: _Table, bad: list[BadLine], *, skip_bad_lines: bool
) -> tuple[pa.Array, pa.Array, BoolArray, BoolArray, BoolArray, dict[int, list[int]]]:
    """Per row: its JobID and the id of the job it belongs to (its JobID without a step),
    both as Arrow strings; whether it is a step, a heterogeneous job's component,
    malformed; and the array indices of unstarted ranges by row."""
    ids = table.strings("JobID")
    odd_rows = np.flatnonzero(~table.digits("JobID"))
    is_step = np.zeros(table.n, dtype=bool)
    is_het = np.zeros(table.n, dtype=bool)
    malformed = np.zeros(table.n, dtype=bool)
    ranges: dict[int, list[int]] = {}
    replaced = np.zeros(table.n, dtype=bool)
    replacements: list[str] = []
    for row, raw in zip(odd_rows, ids.take(odd_rows).to_pylist(), strict=True):
        text = str(raw).strip()
        match = _JOB_ID.fullmatch(text)
        reason = None
        if match is None:
            reason = f"JobID {text!r} is not a Slurm job id (123, 123_4, 123_[1-3], 123+0, 123.0)"
        else:
            step = match.group("step")
            replaced[row] = True
            replacements.append(text[: match.start("step") - 1] if step else text)
            is_step[row] = step is not None
            is_het[row] = match.group("het") is not None
            task = match.group("task")
            if task and task.startswith("[") and step is None:
                try:
                    ranges[int(row)] = _array_indices(task)
                except ValueError as exc:
                    reason = f"JobID {text!r}: {exc}"
        if reason is not None:
            malformed[row] = True
            bad.append(BadLine(int(table.line[row]), _row_text(table, int(row)), reason))
    if bad:
        bad.sort(key=lambda b: b.line)
        if not skip_bad_lines:
            raise WorkloadError(f"{path}:{bad[0].line}: {bad[0].reason}")
    keys = ids
    if replacements:
        keys = pc.replace_with_mask(ids, replaced, pa.array(replacements, type=pa.string()))
    return ids, keys, is_step, is_het, malformed, ranges


#: the columns whose values must be of their kind, and what that kind is
_CHECKED = {
    **{name: "a time YYYY-MM-DDTHH:MM:SS (or Unknown, None)" for name in sorted(_TIMES)},
    **{name: "a whole number of 0 or more (or a range 1-2)" for name in sorted(_COUNTS)},
}


def _names(table: _Table, name: str, fallback: str | None = None) -> TextArray:
    """The names of a column, stripped; where empty, those of ``fallback`` (a module
    function, not a closure: a recursive closure is a reference cycle that would keep the
    whole table alive until the garbage collector runs)."""
    name_codes, uniques = table.factorized(name)
    stripped = [u.strip() for u in uniques]
    values = np.array(stripped, dtype=object)[name_codes]
    if fallback is not None and table.has(fallback) and "" in stripped:
        empty = np.isin(name_codes, [i for i, u in enumerate(stripped) if not u])
        values = np.where(empty, _names(table, fallback), values)
    return np.asarray(values, dtype=object)


def _jobs(path: Path, table: _Table, bad: list[BadLine], *, skip_bad_lines: bool) -> LogJobs:
    """The jobs of the rows of ``table`` (module docstring)."""
    notes = _Notes()
    lines = table.line
    ids, keys, is_step, is_het, malformed, ranges = _job_ids(
        path, table, bad, skip_bad_lines=skip_bad_lines
    )
    cluster_codes, _ = table.factorized("Cluster")

    # steps: folded into their job row
    job_rows = np.flatnonzero(~is_step & ~malformed)
    step_rows = np.flatnonzero(is_step & ~malformed)
    if step_rows.size:
        job_keys = pd.MultiIndex.from_arrays(
            [cluster_codes[job_rows], _objects(keys.take(job_rows))]
        )
        parents = pd.MultiIndex.from_arrays(
            [cluster_codes[step_rows], _objects(keys.take(step_rows))]
        )
        found = np.asarray(parents.isin(job_keys), dtype=bool)
        step_ids = _objects(ids.take(step_rows))
        notes.add(lines[step_rows[found]], step_ids[found], "step_folded", "dropped")
        notes.add(lines[step_rows[~found]], step_ids[~found], "orphan_step", "dropped")

    # unstarted array ranges: one job per index
    every_row = job_rows.size == table.n
    rows = job_rows
    source = keys if every_row else keys.take(job_rows)
    if ranges:
        position = {int(r): i for i, r in enumerate(job_rows)}
        repeat = np.ones(job_rows.size, dtype=np.int64)
        for row, indices in ranges.items():
            repeat[position[row]] = len(indices)
        starts = np.concatenate([[0], np.cumsum(repeat)[:-1]])
        rows = np.repeat(job_rows, repeat)
        source = source.take(np.repeat(np.arange(job_rows.size), repeat))
        expanded = np.zeros(rows.size, dtype=bool)
        elements: list[str] = []
        for row, indices in sorted(ranges.items(), key=lambda item: position[item[0]]):
            start = int(starts[position[row]])
            base = str(keys[row].as_py()).split("_")[0]
            expanded[start : start + len(indices)] = True
            elements.extend(f"{base}_{i}" for i in indices)
        source = pc.replace_with_mask(source, expanded, pa.array(elements, type=pa.string()))
    job_lines = lines if every_row and not ranges else lines[rows]

    # states
    state_codes, state_uniques = table.factorized("State")
    decoded = [_state(u) for u in state_uniques]
    status_of = np.array([d[1] for d in decoded], dtype=np.int64)
    action_of = np.array([d[2] for d in decoded], dtype=object)
    requeue_of = np.array([d[0] in _REQUEUE for d in decoded], dtype=bool)
    codes = state_codes[rows]
    action = action_of[codes]

    keep = np.ones(rows.size, dtype=bool)
    # the same id twice: earlier records of a requeued job are dropped
    if not ranges and table.all_distinct("JobID"):
        duplicated = np.zeros(rows.size, dtype=bool)
    else:
        id_codes = source.dictionary_encode().indices.to_numpy(zero_copy_only=False)
        key_codes = id_codes.astype(np.int64) * (int(cluster_codes.max(initial=0)) + 1)
        key_codes += cluster_codes[rows]
        duplicated = pd.Series(key_codes).duplicated(keep="last").to_numpy()
    if duplicated.any():
        requeued = duplicated & requeue_of[codes]
        notes.add(job_lines[requeued], source.filter(requeued), "requeued", "repaired")
        keep &= ~requeued
        other = duplicated & ~requeued
        notes.add(job_lines[other], source.filter(other), "duplicate_id", "warning")
    for reason in ("not_ended", "revoked"):
        mask = keep & (action == reason)
        notes.add(job_lines[mask], source.filter(mask), reason, "dropped")
        keep &= ~mask
    unknown = keep & (action == "unknown_state")
    notes.add(job_lines[unknown], source.filter(unknown), "unknown_state", "warning")
    if not keep.all():
        rows, job_lines, codes = rows[keep], job_lines[keep], codes[keep]
        source = source.filter(keep)
    if rows.size != table.n or not np.array_equal(rows, np.arange(table.n)):
        table.rows = rows

    def noted(mask: npt.NDArray[np.bool_], reason: str, action: str) -> None:
        notes.add(job_lines[mask], source.filter(mask), reason, action)

    noted(is_het[rows], "het_component", "warning")

    # a time or count that is text of another kind: an error naming the line (else, with
    # skip_bad_lines, the value is unknown and noted)
    for name, expected in _CHECKED.items():
        wrong, values = table.malformed(name)
        if not wrong.size:
            continue
        if not skip_bad_lines:
            raise WorkloadError(
                f"{path}:{job_lines[wrong[0]]}: {name}: expected {expected}, found {values[0]!r}"
            )
        flags = np.zeros(rows.size, dtype=bool)
        flags[wrong] = True
        noted(flags, f"bad_{name.lower()}", "warning")

    # resources: each TRES, memory or time text converted once per distinct value
    # (columns of numbers), only the numbers used spread over the rows
    req, req_tres = table.distinct("ReqTRES", _tres, np.float64)
    alloc, alloc_tres = table.distinct("AllocTRES", _tres, np.float64)
    ncpus = table.counts("NCPUS")
    alloc_cpus = np.where(ncpus > 0, ncpus, np.nan_to_num(alloc_tres[:, 0])[alloc])
    alloc_cpus = alloc_cpus.astype(np.int64, copy=False)
    del ncpus
    reqcpus = table.counts("ReqCPUS")
    req_cpus = np.where(reqcpus > 0, reqcpus, np.nan_to_num(req_tres[:, 0])[req])
    req_cpus = req_cpus.astype(np.int64, copy=False)
    del reqcpus
    alloc_nodes = alloc_tres[:, 1][alloc]
    tres_nodes = np.where(np.isfinite(alloc_nodes), alloc_nodes, req_tres[:, 1][req])
    del alloc_nodes
    nnodes = table.counts("NNodes")
    nodes = np.where(nnodes > 0, nnodes, np.nan_to_num(tres_nodes)).astype(np.int64, copy=False)
    del nnodes, tres_nodes
    alloc_gpus = alloc_tres[:, 3][alloc]
    gpus = np.where(alloc_gpus > 0, alloc_gpus, req_tres[:, 3][req]).astype(np.int64)
    del alloc_gpus, alloc

    mem_codes, mem = table.distinct("ReqMem", _req_mem, np.float64)
    mem_cpus = np.where(req_cpus > 0, req_cpus, alloc_cpus).astype(np.float64)
    kind = mem[:, 1][mem_codes]
    factor = np.select(
        [kind == _MEM_PER_NODE, kind == _MEM_PER_CPU],
        [np.where(nodes > 0, nodes, np.nan), np.where(mem_cpus > 0, mem_cpus, np.nan)],
        1.0,
    )
    del kind, mem_cpus
    no_req_mem = table.mapped("ReqMem", lambda s: not s.strip(), bool)
    tres_mem = req_tres[:, 2][req]
    mem_mb = np.where(no_req_mem, tres_mem, mem[:, 0][mem_codes] * factor)
    del factor, no_req_mem
    # the decoded per-CPU value is noted unless ReqTRES confirms the job's total
    confirmed = np.isclose(mem_mb, tres_mem, rtol=1e-3)
    noted((mem[:, 2] == _MEM_FLAG)[mem_codes] & ~confirmed, "memory_per_cpu_flag", "repaired")
    noted((mem[:, 2] == _MEM_UNSET)[mem_codes], "memory_unset", "warning")
    del confirmed, tres_mem, req

    limit_codes, limit = table.distinct("Timelimit", _duration, np.float64)
    noted((limit[:, 1] > 0)[limit_codes], "walltime_unlimited", "warning")
    req_walltime = limit[:, 0][limit_codes]
    cpu_codes, cpu_times = table.distinct("TotalCPU", _duration, np.float64)
    cpu_time = cpu_times[:, 0][cpu_codes]

    queue_name = table.text_of("Partition", lambda s: _partition(s)[0])
    noted(table.mapped("Partition", lambda s: _partition(s)[1], bool), "partition_list", "warning")
    properties = table.mapped("Constraints", lambda s: _constraint(s)[0], object)
    odd = table.mapped("Constraints", lambda s: _constraint(s)[1], bool)
    noted(odd, "constraint_not_modelled", "warning")

    shape_cpus = np.where(alloc_cpus > 0, alloc_cpus, req_cpus)
    known = (nodes > 0) & (shape_cpus > 0)
    even = known & (shape_cpus % np.maximum(nodes, 1) == 0)
    ppn = np.where(even, shape_cpus // np.maximum(nodes, 1), 0).astype(np.int64)
    noted(known & ~even, "ppn_uneven", "warning")

    state_names, state_words = table.factorized("State")
    return LogJobs(
        line=job_lines.astype(np.int64),
        source_id=source,
        submit=table.times("Submit"),
        eligible=table.times("Eligible"),
        start=table.times("Start"),
        end=table.times("End"),
        req_walltime=req_walltime,
        req_cpus=req_cpus,
        alloc_cpus=alloc_cpus,
        req_mem_kb=mem_mb * 1024.0,
        used_mem_kb=np.full(rows.size, np.nan),
        cpu_time=cpu_time,
        status=status_of[codes],
        exit_status=table.mapped("ExitCode", _exit_status, np.int64),
        state=np.array([w.strip() for w in state_words], dtype=object)[state_names],
        user_name=_names(table, "User", "UID"),
        group_name=_names(table, "Group", "GID"),
        account=_names(table, "Account"),
        queue_name=queue_name,
        nodes=nodes,
        ppn=ppn,
        properties=properties,
        exclusive=np.zeros(rows.size, dtype=bool),
        gpus=gpus,
        hosts=table.text_of("NodeList", _hosts),
        notes=notes.frame(),
        bad_lines=tuple(bad),
    )


# =========================================================================== readers


def read_sacct(path: str | Path, *, skip_bad_lines: bool = False) -> SwfTrace:
    """Read ``sacct --parsable2`` output (gzip when so named or so made; module docstring).

    A malformed row (wrong field count, a job id that is not one) raises
    :class:`WorkloadError` naming the file and line, unless ``skip_bad_lines`` is set:
    then it is recorded in :attr:`SwfTrace.bad_lines` and left out.
    """
    path = Path(path)
    table, bad = read_rows(path, skip_bad_lines=skip_bad_lines)
    jobs = _jobs(path, table, bad, skip_bad_lines=skip_bad_lines)
    del table  # its columns are freed before the frame is built
    return log_trace(path, jobs, "Slurm sacct")


def _jobcomp_pairs(line: str) -> dict[str, str]:
    pieces = _JOBCOMP_SPLIT.split(" " + line)
    pairs: dict[str, str] = {}
    for index in range(1, len(pieces) - 1, 2):
        pairs.setdefault(pieces[index], pieces[index + 1].strip())
    return pairs


_JOBCOMP_SPLIT = re.compile(r"\s(" + "|".join(JOBCOMP_KEYS) + r")=")


def read_slurm_jobcomp(path: str | Path, *, skip_bad_lines: bool = False) -> SwfTrace:
    """Read a Slurm jobcomp/filetxt log (gzip when so named or so made; module docstring).

    A line without ``JobId=``, ``JobState=``, ``StartTime=`` and ``EndTime=`` raises
    :class:`WorkloadError` naming the file and line, unless ``skip_bad_lines`` is set.
    """
    path = Path(path)
    data = read_bytes(path, "jobcomp file")
    columns: dict[str, list[str]] = {
        c: [] for c in (*_JOBCOMP_COLUMNS.values(), "User", "UID", "Group", "GID")
    }
    numbers: list[int] = []
    bad: list[BadLine] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        text = decode_line(raw).strip()
        if not text:
            continue
        pairs = _jobcomp_pairs(text)
        missing = [k for k in _JOBCOMP_REQUIRED if k not in pairs]
        if missing or not text.startswith("JobId="):
            bad.append(
                BadLine(
                    number,
                    decode_line(raw),
                    f"not a jobcomp/filetxt line: no {', '.join(missing or ['JobId'])}=",
                )
            )
            continue
        numbers.append(number)
        for key, column in _JOBCOMP_COLUMNS.items():
            columns[column].append(pairs.get(key, ""))
        for key, name, ident in (("UserId", "User", "UID"), ("GroupId", "Group", "GID")):
            value = pairs.get(key, "")
            match = _USER_ID.fullmatch(value)
            columns[name].append(match.group(1) if match else value)
            columns[ident].append(match.group(2) if match else "")
    if bad and not skip_bad_lines:
        raise WorkloadError(f"{path}:{bad[0].line}: {bad[0].reason}")
    table = _Table(
        len(numbers),
        np.asarray(numbers, dtype=np.int64),
        {name: np.array(values, dtype=object) for name, values in columns.items()},
    )
    jobs = _jobs(path, table, bad, skip_bad_lines=skip_bad_lines)
    return log_trace(path, jobs, "Slurm jobcomp")
