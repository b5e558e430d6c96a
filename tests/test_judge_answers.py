"""What a judge or a judge server answers (localeval.judge.openai_server, a scripted judge): a bad
answer is an error for its sample, or a clear error for the run, never a silent verdict, a crash
or a hang; a judge that cannot be found or reached is named.

The server is a fake one (http.server on a free port) that answers as each test says."""

from __future__ import annotations

import http.server
import json
import math
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import result_rows, sigint_at_default

from localeval import evaluate
from localeval.errors import EXIT_INTERRUPTED, JudgeError, ModelError
from localeval.judge.openai_server import ServerJudge, option_probabilities
from localeval.metrics import create_metric
from localeval.testing import ScriptedJudge

RECALLED = {"id": "q", "user_input": "When?", "retrieved_contexts": ["The tower was completed in 1889."], "reference": "It was completed in 1889.", "reference_contexts": ["The tower was completed in 1889."]}


JUDGED_RECALL = create_metric("context_recall", {"verifier": False})


JUDGED_RELEVANCE = create_metric("context_relevance", {"verifier": False})


def test_a_judge_answering_nan_is_an_error_for_the_sample_not_a_verdict():
    result = evaluate([RECALLED], [JUDGED_RECALL, JUDGED_RELEVANCE], judge=ScriptedJudge(lambda messages: math.nan)).results[0]
    assert result["scores"] == {"context_recall": None, "context_relevance": None}
    assert "not numbers in [0, 1]" in result["errors"]["context_recall"]


def test_server_log_probabilities_are_read_as_they_are_never_as_a_silent_half():
    assert option_probabilities([("No", -0.01)], ("Yes", "No"))[1] > 0.98  # "Yes" absent: a confident No stays one
    assert option_probabilities([(" yes", -0.1), ("NO", -2.5)], ("Yes", "No"))[0] > 0.9  # case and leading space
    for listed in ([], [("Maybe", -0.1)], [("Yes", math.nan)], [("Yes", -math.inf), ("No", math.inf)]):
        with pytest.raises(JudgeError):
            option_probabilities(listed, ("Yes", "No"))


