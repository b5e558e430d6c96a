"""The exceptions localeval raises, each carrying the exit code the CLI maps it to.

Kept free of click so the library can be used without the CLI. The exit codes are
a contract with CI scripts, so they live here, in one place:

    0    every sample met every threshold (or none was set)
    1    a threshold was not met (a sample scored below it or could not be scored,
         a mean was too low, or nothing was scored at all while a threshold was asked for)
    2    usage error, or an input line that could not be read (the rest is still scored)
    3    localeval could not do its job: a bug, or the machine failed it (a disk full or an
         I/O error while writing the results or a report); never a verdict on the data
    130  interrupted; the results written so far can be continued with --resume
    143, 129  stopped by SIGTERM or SIGHUP (128 + the signal, as a shell reports it): a `models pull`
         cleans up on the way out, as on Ctrl-C
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_THRESHOLD_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130


class LocalevalError(Exception):
    """Base class: a message meant for a person, and the process exit code."""

    exit_code = EXIT_USAGE


class InputError(LocalevalError):
    """A bad input line: names the file, the line and the field so it can be fixed."""

    def __init__(self, path: str, line: int, field: str | None, reason: str) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.reason = reason
        where = f"{path}:{line}"
        what = f"field '{field}': {reason}" if field else reason
        super().__init__(f"{where}: {what}")


class ConfigError(LocalevalError):
    """A bad option, metric name, parameter, or a file that cannot be used as asked."""


class ModelError(LocalevalError):
    """The judge model is missing, corrupt or cannot be loaded."""


class JudgeError(LocalevalError):
    """The judge could not produce an answer for one sample (for example, it does not fit)."""


class MachineError(LocalevalError):
    """The machine failed a write that was allowed (a disk full, a quota, an I/O error), while
    writing the results file or a report: not a usage error (the same command succeeds on a
    disk with room), not a verdict on the data; exit 3, whichever file it was."""

    exit_code = EXIT_INTERNAL


class Interrupted(LocalevalError):
    """Ctrl-C during a run: what was written is kept and can be resumed."""

    exit_code = EXIT_INTERRUPTED


class Terminated(Interrupted):
    """SIGTERM or SIGHUP (what `timeout`, a CI job's limit or a closed terminal send) while a command
    that cleans up on the way out runs: exit 128 + the signal's number, as a shell reports it."""

    def __init__(self, signum: int, name: str) -> None:
        super().__init__(f"stopped by {name}")
        self.exit_code = 128 + signum
