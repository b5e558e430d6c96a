"""Shared fixtures and helpers: JSONL files on tmp_path, the command line run in process, samples
with known id_context_recall scores and attribution labels for them (gates, PPI and labels tests),
and the real small GGUF judge (SmolLM2-135M), pulled once and cached between runs. Tests that use
the real judge are marked `judge` automatically (pytest -m "not judge" runs the rest in seconds)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

SMALL_MODEL = "smollm2-135m"


@pytest.fixture(scope="session", autouse=True)
def session_temporary_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterable[Path]:
    """The temporary folder of the session, this process's and its children's ($TMPDIR): what
    localeval leaves there on purpose (a crash report of each internal error a test provokes) goes
    under pytest's own folder, which pytest prunes, not into the system's, once per test run."""
    import tempfile

    folder = tmp_path_factory.mktemp("tmp")
    saved = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = None  # read $TMPDIR again
    yield folder
    if saved is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = saved
    tempfile.tempdir = None


@pytest.fixture
def write_jsonl(tmp_path: Path) -> Callable[..., Path]:
    """Write rows (dicts are JSON-encoded, str/bytes written verbatim) as lines of a file."""

    def write(rows: Iterable[Any], name: str = "samples.jsonl") -> Path:
        path = tmp_path / name
        with open(path, "wb") as handle:
            for row in rows:
                if isinstance(row, bytes):
                    handle.write(row + b"\n")
                elif isinstance(row, str):
                    handle.write(row.encode("utf-8") + b"\n")
                else:
                    handle.write(json.dumps(row).encode("utf-8") + b"\n")
        return path

    return write


def result_rows(path: Path) -> list[dict[str, Any]]:
    """The result rows of a results file, without its run header line."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [row for row in rows if row.get("format") != "localeval-results"]


def sigint_at_default() -> None:
    """A child's preexec_fn: SIGINT at its default, so Ctrl-C tests pass when the suite itself
    runs with SIGINT ignored (a shell's background job, `nohup`), which a child would inherit
    (Python then never raises KeyboardInterrupt, and the run ends with exit 0)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def invoke(args: list[str], **kwargs: Any) -> Any:
    """Run the localeval command line in process (click's CliRunner) and return its Result."""
    from click.testing import CliRunner

    from localeval.cli import cli

    return CliRunner().invoke(cli, args, **kwargs)


def run_score(*args: Any) -> Any:
    """`localeval score ARGS...` in process; paths and numbers may be given as they are."""
    return invoke(["score", *[str(a) for a in args]])


# id_context_recall of one retrieved id "a" against these references
ID_RECALL_REFERENCES = {1.0: ["a"], 0.5: ["a", "b"], 0.25: ["a", "b", "c", "d"], 0.0: ["b"]}
FIVE = [1.0, 1.0, 0.5, 0.5, 0.25]  # five id_context_recall scores: mean 0.650
# Six capitals: a reference stating the capital, and a second fact about another city that the one
# retrieved context states beside it (a relevant context: it supports the reference).
CAPITALS = [
    ("Paris is the capital of France.", "Lyon is famous for its food."),
    ("Berlin is the capital of Germany.", "Munich hosts the Oktoberfest."),
    ("Rome is the capital of Italy.", "Milan is a fashion centre."),
    ("Madrid is the capital of Spain.", "Barcelona has the Sagrada Familia."),
    ("Lisbon is the capital of Portugal.", "Porto is known for port wine."),
    ("Vienna is the capital of Austria.", "Salzburg is the birthplace of Mozart."),
]


def id_recall_samples(tmp_path: Path, scores: list[float], ids: list[Any] | None = None, name: str = "samples.jsonl") -> Path:
    """Samples whose id_context_recall is each of `scores`; ids s0, s1... unless given (None: no id)."""
    lines = []
    for index, score in enumerate(scores):
        sample_id = f"s{index}" if ids is None else ids[index]
        sample = {} if sample_id is None else {"id": sample_id}
        sample.update({"retrieved_context_ids": ["a"], "reference_context_ids": ID_RECALL_REFERENCES[score]})
        lines.append(json.dumps(sample))
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def statement_labels(tmp_path: Path, labels: list[tuple[Any, int]], name: str = "labels.jsonl", contexts: Iterable[str] = ("c",)) -> Path:
    """Attribution label rows: (sample id, 0/1) -> one statement each (context_recall's human score),
    each showing `contexts`: the retrieved contexts of the sample it labels."""
    path = tmp_path / name
    path.write_text("".join(json.dumps({"id": i, "retrieved_contexts": list(contexts), "statement": f"s{n}", "label": y}) + "\n" for n, (i, y) in enumerate(labels)))
    return path


@pytest.fixture(autouse=True)
def no_verdict_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests run without the verdict cache (they test the judge, not yesterday's answers, and
    must not fill the user's cache); tests/test_verdict_cache.py names a file of its own."""
    monkeypatch.setenv("LOCALEVAL_CACHE", "off")


@pytest.fixture(scope="session")
def small_model_path() -> Path:
    """SmolLM2-135M through the real `localeval models pull` path, kept in the user's model store."""
    from localeval.models.store import pull

    return pull(SMALL_MODEL)


@pytest.fixture(scope="session")
def small_judge(small_model_path: Path):
    """One real llama.cpp judge for the whole test session (loading it once keeps the suite fast)."""
    from localeval.judge.llama import LlamaJudge

    with LlamaJudge(small_model_path, n_ctx=2048, n_threads=min(2, os.cpu_count() or 1), seed=0, catalog_name=SMALL_MODEL) as judge:
        yield judge


REAL_MODEL_FIXTURES = {"small_judge", "small_model_path"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that loads a real GGUF model `judge`, wherever it lives."""
    for item in items:
        if REAL_MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.judge)


@pytest.fixture(scope="session")
def embedding_model() -> Path:
    """all-MiniLM-L6-v2 (answer_relevancy's embedding model) through the real `localeval models
    pull` path, kept in the user's model store."""
    from localeval.models.embedding import MODEL_NAME
    from localeval.models.store import pull

    return pull(MODEL_NAME)


PLUGIN_ROOT = Path(__file__).resolve().parents[1]


def install_plugin(site: Path, module: str, source: str, entry: str, version: str = "0.1") -> None:
    """A metric plugin installed for real: its module and a .dist-info declaring the entry point,
    as pip lays them out, in `site` (put on a subprocess's path by `plugin_env`)."""
    site.mkdir(exist_ok=True)
    (site / f"{module}.py").write_text(source, encoding="utf-8")
    info = site / f"{module}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: {version}\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[localeval.metrics]\n{entry}\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")


def plugin_env(site: Path) -> dict[str, str]:
    """The environment of a subprocess that sees the plugins installed in `site` and this checkout."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(PLUGIN_ROOT)])}


def run_with_plugins(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m localeval ARGS` with the plugins installed in `site`."""
    return subprocess.run([sys.executable, "-m", "localeval", *args], capture_output=True, text=True, env=plugin_env(site), cwd=cwd, timeout=300)