class _Script:
    """What the fake server answers: path -> (status line or code, body, per-byte delay)."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[object, bytes, float]] = {}


def _fake_server(script: _Script) -> tuple[str, http.server.ThreadingHTTPServer]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            status, body, delay = script.routes.get(self.path, (404, b"{}", 0.0))
            if status == "garbage":
                self.wfile.write(b"NOT HTTP AT ALL\r\n\r\n")
                return
            if status == "hang":
                time.sleep(3600)
            self.send_response(int(status))  # type: ignore[call-overload]
            if int(status) in (301, 302):  # type: ignore[call-overload]
                self.send_header("Location", "http://127.0.0.1:9/elsewhere")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for byte in body if delay else [body]:
                self.wfile.write(bytes([byte]) if delay else byte)  # type: ignore[arg-type]
                self.wfile.flush()
                time.sleep(delay)

        do_GET = do_POST = _answer

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1", server


MODELS = json.dumps({"data": [{"id": "m"}]}).encode()


@pytest.fixture
def fake_server(monkeypatch):
    from localeval.judge import openai_server

    monkeypatch.setattr(openai_server, "BACKOFF_SECONDS", 0.0)
    script = _Script()
    script.routes["/v1/models"] = (200, MODELS, 0.0)
    url, server = _fake_server(script)
    yield script, url
    server.shutdown()


@pytest.mark.parametrize(
    "route, answer, expected",
    [
        ("/v1/models", (200, b"[1, 2]", 0.0), "without a list of models"),
        ("/v1/models", (403, b"forbidden", 0.0), "refused to list its models"),
        ("/v1/models", (302, b"", 0.0), "refused to list its models"),
        ("/v1/models", ("garbage", b"", 0.0), "did not answer"),
        ("/v1/models", (200, b"<html>not json</html>", 0.0), "not JSON"),
    ],
)
def test_bad_answers_to_the_model_list_are_clear_errors(fake_server, route, answer, expected):
    script, url = fake_server
    script.routes[route] = answer
    with pytest.raises(ModelError, match=expected):
        ServerJudge(url, "m")


@pytest.mark.parametrize(
    "answer, expected",
    [
        (json.dumps([1, 2]).encode(), "not an object"),
        (json.dumps({"choices": [{"logprobs": {"content": [{"top_logprobs": [{"token": "Yes", "logprob": "NaN"}]}]}}]}).encode(), "not numbers"),
        (json.dumps({"choices": [{"logprobs": {"content": [{"top_logprobs": []}]}}]}).encode(), "none of"),
        (json.dumps({"choices": []}).encode(), "no token log-probabilities"),
        (json.dumps({"choices": [], "usage": {"prompt_tokens": -5}}).encode(), "usage"),
    ],
)
def test_bad_chat_answers_are_errors_for_the_sample(fake_server, answer, expected):
    script, url = fake_server
    script.routes["/v1/chat/completions"] = (200, answer, 0.0)
    judge = ServerJudge(url, "m")
    result = evaluate([RECALLED], [JUDGED_RECALL], judge=judge).results[0]
    assert result["scores"]["context_recall"] is None and expected in result["errors"]["context_recall"]


def test_a_trickling_server_is_timed_out_by_the_request_deadline(fake_server):
    script, url = fake_server
    script.routes["/v1/chat/completions"] = (200, b'{"choices": []}' * 4, 0.3)
    judge = ServerJudge(url, "m", timeout=1.0)
    started = time.monotonic()
    with pytest.raises(ModelError, match="within the request's time limit"):  # the run stops with a clear error, resumable
        evaluate([RECALLED], [JUDGED_RECALL], judge=judge)
    assert time.monotonic() - started < 60  # four tries of one second each, not 4 x 60 bytes x 0.3 s


def test_ctrl_c_abandons_requests_to_a_hanging_server(fake_server, write_jsonl, tmp_path):
    script, url = fake_server
    script.routes["/v1/chat/completions"] = ("hang", b"", 0.0)
    data = write_jsonl([{**RECALLED, "id": f"q{i}"} for i in range(8)])
    out = tmp_path / "out.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "localeval", "score", str(data), "-m", "context_recall", "--judge-url", url, "--model", "m", "-o", str(out), "--judge-concurrency", "4"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=sigint_at_default,
    )
    deadline = time.monotonic() + 120
    while not (out.exists() and out.read_text().count("\n") >= 1) and time.monotonic() < deadline:
        time.sleep(0.05)  # the header is written once the judge is loaded and scoring starts
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == EXIT_INTERRUPTED
    assert "interrupted" in process.stderr.read().decode()  # type: ignore[union-attr]
    assert result_rows(out) == []


def test_localeval_model_env_takes_a_backend_spec(monkeypatch, fake_server):
    from localeval.judge import load_judge

    _, url = fake_server
    monkeypatch.setenv("LOCALEVAL_MODEL", f"openai:{url}")
    judge = load_judge()
    assert judge.describe()["url"] == url.rstrip("/")


def test_a_missing_model_is_named(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        from localeval.judge import load_judge

        load_judge(str(Path(tmp_path) / "none.gguf"))


def test_a_server_serving_a_catalog_judge_gets_its_calibration_with_or_without_model(monkeypatch):
    import http.server
    import threading

    from localeval.judge import load_judge, openai_server
    from localeval.models.store import CATALOG

    monkeypatch.setattr(openai_server, "BACKOFF_SECONDS", 0.0)
    models = json.dumps({"data": [{"id": "qwen2.5-coder-1.5b"}]}).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            body, code = (models, 200) if self.path == "/v1/models" else (b"{}", 404)
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        named = load_judge("qwen2.5-coder-1.5b", judge_url=url)
        unnamed = load_judge(None, judge_url=url)
        assert unnamed.calibration == named.calibration == dict(CATALOG["qwen2.5-coder-1.5b"].calibration)
        assert unnamed.describe()["model"] == "qwen2.5-coder-1.5b"
    finally:
        server.shutdown()
