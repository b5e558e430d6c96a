"""The verdict cache's file: judge answers by key, in an sqlite database that outlives a run.

Why sqlite (the standard library's): several runs may share one file at once (two CI jobs on one
runner, the actors of a Ray run on one machine); its write-ahead log lets them read while one
writes, one writer at a time, and a commit is atomic, so a run killed in the middle of a write
leaves the entries committed before it and nothing half-written.

The store never fails a run. Whatever goes wrong with the file (it is corrupt, truncated, written
by a future version of this format, read-only, on a full disk, locked longer than the busy
timeout) is said once on standard error, and the run goes on: without reading the file when it
cannot be read, without writing to it when it cannot be written. Each value is kept with a
checksum of its key and itself, so a page that changed under sqlite's feet is a miss, never an
answer that belongs to another key.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from localeval.errors import ConfigError

FORMAT_VERSION = 1  # sqlite's user_version: a file of a later version is left alone
# sqlite's application_id of a verdict cache ("LEVC"), set when one is made: what tells a cache
# from another program's sqlite database that --cache names by mistake (used, changed or
# deleted as a cache, it would be converted or lost).
APPLICATION_ID = 0x4C455643
OUR_TABLES = frozenset({"entries"})  # a cache made before the application id: format 1, these tables only
DEFAULT_MAX_BYTES = 1 << 30  # entries beyond this are evicted, least recently used first
EVICT_TO = 0.9  # an eviction frees down to this share of the bound
EVICT_SLICE = 2000  # entries looked at per step of an eviction
BUSY_SECONDS = 30.0  # how long a write waits for another run's write to finish
FLUSH_EVERY = 256  # last-used marks of hits, committed together
CHECK_BYTES = 16
PREPARE_RETRY_SECONDS = 0.05  # between tries to prepare a file another run is preparing

SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    key BLOB PRIMARY KEY,
    value TEXT NOT NULL,
    checksum BLOB NOT NULL,
    size INTEGER NOT NULL,
    used INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entries_used ON entries (used);
"""


class CacheUnusable(Exception):
    """The cache file cannot be used as it is (a message for the user, said once)."""


class NotACache(CacheUnusable):
    """The file is not a verdict cache (another program's database, the data, a device): left
    alone, and `cache clear` is not advised, for it would refuse it."""


def checksum(key: bytes, value: str) -> bytes:
    return hashlib.sha256(key + b"\0" + value.encode("utf-8")).digest()[:CHECK_BYTES]


@dataclass(frozen=True)
class StoreInfo:
    """What `localeval cache info` shows."""

    path: Path
    exists: bool
    file_bytes: int
    entries: int
    entry_bytes: int
    max_bytes: int
    format_version: int | None
    problem: str | None
    foreign: bool = False  # no sqlite file at all: not a cache, `cache clear` leaves it alone


# What was said about a file while a store of it is open: a run's judge and its verifier keep their
# answers in one file, and what is wrong with it is said once, not once per store.
_said: dict[Path, set[str]] = {}
_holders: Counter[Path] = Counter()
_said_lock = threading.Lock()


def _warn(message: str, path: Path | None = None) -> None:
    with _said_lock:
        if path is not None:
            if message in _said.setdefault(path, set()):
                return
            _said[path].add(message)
    sys.stderr.write(f"localeval: warning: {message}\n")
    sys.stderr.flush()


def _tick() -> int:
    return time.time_ns()


