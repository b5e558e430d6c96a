"""The exceptions localeval raises, each carrying the exit code the CLI maps it to.

Kept free of click so the library can be used without the CLI.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_THRESHOLD_FAILED = 1
EXIT_USAGE = 2


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
    """A bad option, metric name or parameter."""


class ModelError(LocalevalError):
    """The judge model is missing, corrupt or cannot be loaded."""


class JudgeError(LocalevalError):
    """The judge could not produce an answer for one sample (for example, it does not fit)."""
