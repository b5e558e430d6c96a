"""The `openai` judge backend against a real llama-cpp-python server on 127.0.0.1 (the small model).

Compared with the in-process judge on the same samples: the same prompts and
verdict rule, probabilities within a small tolerance (a server evaluates prompts in
its own batches, so logits differ slightly; the differences are printed). Also: a
server that is down is a clear error, proxies in the environment are ignored,
schema-constrained answers parse, and several requests are kept in flight.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import pytest
from click.testing import CliRunner
from conftest import SMALL_MODEL, result_rows

from localeval import evaluate, load_judge
from localeval.cli import cli
from localeval.errors import ModelError
from localeval.judge.openai_server import WEIGHTS_UNSTATED
from localeval.metrics import create_metric
from localeval.testing import ScriptedJudge

pytest.importorskip("uvicorn", reason="the server extra (llama-cpp-python[server]) is not installed")

SAMPLES = [
    {"user_input": "When was the tower completed?", "retrieved_contexts": ["The tower was completed in 1889. It is 330 metres tall.", "Paris has museums."], "reference": "The tower was completed in 1889. It is made of gold."},
    {"user_input": "Which organ makes insulin?", "retrieved_contexts": ["The liver stores glycogen. Glucagon raises blood sugar."], "reference": "The pancreas makes insulin."},
    {"user_input": "Who wrote Hamlet?", "retrieved_contexts": ["Hamlet is a tragedy written by William Shakespeare around 1600."], "reference": "Shakespeare wrote Hamlet around 1600."},
]
TOLERANCE = 0.1  # on a probability: batching on a server moves logits a little, never a lot

JUDGED = {"verifier": False}  # these tests are about the judge behind a server: the metrics decide with it


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(model: str, port: int) -> subprocess.Popen:
    """`localeval serve` as a user starts it (the README's server command); what it says
    goes to a file (a pipe nobody reads could fill and stop it)."""
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(
        [sys.executable, "-m", "localeval", "serve", model, "--host", "127.0.0.1", "--port", str(port), "--n-ctx", "2048", "--threads", "1"],
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    process.log = log  # type: ignore[attr-defined]
    return process


def wait_until_serving(process: subprocess.Popen, url: str) -> None:
    """Until the server answers /models, or its process has ended (then fail with what it said).
    The deadline is only a safety net for a server that neither starts nor exits."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if process.poll() is not None:
            process.log.seek(0)  # type: ignore[attr-defined]
            said = process.log.read().decode(errors="replace")[-2000:]  # type: ignore[attr-defined]
            pytest.fail(f"the judge server exited with {process.returncode}: {said}")
        try:
            urllib.request.urlopen(f"{url}/models", timeout=5).read()
            return
        except OSError:
            time.sleep(0.2)
    process.kill()
    pytest.fail("the judge server neither started nor exited")


@pytest.fixture(scope="module")
def server(small_model_path):
    port = free_port()
    process = start_server(SMALL_MODEL, port)
    url = f"http://127.0.0.1:{port}/v1"
    wait_until_serving(process, url)
    yield url
    process.terminate()
    process.wait(timeout=60)


def test_server_judge_agrees_with_the_in_process_judge(server, small_model_path):
    metrics = [create_metric("context_recall", JUDGED), create_metric("context_relevance", JUDGED)]
    remote = evaluate(SAMPLES, metrics, judge=load_judge(SMALL_MODEL, judge_url=server)).results
    with load_judge(str(small_model_path), n_ctx=2048, threads=1) as local_judge:
        local = evaluate(SAMPLES, metrics, judge=local_judge).results
    differences = []
    for a, b in zip(remote, local):
        assert a["errors"] == b["errors"] == {}
        for x, y in zip(a["details"]["context_recall"]["statements"], b["details"]["context_recall"]["statements"]):
            assert x["statement"] == y["statement"] and x["features"].keys() == y["features"].keys()
            differences.append(abs(x["probability"] - y["probability"]))
        differences += [abs(x - y) for x, y in zip(a["details"]["context_relevance"]["probabilities"], b["details"]["context_relevance"]["probabilities"])]
    print(f"server vs in-process: {len(differences)} probabilities, largest difference {max(differences):.4f}, mean {sum(differences) / len(differences):.4f}")
    assert max(differences) < TOLERANCE


def test_claims_are_decoded_under_the_servers_json_schema(server):
    metric = create_metric("context_recall", {"statements": "claims"})
    result = evaluate(SAMPLES[:1], [metric], judge=load_judge(SMALL_MODEL, judge_url=server)).results[0]
    assert result["errors"] == {}
    assert 1 <= len(result["details"]["context_recall"]["statements"]) <= 12


def test_the_command_line_scores_through_the_server(server, write_jsonl, tmp_path):
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(cli, ["score", str(write_jsonl(SAMPLES)), "-m", "context_recall", "--option", "context_recall.verifier=false", "--judge-url", server, "--model", SMALL_MODEL, "-o", str(out), "--no-timing"])
    assert result.exit_code == 0, result.output
    rows = result_rows(out)
    assert len(rows) == 3 and all(r["errors"] == {} for r in rows)
    header = json.loads(out.read_text().splitlines()[0])
    assert header["run"]["judge"]["backend"] == "openai" and header["run"]["judge"]["url"] == server
    # llama-cpp-python's server names its model only: the header says the cache assumes it unchanged (issue 77)
    assert header["run"]["judge"]["weights"] == WEIGHTS_UNSTATED


def test_proxies_in_the_environment_are_ignored(server, monkeypatch):
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    judge = load_judge(SMALL_MODEL, judge_url=server)
    assert evaluate(SAMPLES[:1], [create_metric("context_recall", JUDGED)], judge=judge).results[0]["errors"] == {}


def test_a_server_that_is_down_is_a_clear_error(monkeypatch, write_jsonl):
    from localeval.judge import openai_server

    monkeypatch.setattr(openai_server, "BACKOFF_SECONDS", 0.0)
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ModelError, match=f"the judge server at {url} did not answer .* is it running"):
        load_judge(SMALL_MODEL, judge_url=url)
    result = CliRunner().invoke(cli, ["score", str(write_jsonl(SAMPLES[:1])), "-m", "context_recall", "--option", "context_recall.verifier=false", "--judge-url", url, "--model", SMALL_MODEL])
    assert result.exit_code == 2 and "is it running" in result.stderr and "Traceback" not in result.output


