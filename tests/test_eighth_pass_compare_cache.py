"""Issue 77's eighth pass, the compare and cache items: each test is the short script that failed
before its fix.

compare: a lower-is-better plugin metric read its own way; files without ids paired by line only
when something confirms the lines are the same samples, the question check said "not checked"
when there is no question; a field map is part of what a score means. The verdict cache: a
judge server keyed on what it says about its weights (a real HTTP server on 127.0.0.1, restarted
on the same port with other weights); `--cache false` is no cache; only a verdict cache is used,
changed or deleted as one (never a user's database, a device or a FIFO); `calibrate -o` may not
name the cache. JUnit: a failed --max-mean gate is a <failure>.
"""

from __future__ import annotations

import http.server
import json
import os
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from conftest import invoke

from localeval.judge.cache import cache_path
from localeval.judge.verdict_store import VerdictStore, clear_store, not_a_cache, store_info

ROOT = Path(__file__).resolve().parents[1]


# -- the verdict cache's file ---------------------------------------------------------------


def a_users_database(path: Path, rows: int = 100) -> bytes:
    """A user's own sqlite database (an application's, not a cache): one table of `rows` rows."""
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT)")
        connection.executemany("INSERT INTO orders (item) VALUES (?)", [(f"item {i}",) for i in range(rows)])
    connection.close()
    return path.read_bytes()


def test_a_users_own_sqlite_database_is_never_used_changed_or_deleted_as_a_cache(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    app = tmp_path / "app.db"
    before = a_users_database(app)
    store = VerdictStore(app)  # --cache app.db
    store.put(b"k", "v")
    assert store.get(b"k") is None
    store.close()
    err = capsys.readouterr().err
    assert err.count("warning") == 1 and "an sqlite database with tables of its own (orders): not a verdict cache" in err and "cache clear" not in err
    assert app.read_bytes() == before and not Path(f"{app}-wal").exists()  # not converted: no WAL, no user_version, no table added
    shown = invoke(["cache", "info", "--cache", str(app)])
    assert shown.exit_code == 0 and "not a verdict cache" in shown.output and "cache clear" not in shown.output
    cleared = invoke(["cache", "clear", "--cache", str(app)])
    assert cleared.exit_code == 2 and "is not a verdict cache" in cleared.output and "nothing was deleted" in cleared.output
    with sqlite3.connect(app) as connection:
        assert connection.execute("SELECT count(*) FROM orders").fetchone()[0] == 100
    connection.close()
    other = tmp_path / "other.db"  # another program's database, marked with its own application id
    with sqlite3.connect(other) as connection:
        connection.execute("PRAGMA application_id = 1234")
    connection.close()
    assert "another program" in (not_a_cache(other) or "")


def test_a_new_or_empty_file_and_a_cache_made_before_the_mark_are_caches(tmp_path: Path) -> None:
    for path in (tmp_path / "new.sqlite", tmp_path / "empty.sqlite"):
        if path.name == "empty.sqlite":
            path.write_bytes(b"")
        store = VerdictStore(path)
        store.put(b"k", "v")
        assert store.get(b"k") == "v"
        store.close()
        assert not_a_cache(path) is None and store_info(path).entries == 1
    legacy = tmp_path / "legacy.sqlite"  # format 1 as the previous release made it: no application id
    store = VerdictStore(legacy)
    store.put(b"k", "v")
    store.close()
    with sqlite3.connect(legacy) as connection:
        connection.execute("PRAGMA application_id = 0")
    connection.close()
    store = VerdictStore(legacy)
    assert store.get(b"k") == "v"
    store.close()
    assert clear_store(legacy) > 0 and not legacy.exists()


def test_cache_clear_and_runs_refuse_devices_and_fifos_and_info_never_blocks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    device = tmp_path / "null"
    device.symlink_to(os.devnull)  # a character device, as LOCALEVAL_CACHE=/dev/null names one
    cleared = invoke(["cache", "clear"], env={"LOCALEVAL_CACHE": str(device)})
    assert cleared.exit_code == 2 and "not a regular file" in cleared.output and "nothing was deleted" in cleared.output
    assert device.is_symlink() and stat.S_ISCHR(os.stat(os.devnull).st_mode)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LOCALEVAL_CACHE": str(fifo)}
    shown = subprocess.run([sys.executable, "-m", "localeval", "cache", "info"], capture_output=True, text=True, env=env, timeout=120)  # it blocked for ever
    assert shown.returncode == 0 and "not a regular file" in shown.stderr
    cleared = invoke(["cache", "clear"], env={"LOCALEVAL_CACHE": str(fifo)})
    assert cleared.exit_code == 2 and stat.S_ISFIFO(os.stat(fifo).st_mode)
    store = VerdictStore(fifo)  # a run: without the cache, the FIFO never opened
    store.put(b"k", "v")
    store.close()
    assert "not a regular file" in capsys.readouterr().err and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_cache_false_is_no_cache_as_the_help_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cache_path("false") is None and cache_path("OFF") is None and cache_path("./false") == Path("false")
    monkeypatch.chdir(tmp_path)
    shown = invoke(["cache", "info", "--cache", "false"])
    assert shown.exit_code == 2 and "--cache false turns the verdict cache off" in shown.output
    with judge_server(WEIGHTS_A) as url:
        data = tmp_path / "data.jsonl"
        data.write_text(json.dumps(SAMPLE) + "\n", encoding="utf-8")
        scored = invoke(["score", str(data), "-m", "context_recall", "--no-verifier", "--judge-url", url, "--cache", "false", "-o", str(tmp_path / "out.jsonl"), "-q"])
        assert scored.exit_code in (0, 1), scored.output
    assert not (tmp_path / "false").exists()


def test_calibrate_o_may_not_name_the_verdict_cache(tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite"
    store = VerdictStore(cache)
    for n in range(50):
        store.put(bytes([n]), "v")
    store.close()
    before = cache.read_bytes()
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"retrieved_contexts": ["c"], "statement": "s", "label": 1}) + "\n", encoding="utf-8")
    refused = invoke(["calibrate", str(labels), "--cache", str(cache), "-o", str(cache)])
    assert refused.exit_code == 2 and "is the same file as the verdict cache" in refused.output
    assert cache.read_bytes() == before


