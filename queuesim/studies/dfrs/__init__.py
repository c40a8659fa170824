"""``queuesim study dfrs``: DFRS against batch scheduling, papers ``000`` and ``002``.

Stillwell, Vivien and Casanova compare batch scheduling (FCFS, EASY) with their dynamic
fractional resource scheduling (DFRS) algorithms on the maximum bounded stretch of synthetic
Lublin-Feitelson traces at load levels 0.1 ... 0.9 and of week-long pieces of the HPC2N
log, with and without a 5-minute rescheduling penalty. Conference paper ``000`` reports the
*degradation factor* (maximum stretch over the best algorithm's on the same instance; its
Table I: average, standard deviation and maximum over the traces), journal paper ``002`` the
*degradation from bound* (maximum stretch over the offline lower bound of its section 3; its
Fig. 1: the average against the load, on a log scale). This package runs the same experiment
at a scale one machine can run:

* instances: ``traces_per_load`` synthetic traces at every load level, ``jobs`` jobs each,
  on the 128 quad-core nodes of ``site-configs/dfrs-lublin-128.yaml``; trace ``k`` uses
  seed ``seed + k`` at every load, so the load levels scale the same traces, as in the
  papers; and the first ``hpc2n_weeks`` weeks of ``HPC2N-2002-2.2-cln.swf.gz`` on
  ``site-configs/dfrs-hpc2n.yaml`` (skipped, with a note, when the trace is absent). The
  annotated traces are written to a cache folder;
* the lower bound of every instance (:func:`queuesim.results.stretch_bound.max_stretch_lower_bound`,
  tau = 10 s) is computed once and kept in the cache's ``bounds.csv``, keyed by a digest of
  the jobs it was computed from, so a re-run only simulates;
* every algorithm under every penalty, in parallel processes; FCFS and EASY never preempt,
  so they run once per instance and are reported under every penalty;
* per run: the maximum bounded stretch (tau = 10 s, with the jobs' dedicated runtimes), its
  degradation from bound, and its degradation factor against the best algorithm of the
  instance under the same penalty.

Outputs (each written atomically into ``out``): ``study.csv`` (one row per instance x
algorithm x penalty; deterministic: no timing in it), ``study.md`` (Table I-like summaries,
per-load tables, the command that regenerates it, the scale and the study's time),
``degradation-vs-load.png`` (Fig. 1-like, one panel per penalty) and ``timings.csv`` (the
seconds of every simulation and bound computation).

The package: :mod:`.config`, :mod:`.instances`, :mod:`.running`, :mod:`.tables`,
:mod:`.files`, :mod:`.options`; its public names are importable from here, each imported
when first used (PEP 562): the command line builds its options from :mod:`.config` alone,
without pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from queuesim.common.lazy_names import lazy_names

if TYPE_CHECKING:
    from queuesim.studies.dfrs.config import (
        BATCH_ALGORITHMS,
        DEFAULT_ALGORITHMS,
        DEFAULT_CACHE,
        DEFAULT_LOADS,
        DEFAULT_OUT,
        DEFAULT_PENALTIES,
        DFRS_ALGORITHMS,
        HPC2N_TRACE,
        BoundFigures,
        StudyConfig,
        load_text,
        resolve_algorithms,
    )
    from queuesim.studies.dfrs.instances import (
        read_bound_cache,
        write_bound_cache,
    )
    from queuesim.studies.dfrs.options import (
        parse_loads,
        parse_penalties,
        run_and_print,
    )
    from queuesim.studies.dfrs.running import (
        run_study,
    )
    from queuesim.studies.dfrs.tables import (
        STUDY_COLUMNS,
        penalty_title,
    )

#: where each public name is defined
_HOMES = {
    "BATCH_ALGORITHMS": "queuesim.studies.dfrs.config",
    "BoundFigures": "queuesim.studies.dfrs.config",
    "DEFAULT_ALGORITHMS": "queuesim.studies.dfrs.config",
    "DEFAULT_CACHE": "queuesim.studies.dfrs.config",
    "DEFAULT_LOADS": "queuesim.studies.dfrs.config",
    "DEFAULT_OUT": "queuesim.studies.dfrs.config",
    "DEFAULT_PENALTIES": "queuesim.studies.dfrs.config",
    "DFRS_ALGORITHMS": "queuesim.studies.dfrs.config",
    "HPC2N_TRACE": "queuesim.studies.dfrs.config",
    "STUDY_COLUMNS": "queuesim.studies.dfrs.tables",
    "StudyConfig": "queuesim.studies.dfrs.config",
    "load_text": "queuesim.studies.dfrs.config",
    "parse_loads": "queuesim.studies.dfrs.options",
    "parse_penalties": "queuesim.studies.dfrs.options",
    "penalty_title": "queuesim.studies.dfrs.tables",
    "read_bound_cache": "queuesim.studies.dfrs.instances",
    "resolve_algorithms": "queuesim.studies.dfrs.config",
    "run_and_print": "queuesim.studies.dfrs.options",
    "run_study": "queuesim.studies.dfrs.running",
    "write_bound_cache": "queuesim.studies.dfrs.instances",
}

__all__ = [
    "BATCH_ALGORITHMS",
    "DEFAULT_ALGORITHMS",
    "DEFAULT_CACHE",
    "DEFAULT_LOADS",
    "DEFAULT_OUT",
    "DEFAULT_PENALTIES",
    "DFRS_ALGORITHMS",
    "HPC2N_TRACE",
    "STUDY_COLUMNS",
    "BoundFigures",
    "StudyConfig",
    "load_text",
    "parse_loads",
    "parse_penalties",
    "penalty_title",
    "read_bound_cache",
    "resolve_algorithms",
    "run_and_print",
    "run_study",
    "write_bound_cache",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES)
