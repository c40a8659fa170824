"""The trace formats by name, with what each is, for ``--format`` and error messages: a
module without the readers, so that a command's help does not import pandas and numba to
list them (:mod:`.registry` pairs each name with its reader)."""

from __future__ import annotations

#: format name -> what it is, in the order content sniffing tries them
FORMAT_NAMES: dict[str, str] = {
    "pbs": "PBS Pro / OpenPBS / Torque accounting log",
    "slurm-jobcomp": "Slurm jobcomp/filetxt log",
    "sacct": "Slurm sacct --parsable2 output",
    "alea-swf": "Alea extended SWF",
    "swf": "Standard Workload Format",
}

#: whitespace-separated fields of a job line of Alea's extended SWF (SWF's 18 and three more),
#: by which sniffing tells it from SWF
ALEA_FIELDS = 21