# -- a judge server swapped behind its name ----------------------------------------------------

SAMPLE = {"user_input": "When was the tower built?", "retrieved_contexts": ["The tower was completed in 1889."], "reference": "The tower was completed in 1889."}
# What two llama-server builds say in /v1/models about two weights served under one name.
WEIGHTS_A = {"n_params": 1_500_000_000, "size": 1_100_000_000, "n_vocab": 151_936}
WEIGHTS_B = {"n_params": 135_000_000, "size": 100_000_000, "n_vocab": 49_152}


class judge_server:
    """An OpenAI-compatible judge server on 127.0.0.1 (a real HTTP server, in a thread) that
    answers every verdict Yes (the weights `WEIGHTS_A`) or No (any other), and lists its model
    as llama-server does: its name, the time of the request, and `meta` about its weights (none
    when `weights` is None, as llama-cpp-python's server)."""

    def __init__(self, weights: dict[str, int] | None, port: int = 0) -> None:
        self.weights = weights
        self.port = port
        self.chats = 0

    def __enter__(self) -> str:
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, code: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                entry: dict[str, Any] = {"id": "judge", "object": "model", "owned_by": "llamacpp", "created": int(time.time() * 1000)}
                if owner.weights is not None:
                    entry["meta"] = owner.weights
                self._send(200, {"object": "list", "data": [entry]}) if self.path == "/v1/models" else self._send(404, {})

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path != "/v1/chat/completions":
                    self._send(404, {})
                    return
                owner.chats += 1
                yes = owner.weights == WEIGHTS_A
                top = [{"token": "Yes", "logprob": -0.01 if yes else -6.0}, {"token": "No", "logprob": -6.0 if yes else -0.01}]
                self._send(200, {
                    "choices": [{"message": {"content": "Yes" if yes else "No"}, "finish_reason": "length", "logprobs": {"content": [{"token": "Yes", "logprob": -0.01, "top_logprobs": top}]}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 1}, "system_fingerprint": f"b-{id(owner.weights)}",
                })

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.port}/v1"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _scored(tmp_path: Path, url: str, name: str, *args: str) -> tuple[float, dict[str, Any]]:
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(SAMPLE) + "\n", encoding="utf-8")
    out = tmp_path / f"{name}.jsonl"
    result = invoke(["score", str(data), "-m", "context_recall", "--no-verifier", "--judge-url", url, "-o", str(out), "-q", "--no-timing", *args])
    assert result.exit_code in (0, 1), result.output
    lines = out.read_text(encoding="utf-8").splitlines()
    return json.loads(lines[1])["scores"]["context_recall"], json.loads(lines[0])["run"]["judge"]


