"""Telling the user's Ctrl-C from a KeyboardInterrupt that code raised.

Python raises KeyboardInterrupt when SIGINT arrives (its default handler), and any code may raise
one itself: a metric from another package that does `raise KeyboardInterrupt`. The first is the
user stopping the run (exit 130, resumable); the second is that package failing, and must fail
its samples like anything else it raises, or the run would stop as if the user had asked, and
every resume would stop again at the same sample. While `watching_ctrl_c()` is active the
default handler is wrapped so that a signal leaves a mark first; `users_interrupt(error)` reads
it. Where nothing watches (another thread started the run, or the caller handles SIGINT itself),
every KeyboardInterrupt is taken as the user's, as Python does.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from localeval.errors import Terminated

_signalled = threading.Event()


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    _signalled.set()
    signal.default_int_handler(signum, frame)  # raises KeyboardInterrupt, as without the watch


@contextmanager
def watching_ctrl_c() -> Iterator[None]:
    """Mark SIGINT before it raises KeyboardInterrupt, while the block runs: only in the main
    thread and with SIGINT at Python's default (a SIGINT ignored, under `nohup`, stays ignored;
    a caller's own handler is left alone). Nested watches are one watch."""
    install = threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if not install:
        yield
        return
    _signalled.clear()
    signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def ctrl_c_pressed() -> bool:
    """Whether SIGINT came while a watch was active."""
    return _signalled.is_set()


def users_interrupt(error: BaseException) -> bool:
    """Whether `error` stops the run for the user: a KeyboardInterrupt after a SIGINT, or any
    KeyboardInterrupt where no watch can tell (SIGINT not wrapped by `watching_ctrl_c`). With
    SIGINT ignored (a shell's background job, `nohup`) no Ctrl-C can raise one: it is code's."""
    if not isinstance(error, KeyboardInterrupt):
        return False
    handler = signal.getsignal(signal.SIGINT)
    if handler is signal.SIG_IGN:
        return False
    return _signalled.is_set() or handler is not _on_sigint


def _on_termination(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum, signal.Signals(signum).name)


@contextmanager
def stopping_on_termination() -> Iterator[None]:
    """SIGTERM and SIGHUP raise `Terminated` while the block runs, as Ctrl-C raises
    KeyboardInterrupt, so its cleanup runs (a pull's partial files and scratch folder): only in
    the main thread and for a signal at its default (one ignored, under `nohup`, stays ignored)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = [sig for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if sig is not None and signal.getsignal(sig) is signal.SIG_DFL]
    for sig in caught:
        signal.signal(sig, _on_termination)
    try:
        yield
    finally:
        for sig in caught:
            signal.signal(sig, signal.SIG_DFL)