def test_a_url_that_is_not_http_is_refused():
    from localeval.errors import ConfigError

    with pytest.raises(ConfigError, match="must be an http"):
        load_judge(SMALL_MODEL, judge_url="file:///etc/passwd")


def test_several_requests_are_kept_in_flight_for_a_concurrent_judge():
    """Control flow only: the runner keeps `concurrency` samples in flight, in input order."""
    lock = threading.Lock()
    active = [0, 0]  # now, most at once

    def slow_verdict(messages):
        with lock:
            active[0] += 1
            active[1] = max(active[1], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return 0.9

    judge = ScriptedJudge(slow_verdict)
    judge.concurrency = 4  # type: ignore[attr-defined]
    samples = [{**SAMPLES[2], "id": f"s{i}"} for i in range(8)]
    results = evaluate(samples, [create_metric("context_recall", JUDGED)], judge=judge).results
    assert [r["id"] for r in results] == [f"s{i}" for i in range(8)]
    assert active[1] > 1


def test_the_server_loads_with_extra_buffer_types_off_on_an_amx_cpu(monkeypatch, tmp_path):
    """What `localeval serve` and the in-process judge do on a CPU with AMX, shown on any
    CPU: every model loaded inside safe_loading gets use_extra_bufts off, and the
    defaults come back afterwards."""
    import llama_cpp

    from localeval.judge import llama_runtime

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("flags\t\t: fpu sse avx512f amx_bf16 amx_tile amx_int8\n")
    monkeypatch.setattr(llama_runtime, "CPUINFO", cpuinfo)
    with llama_runtime.safe_loading(llama_cpp) as extra_buffer_types:
        assert extra_buffer_types is False
        assert llama_cpp.llama_cpp.llama_model_default_params().use_extra_bufts is False
    assert llama_cpp.llama_cpp.llama_model_default_params().use_extra_bufts is True


def test_serve_without_the_model_is_a_clear_error(tmp_path):
    result = subprocess.run([sys.executable, "-m", "localeval", "serve", str(tmp_path / "missing.gguf")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "model file not found" in result.stderr and "Traceback" not in result.stderr