def test_a_judge_server_restarted_with_other_weights_is_not_answered_from_the_cache(tmp_path: Path) -> None:
    cache = str(tmp_path / "c.sqlite")
    with judge_server(WEIGHTS_A) as url:
        first, header_a = _scored(tmp_path, url, "a", "--cache", cache)
        port = int(url.rsplit(":", 1)[1].split("/")[0])
    with judge_server(WEIGHTS_B, port) as again:  # the same URL and served name, other weights
        assert again == url
        swapped, header_b = _scored(tmp_path, url, "b", "--cache", cache)
        uncached, _ = _scored(tmp_path, url, "c", "--no-cache")
    assert first == 1.0 and swapped == uncached == 0.0
    assert header_a["weights"] == {"meta": WEIGHTS_A} and header_b["weights"] == {"meta": WEIGHTS_B}  # the headers show it (compare refuses a gate across it)


def test_a_server_that_says_nothing_about_its_weights_says_so_in_the_header(tmp_path: Path) -> None:
    with judge_server(None) as url:
        _, header = _scored(tmp_path, url, "a", "--cache", str(tmp_path / "c.sqlite"))
        _, again = _scored(tmp_path, url, "b", "--cache", str(tmp_path / "c.sqlite"))
    assert header == again and "cached verdicts assume it still serves the weights" in header["weights"]


# -- JUnit: a failed mean gate is a failure ----------------------------------------------------


def test_a_failed_max_mean_gate_is_a_junit_failure_and_a_met_one_a_passed_case(tmp_path: Path) -> None:
    from conftest import CAPITALS

    rows = [{"id": f"q{n}", "user_input": "What is the capital?", "reference": reference, "retrieved_contexts": [f"{reference} {other}"], "response": other if n < 2 else reference}
            for n, (reference, other) in enumerate(CAPITALS)]  # noise_sensitivity 1 on two of six: mean 0.333
    data = tmp_path / "capitals.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    for bound, code, failures in (("0.2", 1, 1), ("0.5", 0, 0)):
        junit = tmp_path / f"junit-{bound}.xml"
        result = invoke(["score", str(data), "-m", "noise_sensitivity", "--verifier", "--max-mean", f"noise_sensitivity={bound}", "--junit-xml", str(junit), "-q", "--no-timing"])
        assert result.exit_code == code, result.output
        suite = ElementTree.parse(junit).getroot().find("testsuite")
        assert suite is not None and suite.get("failures") == str(failures) and suite.get("tests") == "7"
        gate = [case for case in suite.iter("testcase") if case.get("name") == "max_mean gate"]
        failure = gate[0].find("failure") if len(gate) == 1 else None
        assert len(gate) == 1 and (failure is not None) == bool(failures)
        assert failure is None or "max-mean 0.200 not met, read on the mean 0.333" in (failure.get("message") or "")


# -- compare ---------------------------------------------------------------------------------

ID_RECALL = "id_context_recall"

# A plugin metric whose good scores are the low ones: the share of retrieved ids that are not gold.
LOWER_PLUGIN = '''
from localeval.metrics.base import Metric, Score
from pydantic import BaseModel, ConfigDict


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class WrongIds(Metric[Params]):
    name = "wrong_ids"
    description = "The share of retrieved ids that are not gold: lower is better."
    required_fields = ("retrieved_context_ids", "reference_context_ids")
    higher_is_better = False
    Params = Params

    def score_batch(self, samples, judge):
        return [Score(value=sum(i not in s.reference_context_ids for i in s.retrieved_context_ids) / len(s.retrieved_context_ids), details={}) for s in samples]
'''


def test_compare_reads_a_lower_is_better_plugin_metric_its_own_way(tmp_path: Path) -> None:
    """0 -> 0.5 on 12 of 12 samples is worse, listed under worsened most, and fails --max-drop;
    `report --compare-to` says the same. It was "better", "improved most", and passed."""
    from conftest import install_plugin, run_with_plugins

    site = tmp_path / "site"
    install_plugin(site, "wrong_ids_metric", LOWER_PLUGIN, "wrong_ids = wrong_ids_metric:WrongIds")
    runs = []
    for name, retrieved in (("base", lambda i: [f"g{i}"]), ("candidate", lambda i: [f"g{i}", "noise"])):
        data = tmp_path / f"{name}.jsonl"
        data.write_text("".join(json.dumps({"id": f"q{i}", "retrieved_context_ids": retrieved(i), "reference_context_ids": [f"g{i}"]}) + "\n" for i in range(12)), encoding="utf-8")
        out = tmp_path / f"{name}.results.jsonl"
        done = run_with_plugins(site, "score", str(data), "-m", "wrong_ids", "-o", str(out), "-q", "--no-timing", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        runs.append(str(out))
    compared = run_with_plugins(site, "compare", *runs, "--max-drop", "wrong_ids=0.05", "--json", str(tmp_path / "c.json"), cwd=tmp_path)
    assert compared.returncode == 1, compared.stdout + compared.stderr
    figures = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))["metrics"]["wrong_ids"]
    assert figures["lower_is_better"] is True and figures["verdict"] == "worse" and len(figures["worsened"]) == 5 and figures["improved"] == []
    page = run_with_plugins(site, "report", runs[1], "--compare-to", runs[0], "-o", str(tmp_path / "page.html"), cwd=tmp_path)
    assert page.returncode == 0, page.stderr
    assert "worse: +0.500" in (tmp_path / "page.html").read_text(encoding="utf-8")