class VerdictStore:
    """Key-value entries in one sqlite file (see the module docstring). Thread-safe: a server
    judge's answers arrive on several threads."""

    def __init__(self, path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self.readable = False
        self.writable = False
        self._warned = False
        self._pending: list[tuple[bytes, str, bytes, int, int]] = []
        self._touched: set[bytes] = set()
        self._writes_since_evict = 0
        self._held = True
        with _said_lock:
            _holders[path] += 1
        try:
            self._connection = self._open()
        except (sqlite3.Error, OSError, CacheUnusable) as error:
            self._give_up(error, reading=True)

    # -- opening -----------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        reason = not_a_cache(self.path)
        if reason is not None:
            raise NotACache(f"{reason}: not a verdict cache")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, timeout=BUSY_SECONDS, check_same_thread=False, isolation_level=None)
        except (sqlite3.Error, OSError):
            return self._open_read_only()
        deadline = time.monotonic() + BUSY_SECONDS
        while True:
            try:
                self._prepare(connection)
                break
            except sqlite3.OperationalError as error:
                # Two runs opening a new file at once: switching it to the write-ahead log (and the
                # first schema) takes the whole file, and sqlite answers "locked" at once there,
                # without waiting its busy timeout; the other run is done in milliseconds.
                if _is_locked(error) and time.monotonic() < deadline:
                    time.sleep(PREPARE_RETRY_SECONDS)
                    continue
                connection.close()
                if _is_read_only(error):
                    return self._open_read_only()
                raise
            except BaseException:
                connection.close()
                raise
        self.readable = self.writable = True
        return connection

    def _prepare(self, connection: sqlite3.Connection) -> None:
        version = int(connection.execute("PRAGMA user_version").fetchone()[0])
        if version > FORMAT_VERSION:
            raise CacheUnusable(f"it was written by a later localeval (cache format {version}, this one reads {FORMAT_VERSION})")
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")  # WAL: a power cut may lose the last commits, never consistency
        if version < FORMAT_VERSION:
            connection.execute("PRAGMA auto_vacuum=INCREMENTAL")  # before the first table: evicted space goes back to the disk
            with _transaction(connection):
                if int(connection.execute("PRAGMA user_version").fetchone()[0]) < FORMAT_VERSION:  # another run may have made it meanwhile
                    if _tables(connection):  # checked before, but a file may change in between: never add ours to another's
                        raise NotACache("an sqlite database with tables of its own: not a verdict cache")
                    for statement in SCHEMA.split(";"):
                        if statement.strip():
                            connection.execute(statement)
                    connection.execute(f"PRAGMA user_version={FORMAT_VERSION}")
                    connection.execute(f"PRAGMA application_id={APPLICATION_ID}")
        elif int(connection.execute("PRAGMA application_id").fetchone()[0]) == 0:  # a cache made before the id: marked now
            connection.execute(f"PRAGMA application_id={APPLICATION_ID}")
        connection.execute("SELECT count(*) FROM entries WHERE key = x''").fetchone()  # a file that is no database fails here

    def _open_read_only(self) -> sqlite3.Connection:
        """A cache on a read-only disk or directory is still read (a CI cache restored read-only)."""
        if not self.path.is_file():
            raise CacheUnusable("its folder cannot be written and it does not exist yet")
        try:
            connection = self._read_only("mode=ro")
        except sqlite3.OperationalError:
            # A write-ahead-log database needs its -shm file, which a read-only folder cannot
            # hold: read it as immutable (nothing can write it there either).
            connection = self._read_only("mode=ro&immutable=1")
        self.readable = True
        _warn(f"the verdict cache {self.path} cannot be written; its answers are read, new ones are not kept", self.path)
        self._warned = True
        return connection

    def _read_only(self, query: str) -> sqlite3.Connection:
        connection = sqlite3.connect(f"{self.path.resolve().as_uri()}?{query}", uri=True, timeout=BUSY_SECONDS, check_same_thread=False, isolation_level=None)
        try:
            version = int(connection.execute("PRAGMA user_version").fetchone()[0])
            if version != FORMAT_VERSION:
                raise CacheUnusable(f"it is read-only and of cache format {version}, not {FORMAT_VERSION}")
            connection.execute("SELECT count(*) FROM entries WHERE key = x''").fetchone()
        except BaseException:
            connection.close()
            raise
        return connection

    def _give_up(self, error: BaseException, *, reading: bool) -> None:
        """Stop using the file (for writing only, or altogether), saying so once."""
        self.writable = False
        self._pending.clear()
        self._touched.clear()
        if reading:
            self.readable = False
        if not self._warned:
            self._warned = True
            what = "this run is scored without it" if reading else "new answers are not kept (those in it are still read)"
            reason = str(error) or type(error).__name__
            damaged = isinstance(error, sqlite3.DatabaseError) and not isinstance(error, sqlite3.OperationalError)
            fix = "; `localeval cache clear` starts it afresh" if (damaged or isinstance(error, CacheUnusable)) and not isinstance(error, NotACache) else ""
            _warn(f"the verdict cache {self.path} cannot be used ({reason}): {what}{fix}", self.path)

    # -- entries ----------------------------------------------------------------

    def get(self, key: bytes) -> str | None:
        """The value kept under `key`, or None (absent, unreadable, or failing its checksum)."""
        with self._lock:
            if not self.readable or self._connection is None:
                return None
            try:
                found = self._connection.execute("SELECT value, checksum FROM entries WHERE key = ?", (key,)).fetchone()
            except (sqlite3.Error, OSError) as error:
                self._give_up(error, reading=True)
                return None
            if found is None:
                return None
            value, check = found
            if not isinstance(value, str) or bytes(check) != checksum(key, value):
                return None  # a damaged page: asked again, and written again below
            if self.writable:
                self._touched.add(key)
                if len(self._touched) >= FLUSH_EVERY:
                    self._flush()
            return value

    def put(self, key: bytes, value: str) -> None:
        """Keep `value` under `key`, committed at once (a commit in the write-ahead log costs
        well under a millisecond, a judge answer seconds), with the last-used marks of the hits
        since the last commit."""
        with self._lock:
            if not self.writable:
                return
            self._pending.append((key, value, checksum(key, value), len(key) + len(value), _tick()))
            self._flush()

    def flush(self) -> None:
        with self._lock:
            self._flush()

    def _flush(self) -> None:
        if not self.writable or self._connection is None or not (self._pending or self._touched):
            return
        pending, touched = self._pending, self._touched
        self._pending, self._touched = [], set()
        try:
            with _transaction(self._connection):
                self._connection.executemany("INSERT OR REPLACE INTO entries (key, value, checksum, size, used) VALUES (?, ?, ?, ?, ?)", pending)
                tick = _tick()
                self._connection.executemany("UPDATE entries SET used = ? WHERE key = ?", [(tick, key) for key in touched])
            self._writes_since_evict += len(pending)
            if self._writes_since_evict >= 1000:
                self._evict()
        except (sqlite3.Error, OSError) as error:
            self._give_up(error, reading=False)

    def _evict(self) -> None:
        """Least recently used entries out until the entries fit the bound again."""
        assert self._connection is not None
        self._writes_since_evict = 0
        total = int(self._connection.execute("SELECT COALESCE(SUM(size), 0) FROM entries").fetchone()[0])
        if total <= self.max_bytes:
            return
        excess = total - int(self.max_bytes * EVICT_TO)
        while excess > 0:  # in slices, so a large cache is never read into memory at once
            oldest = self._connection.execute("SELECT key, size FROM entries ORDER BY used LIMIT ?", (EVICT_SLICE,)).fetchall()
            if not oldest:
                break
            doomed = []
            for key, size in oldest:
                if excess <= 0:
                    break
                doomed.append((key,))
                excess -= int(size)
            with _transaction(self._connection):
                self._connection.executemany("DELETE FROM entries WHERE key = ?", doomed)
        self._connection.execute("PRAGMA incremental_vacuum")

    def close(self) -> None:
        with self._lock:
            self._flush()
            if self.writable and self._connection is not None:
                try:
                    self._evict()
                except (sqlite3.Error, OSError) as error:
                    self._give_up(error, reading=False)
            if self._connection is not None:
                try:
                    self._connection.close()
                except sqlite3.Error:
                    pass
                self._connection = None
            self.readable = self.writable = False
            if self._held:
                self._held = False
                with _said_lock:
                    _holders[self.path] -= 1
                    if _holders[self.path] <= 0:
                        del _holders[self.path]
                        _said.pop(self.path, None)


