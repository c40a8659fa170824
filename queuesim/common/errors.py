"""User-facing errors.

Every problem with the user's input (a site file, a trace, a policy name, a CLI argument)
is raised as a :class:`QueuesimError` whose message names the file, line or key and says
what was expected. The CLI prints the message and exits non-zero, never a traceback.
"""

from __future__ import annotations


class QueuesimError(Exception):
    """An error in the user's input, with a message meant to be read by a person."""

    exit_code = 2


class ConfigError(QueuesimError):
    """A site configuration (or policy parameter) is invalid."""


class WorkloadError(QueuesimError):
    """A workload file cannot be read or is malformed."""


class OutputError(QueuesimError):
    """An output file or folder cannot be written where asked, or a saved output is
    incomplete (its writing was interrupted)."""


class PolicyViolation(Exception):
    """A scheduling policy tried an illegal action (a bug in the policy, not in the input).

    The message names the job and the rule it broke.
    """


class QueuesimWarning(UserWarning):
    """Something legal but probably unwise (the command line prints it as a warning)."""