def _retrieval_rows(count: int, lost: set[int]) -> list[dict[str, Any]]:
    """Retrieval-only samples with no question and no id: two gold contexts each, one or both retrieved."""
    return [{"retrieved_context_ids": [f"g{i}a"] + ([] if i in lost else [f"g{i}b"]), "reference_context_ids": [f"g{i}a", f"g{i}b"]} for i in range(count)]


def _score_rows(tmp_path: Path, name: str, rows: list[dict[str, Any]], *args: str) -> Path:
    data = tmp_path / f"{name}.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / f"{name}.results.jsonl"
    result = invoke(["score", str(data), "-m", ID_RECALL, "-o", str(out), "-q", "--no-timing", *args])
    assert result.exit_code == 0, result.output
    return out


def test_samples_without_ids_in_another_order_are_not_paired_by_line_behind_a_check_that_did_not_happen(tmp_path: Path) -> None:
    from localeval import compare

    base = _score_rows(tmp_path, "base", _retrieval_rows(40, set()))
    candidate = _score_rows(tmp_path, "candidate", list(reversed(_retrieval_rows(40, set(range(0, 40, 5))))))  # lost 8 of 40, written in reverse
    found = compare(base, candidate)
    assert found.paired_by == "line" and found.questions.startswith("question text not checked: no pair has a question")
    assert "0 of 40 pairs confirmed" in found.questions and "40 lines hold another sample in each file" in found.questions
    assert len(found.unpaired) == 40 and found.metrics[ID_RECALL].difference.count == 0
    gated = invoke(["compare", str(base), str(candidate), "--max-drop", f"{ID_RECALL}=0.02"])
    assert gated.exit_code != 0, gated.output  # it passed
    same_order = _score_rows(tmp_path, "same_order", _retrieval_rows(40, set(range(0, 40, 5))))
    confirmed = compare(base, same_order, max_drop={ID_RECALL: 0.02}, max_drop_on="pass-if-confidently-above")
    assert "40 of 40 pairs confirmed" in confirmed.questions and confirmed.metrics[ID_RECALL].difference.count == 40
    assert confirmed.metrics[ID_RECALL].verdict.value == "worse" and confirmed.metrics[ID_RECALL].difference.mean == -0.1
    assert confirmed.gate_refusal is None and not confirmed.gates_hold  # paired rightly, it is worse and the gate fails


def test_a_gate_over_a_pairing_by_line_that_nothing_confirms_is_refused(tmp_path: Path) -> None:
    base = _score_rows(tmp_path, "base", _retrieval_rows(12, set()))
    candidate = _score_rows(tmp_path, "candidate", _retrieval_rows(12, {3}))
    for path in (tmp_path / "base.jsonl", tmp_path / "candidate.jsonl"):
        path.unlink()  # the inputs are gone: nothing can confirm that line n is one sample in both
    refused = invoke(["compare", str(base), str(candidate), "--max-drop", f"{ID_RECALL}=0.02"])
    assert refused.exit_code == 2 and "nothing confirms that a line holds the same sample in both files on 12 of 12 pairs" in refused.output
    assert invoke(["compare", str(base), str(candidate)]).exit_code == 0  # without a gate, the comparison is shown, saying so


