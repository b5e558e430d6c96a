"""The console script's first frame. Only the standard library is imported before the handler,
so a broken dependency (an import error, a library that fails on load) exits 3 with one line
instead of a traceback and exit 1, which a CI job would read as a failed threshold."""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping

EXIT_INTERNAL = 3  # localeval.errors.EXIT_INTERNAL, written here so nothing of ours is imported first
# What numpy's BLAS reads for its thread count, and what it falls back on. OpenBLAS sizes its
# per-thread buffers when numpy first loads: one thread per core on a busy or memory-limited
# machine makes the verifier about 10x slower and can end the process in OpenBLAS itself (exit 1,
# the exit code of a failed gate). The judge's llama.cpp threads are its own (--threads).
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
USER_THREAD_SETTINGS = (*BLAS_THREADS, "OMP_NUM_THREADS")


def _say(message: str) -> None:
    """One line on standard error, if there is one (a closed stderr is None or raises)."""
    try:
        if sys.stderr is not None:
            sys.stderr.write(message + "\n")
            sys.stderr.flush()
    except (OSError, ValueError):
        pass


def pin_blas_threads(environ: MutableMapping[str, str]) -> None:
    """One BLAS thread, before numpy loads, unless the user set a thread count themselves."""
    if not any(environ.get(name) for name in USER_THREAD_SETTINGS):
        for name in BLAS_THREADS:
            environ[name] = "1"


def main() -> None:
    """The `localeval` command."""
    pin_blas_threads(os.environ)
    try:
        from localeval.cli import main as cli_main
    except Exception as error:  # noqa: BLE001 - whatever a dependency raises while loading
        if isinstance(error, MemoryError) or "failed to map segment" in str(error):  # a memory limit, not the installation
            _say("localeval: cannot start: out of memory (the machine, or a limit set on this process, leaves too little to load numpy and localeval)")
        else:
            _say(f"localeval: cannot start: {type(error).__name__}: {error} (a broken installation: reinstall localeval and its dependencies)")
        sys.exit(EXIT_INTERNAL)
    cli_main()
