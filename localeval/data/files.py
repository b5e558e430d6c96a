"""Writing files safely: never over an input, never two runs at once, never half a report.

A results file is appended to while a run goes on (so a killed run can resume),
under an exclusive lock that a second run writing the same file is told about.
Reports are written to a temporary file beside the target and renamed into place.
Every failure to write says which file and why, instead of a traceback.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext, redirect_stdout
from pathlib import Path
from typing import IO

from localeval.errors import ConfigError, MachineError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no fcntl; runs there are not locked
    fcntl = None  # type: ignore[assignment]

STDIO = "-"
CHUNK = 1 << 20


def _descriptor(stream: object) -> int | None:
    """The file descriptor under a stream, or None for one that has none (a test's capture)."""
    try:
        number = stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both of the last two
        return None
    return number if isinstance(number, int) else None


def _flush_c_stdio() -> None:
    """Flush C's own stdout buffer (printf from a library, buffered while stdout is a pipe), so
    it is written while descriptor 1 still goes to standard error, not into the results at exit."""
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError, TypeError):  # no C library to ask (not a POSIX system)
        pass


@contextmanager
def diverted_stdout() -> Iterator[IO[bytes]]:
    """Standard output kept for the results alone: yields a binary stream on it, while whatever
    else writes there goes to standard error: Python's print (sys.stdout) and, where the streams
    are real file descriptors, a child process or C code writing to descriptor 1 (a metric
    plugin's subprocess, a library's printf). Put back as it was on the way out."""
    if sys.stdout is None:  # started with standard output closed
        raise ConfigError("-o -: standard output is closed, so the results have nowhere to go; give -o FILE")
    out, err = _descriptor(sys.stdout), _descriptor(sys.stderr)
    if out is None or err is None or sys.stderr is None:  # no descriptors to move: Python's prints only
        results = sys.stdout.buffer
        with redirect_stdout(sys.stderr) if sys.stderr is not None else nullcontext():
            yield results
        return
    sys.stdout.flush()
    _flush_c_stdio()
    results = os.fdopen(os.dup(out), "wb")
    os.dup2(err, out)
    try:
        with redirect_stdout(sys.stderr):
            yield results
    finally:
        sys.stdout.flush()
        _flush_c_stdio()
        os.dup2(results.fileno(), out)
        try:
            results.close()
        except OSError:  # a reader that left: the BrokenPipeError that brought us here says so
            pass


def file_sha256(path: str | os.PathLike[str]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def read_at_most(path: str | os.PathLike[str], limit: int) -> bytes:
    """Up to `limit` + 1 bytes of a small file (a config, a rubric): one byte more than the
    limit tells the caller the file is too large, and /dev/zero or a huge file named by
    mistake is never read in full. OSError passes to the caller, which names the file."""
    # Opened without blocking, then checked: opening a FIFO would wait for a writer, and
    # reading a device (/dev/zero) would never end.
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise OSError(errno.EINVAL, "not a regular file")
    with os.fdopen(descriptor, "rb") as handle:
        return handle.read(limit + 1)


def read_small_file(path: str | os.PathLike[str], limit: int, what: str) -> bytes:
    """A small file's bytes (`read_at_most`), or a ConfigError naming `what` it was meant to be
    (a config file, a calibration file) when it cannot be read or is larger than `limit`."""
    try:
        raw = read_at_most(path, limit)
    except OSError as error:
        raise ConfigError(f"cannot read {what} {path}: {error.strerror or error}") from None
    if len(raw) > limit:
        raise ConfigError(f"{path}: larger than {limit >> 10} KiB; not a {what}")
    return raw


def same_file(a: str, b: str) -> bool:
    """Whether two paths name the same file (through symlinks, hard links, relative paths)."""
    if STDIO in (a, b):
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:  # one does not exist yet: compare where they would be
        return os.path.realpath(a) == os.path.realpath(b)


def refuse_overlaps(inputs: dict[str, str], outputs: dict[str, str]) -> None:
    """No output may name an input or another output: `-o data.jsonl` must not empty the data.

    Both arguments map an option's name ("-o", "INPUT") to the path it was given.
    """
    named = [(name, path) for name, path in outputs.items() if path]
    for index, (name, path) in enumerate(named):
        for input_name, input_path in inputs.items():
            if input_path and same_file(path, input_path):
                raise ConfigError(f"{name} {path} is the same file as {input_name} {input_path}; it would be overwritten. Choose another path")
        for other_name, other in named[index + 1 :]:
            if same_file(path, other):
                raise ConfigError(f"{name} and {other_name} both name {path}; choose two different files")


def is_regular_or_new(path: str) -> bool:
    """A results file: a regular file, or a path where one will be created (not a device, FIFO or '-')."""
    if path == STDIO:
        return False
    try:
        return Path(path).is_file() or not Path(path).exists()
    except OSError:
        return False


# Write failures that are the machine's, not the command's: exit 3 (MachineError), whichever file.
MACHINE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG})