def test_two_columns_of_one_input_are_two_setups_not_one_pipeline(tmp_path: Path) -> None:
    from localeval import compare

    rows = [{"id": f"q{i}", "ret_a": ["g"] if i else ["x"], "ret_b": ["x"] if i else ["g"], "reference_context_ids": ["g"]} for i in range(2)]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    results = []
    for column in ("ret_a", "ret_b"):
        out = tmp_path / f"{column}.results.jsonl"
        done = invoke(["score", str(data), "-m", ID_RECALL, "--map", f"{column}=retrieved_context_ids", "-o", str(out), "-q", "--no-timing"])
        assert done.exit_code == 0, done.output
        results.append(out)
    found = compare(*results, max_drop={ID_RECALL: 0.0}, max_drop_on="pass-if-confidently-above", allow_setup_change=True)
    metric = found.metrics[ID_RECALL]
    assert not found.one_pipeline and metric.difference.ci95 != (0.0, 0.0) and not found.gates_hold
    assert any(d.key.startswith("map") and d.changes_scores for d in found.setup)


# -- the verifier's answers in the verdict cache (issue 76) -------------------------------------


def _capitals(tmp_path: Path) -> Path:
    from conftest import CAPITALS

    data = tmp_path / "capitals.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{n}", "user_input": "What is the capital?", "reference": reference, "retrieved_contexts": [f"{reference} {other}"]}) + "\n"
                            for n, (reference, other) in enumerate(CAPITALS)), encoding="utf-8")
    return data


def test_the_verifiers_answers_are_kept_in_the_verdict_cache_and_a_rerun_reads_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from localeval.verifier import Verifier

    data, cache = _capitals(tmp_path), tmp_path / "c.sqlite"
    command = ["score", str(data), "-m", "context_recall", "-m", "context_relevance", "--verifier", "-q", "--no-timing", "--cache", str(cache)]
    first = invoke([*command, "-o", str(tmp_path / "first.jsonl")])
    assert first.exit_code == 0, first.output
    assert store_info(cache).entries > 0
    asked: list[str] = []
    monkeypatch.setattr(Verifier, "logits", lambda self, task, pairs, encode=None: asked.append(task) or [0.0] * len(pairs))
    again = invoke([*command, "-o", str(tmp_path / "again.jsonl")])
    assert again.exit_code == 0, again.output
    assert asked == [] and (tmp_path / "again.jsonl").read_bytes() == (tmp_path / "first.jsonl").read_bytes()  # every answer read back, bit for bit
    uncached = invoke([*command[:-2], "--no-cache", "-o", str(tmp_path / "uncached.jsonl")])
    assert uncached.exit_code == 0 and asked  # --no-cache asks the verifier (here the stand-in) again


def test_another_verifier_file_is_another_key(tmp_path: Path) -> None:
    """A second weights file (the shipped one with the attribution head's bias moved by one
    float16 step): its calls are misses, answered by its own weights, never by the first file's."""
    import struct

    from localeval.graders.verifier_cache import cached_logits, verifier_answers_kept
    from localeval.verifier import Verifier, load_verifier, shipped_path

    verifier = load_verifier()
    data = bytearray(shipped_path().read_bytes())
    (header,) = struct.unpack("<Q", data[:8])
    head_bias = 8 + header + json.loads(data[8 : 8 + header])["head.out.bias"]["data_offsets"][0]
    data[head_bias + 2] ^= 1  # the attribution column's bias (float16, little-endian): its lowest bit
    other_file = tmp_path / "verifier.safetensors"
    other_file.write_bytes(data)
    other = Verifier(str(other_file), other_file.read_bytes())
    assert other.sha256 != verifier.sha256
    pairs = [("What is the capital?", "Paris is the capital of France.", "Paris is the capital of France.")]
    its_own = other.logits("attribution", pairs)
    with verifier_answers_kept(tmp_path / "c.sqlite") as kept:
        first = cached_logits(verifier, "attribution", pairs)
        assert its_own != first  # the byte moved the logit: a reused answer would show
        assert cached_logits(verifier, "attribution", pairs) == first and kept is not None and (kept.hits, kept.misses) == (1, 1)
        assert cached_logits(other, "attribution", pairs) == its_own and (kept.hits, kept.misses) == (1, 2)
        assert cached_logits(other, "attribution", pairs) == its_own and cached_logits(verifier, "attribution", pairs) == first
        assert (kept.hits, kept.misses) == (3, 2)  # each file reads back its own answer


def test_a_runs_judge_and_verifier_stores_say_what_is_wrong_with_the_file_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    app = tmp_path / "app.db"
    a_users_database(app)
    judge, verifier = VerdictStore(app), VerdictStore(app)  # one run: the judge's answers and the verifier's, one file
    judge.close()
    verifier.close()
    assert capsys.readouterr().err.count("warning") == 1
    VerdictStore(app).close()  # the next run says it again
    assert capsys.readouterr().err.count("warning") == 1