def _is_locked(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


def _is_read_only(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "readonly" in text or "read-only" in text or "unable to open" in text


@contextmanager
def _transaction(connection: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, taken at once (BEGIN IMMEDIATE: the busy timeout applies to it,
    where a deferred one could fail on upgrade), committed or rolled back."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def store_info(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> StoreInfo:
    """The cache file's figures, read without changing it; a file that cannot be read says why."""
    try:
        reason = not_a_cache(path)
        if not path.exists():
            return StoreInfo(path, False, 0, 0, 0, max_bytes, None, None)
        if reason is not None:
            size = path.stat().st_size if path.is_file() else 0  # a FIFO or a device is looked at, never opened
            return StoreInfo(path, True, size, 0, 0, max_bytes, None, f"{reason}: not a verdict cache", foreign=True)
        file_bytes = sum(p.stat().st_size for p in _files(path) if p.is_file())
        if file_bytes == 0:
            return StoreInfo(path, True, 0, 0, 0, max_bytes, None, None)
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_SECONDS)
        try:
            version = int(connection.execute("PRAGMA user_version").fetchone()[0])
            if version != FORMAT_VERSION:
                return StoreInfo(path, True, file_bytes, 0, 0, max_bytes, version, f"cache format {version}, not {FORMAT_VERSION}")
            entries, size = connection.execute("SELECT count(*), COALESCE(SUM(size), 0) FROM entries").fetchone()
        finally:
            connection.close()
    except (sqlite3.Error, OSError) as error:
        return StoreInfo(path, True, file_bytes, 0, 0, max_bytes, None, str(error))
    return StoreInfo(path, True, file_bytes, int(entries), int(size), max_bytes, version, None)


def _files(path: Path) -> list[Path]:
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


SQLITE_MAGIC = b"SQLite format 3\0"  # the first 16 bytes of every sqlite database file
HEADER_BYTES = 100  # sqlite's file header: user_version at offset 60, application_id at 68


def not_a_cache(path: Path) -> str | None:
    """Why the file at `path` is not a verdict cache, or None when it is one or may become one:
    absent, empty, an sqlite database with no tables, a cache (damaged or not) whose header
    carries its application id, or a cache of format 1 made before that id (its tables only).
    Anything else is refused: a device or FIFO (never opened: a FIFO would block), the data or a
    model (no sqlite file), another program's database (its tables, or its application id)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"it cannot be looked at ({error.strerror or error})"
    if not stat.S_ISREG(mode):
        return "not a regular file (a device, a FIFO, a folder)"
    try:
        with open(path, "rb") as handle:
            header = handle.read(HEADER_BYTES)
    except OSError as error:
        return f"it cannot be read ({error.strerror or error})"
    if not SQLITE_MAGIC.startswith(header[: len(SQLITE_MAGIC)]):
        return "not an sqlite file"
    if len(header) < HEADER_BYTES or int.from_bytes(header[68:72], "big") == APPLICATION_ID:
        return None  # empty (a new cache), or ours whatever became of its pages
    deadline = time.monotonic() + BUSY_SECONDS
    while True:
        try:
            application, version, tables = _marks(path, "mode=ro")
            break
        except sqlite3.OperationalError as error:
            if _is_locked(error) and time.monotonic() < deadline:  # another run is making it a cache: "locked" at once, not after the busy timeout
                time.sleep(PREPARE_RETRY_SECONDS)
                continue
            try:  # a write-ahead-log file in a folder that cannot hold its -shm: read as it lies
                application, version, tables = _marks(path, "mode=ro&immutable=1")
                break
            except sqlite3.Error as again:
                return f"an sqlite file that cannot be read ({again}), with no verdict cache's mark in its header"
        except sqlite3.Error as error:
            return f"an sqlite file that cannot be read ({error}), with no verdict cache's mark in its header"
    if application == APPLICATION_ID or (application == 0 and not tables and version == 0) or (application == 0 and version == 1 and tables == OUR_TABLES):
        return None
    if application != 0:
        return f"the sqlite database of another program (application id {application:#x})"
    listed = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
    return f"an sqlite database with tables of its own ({listed})"


def _marks(path: Path, query: str) -> tuple[int, int, set[str]]:
    """The application id, the user version and the tables of the sqlite file at `path`, read with `query`."""
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?{query}", uri=True, timeout=BUSY_SECONDS)
    try:
        return int(connection.execute("PRAGMA application_id").fetchone()[0]), int(connection.execute("PRAGMA user_version").fetchone()[0]), _tables(connection)
    finally:
        connection.close()


def _tables(connection: sqlite3.Connection) -> set[str]:
    return {str(row[0]) for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def clear_store(path: Path) -> int:
    """Delete the cache file (and its log files), whatever state sqlite left it in; the bytes freed.
    A file that is no verdict cache (a data file or a model named by mistake, another program's
    database, a device) is refused, deleting nothing. A run that has the cache open keeps what it
    holds and writes into the deleted file; the next run starts afresh."""
    reason = not_a_cache(path)
    if reason is not None:
        raise ConfigError(f"{path} is not a verdict cache ({reason}): nothing was deleted; delete it yourself if that is what you mean")
    try:
        for part in _files(path)[1:]:
            if part.exists() and not part.is_file():
                raise ConfigError(f"cannot delete the verdict cache {path}: {part} is not a regular file; nothing was deleted")
        freed = 0
        for part in _files(path):
            try:
                size = part.stat().st_size
                os.unlink(part)
                freed += size
            except FileNotFoundError:
                continue
    except OSError as error:
        raise ConfigError(f"cannot delete the verdict cache {path}: {error.filename or path}: {error.strerror or error}") from None
    return freed