def cannot_write(what: str, path: str | os.PathLike[str], error: OSError) -> ConfigError | MachineError:
    """Why `path` could not be written: the machine's failure (a full disk: exit 3) or the
    command's (no such folder, no permission: exit 2)."""
    kind = MachineError if error.errno in MACHINE_ERRNOS else ConfigError
    return kind(f"cannot write {what} {path}: {error.strerror or error}")



@contextmanager
def locked_for_writing(path: str, what: str = "results to") -> Iterator[IO[bytes]]:
    """Open `path` for reading and writing without truncating it, holding an exclusive lock.

    The caller decides whether to truncate (a new run) or keep and append (a resume):
    opening with "w" would empty the file before the lock said another run owns it.
    """
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise cannot_write(what, path, error) from None
    handle = os.fdopen(descriptor, "r+b")
    try:
        if fcntl is not None:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ConfigError(f"{path} is being written by another localeval run (it holds a lock on the file); wait for it or choose another output") from None
        yield handle
    finally:
        handle.close()  # also releases the lock


@contextmanager
def atomic_text(path: str, what: str) -> Iterator[IO[str]]:
    """A text file that appears at `path` only once complete (written beside it, then renamed),
    without ever replacing what stands at `path`: a symlink keeps pointing where it did (its
    target is what gets written, atomically), and a FIFO, a device such as /dev/stdout, or
    anything else that is not a regular file is written through as a stream; '-' is standard output."""
    if path == STDIO:
        try:
            yield sys.stdout
            sys.stdout.flush()
        except BrokenPipeError:  # the reader left (`| head`): the command line stops quietly
            raise
        except OSError as error:
            raise cannot_write(what, "standard output", error) from None
        return
    target = Path(os.path.realpath(path))
    if target.exists() and not target.is_file():
        try:
            with open(target, "w", encoding="utf-8") as stream:
                yield stream
        except OSError as error:
            raise cannot_write(what, path, error) from None
        return
    held = _refuse_if_locked(target, path)
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as error:
        if held is not None:
            os.close(held)
        raise cannot_write(what, path, error) from None
    try:
        os.chmod(temporary, _new_file_mode())
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            yield handle
        os.replace(temporary, target)
    except OSError as error:
        raise cannot_write(what, path, error) from None
    finally:
        if held is not None:
            os.close(held)
        if os.path.exists(temporary):
            os.unlink(temporary)


def _refuse_if_locked(target: Path, path: str) -> int | None:
    """A descriptor holding the lock a running localeval holds on its results file, taken on the
    file at `target` (None when there is none): a report must not be renamed over a results file
    that another run is still writing, whose rows would then go to an unlinked file."""
    if fcntl is None or not target.is_file():
        return None
    try:
        descriptor = os.open(target, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        raise ConfigError(f"{path} is being written by a running localeval (it holds a lock on the file); choose another output") from None
    except OSError:
        os.close(descriptor)
        return None
    return descriptor


def _new_file_mode() -> int:
    """The mode open() would give a new file under the user's umask (mkstemp makes 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
