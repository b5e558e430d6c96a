"""The console script's first frame. Only the standard library is imported before the handler,
so a broken dependency (an import error, a library that fails on load) exits 3 with one line
instead of a traceback and exit 1, which a CI job would read as a failed threshold."""

from __future__ import annotations

import sys

EXIT_INTERNAL = 3  # localeval.errors.EXIT_INTERNAL, written here so nothing of ours is imported first


def _say(message: str) -> None:
    """One line on standard error, if there is one (a closed stderr is None or raises)."""
    try:
        if sys.stderr is not None:
            sys.stderr.write(message + "\n")
            sys.stderr.flush()
    except (OSError, ValueError):
        pass


def main() -> None:
    """The `localeval` command."""
    try:
        from localeval.cli import main as cli_main
    except Exception as error:  # noqa: BLE001 - whatever a dependency raises while loading
        _say(f"localeval: cannot start: {type(error).__name__}: {error} (a broken installation: reinstall localeval and its dependencies)")
        sys.exit(EXIT_INTERNAL)
    cli_main()
