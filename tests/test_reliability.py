"""Interruption, determinism, and no network: each promise in the README's Guarantees,
proven by a test that fails without it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest
from click.testing import CliRunner
from conftest import sigint_at_default

from localeval import evaluate
from localeval.cli import cli

NONLLM = ["-m", "nonllm_context_recall", "-m", "id_context_recall"]

# Runs the real CLI in a child process that SIGKILLs itself while writing result
# number KILL_AT: after MODE="half" of its bytes are on disk, or just before it ("before").
KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from localeval.run import pipeline
    from localeval.cli import main
    kill_at, mode = int(os.environ["KILL_AT"]), os.environ["MODE"]
    original = pipeline._Sink.write
    count = 0
    def write(self, row):
        global count
        count += 1
        if count == kill_at:
            if mode == "half":
                line = row.to_line().encode()
                self.results.write(line[: len(line) // 2])
                self.results.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        return original(self, row)
    pipeline._Sink.write = write
    sys.argv = ["localeval"] + sys.argv[1:]
    main()
    """
)


def samples(n):
    return [
        {
            "id": f"s{i}",
            "retrieved_contexts": [f"context number {i} about topic {i % 3}", "shared text"],
            "reference_contexts": [f"context number {i} about topic {i % 3}!", "something else"],
            "retrieved_context_ids": [i, i + 1],
            "reference_context_ids": [i, 99],
        }
        for i in range(n)
    ]


@pytest.mark.parametrize("kill_at, mode", [(1, "before"), (4, "half"), (7, "before"), (10, "half")])
def test_sigkill_then_resume_equals_an_uninterrupted_run(tmp_path, write_jsonl, kill_at, mode):
    data = write_jsonl(samples(10))
    expected = tmp_path / "expected.jsonl"
    CliRunner().invoke(cli, ["score", str(data), *NONLLM, "-o", str(expected), "-q"])

    out = tmp_path / "out.jsonl"
    env = {**os.environ, "KILL_AT": str(kill_at), "MODE": mode}
    killed = subprocess.run([sys.executable, "-c", KILLER, "score", str(data), *NONLLM, "-o", str(out), "-q"], env=env, capture_output=True)
    assert killed.returncode == -signal.SIGKILL
    written = out.read_bytes()
    assert written.count(b"\n") == kill_at  # the run header, then kill_at - 1 results
    torn = mode == "half"
    assert (written != b"" and not written.endswith(b"\n")) == torn

    resumed = CliRunner().invoke(cli, ["score", str(data), *NONLLM, "-o", str(out), "-q", "--resume"])
    assert resumed.exit_code == 0, resumed.output
    assert out.read_text() == expected.read_text()
    lines = [json.loads(line)["line"] for line in out.read_text().splitlines()[1:]]
    assert lines == list(range(1, 11))  # every sample exactly once, in order


def test_ctrl_c_stops_cleanly_with_a_resumable_file(tmp_path, write_jsonl, small_model_path):
    # Enough samples that a slow, busy machine cannot finish them all between seeing the third
    # row and sending Ctrl-C (with 12, a loaded machine once saw the run end first, exit 0).
    count = 120
    rows = [{"user_input": f"What is fact {i}?", "retrieved_contexts": [f"Fact {i} is that the sky is blue. It rains often."], "reference": f"Fact {i} is blue."} for i in range(count)]
    data = write_jsonl(rows)
    out = tmp_path / "out.jsonl"
    args = [sys.executable, "-m", "localeval", "score", str(data), "--model", str(small_model_path), "-m", "context_recall", "--no-verifier", "-o", str(out), "--no-timing", "-q"]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=sigint_at_default)
    # A ceiling, not a pace: a loaded 2-core machine has taken two minutes to write three rows.
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline and process.poll() is None and (not out.exists() or out.read_text().count("\n") < 3):
        time.sleep(0.1)
    assert process.poll() is None, process.communicate()
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    assert stderr.strip().splitlines() == [stderr.strip()]  # one line, no traceback
    assert "interrupted after" in stderr and "--resume" in stderr
    done = out.read_text().splitlines()[1:]
    assert 2 <= len(done) < count
    resumed = subprocess.run([*args, "--resume"], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert [json.loads(line)["line"] for line in out.read_text().splitlines()[1:]] == list(range(1, count + 1))


def test_two_judge_runs_give_byte_identical_files(tmp_path, write_jsonl, small_model_path):
    data = write_jsonl(samples(3) + [{"user_input": "Where is the tower?", "retrieved_contexts": ["The tower is in Paris. It is tall."], "reference": "The tower is in Paris."}])
    outputs = []
    for run in range(2):
        out = tmp_path / f"run{run}.jsonl"
        args = ["score", str(data), "--model", str(small_model_path), "-m", "context_relevance", "-m", "context_recall", "--no-verifier", "-o", str(out), "--no-timing", "-q"]
        assert subprocess.run([sys.executable, "-m", "localeval", *args], capture_output=True).returncode == 0
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    assert b"selected_sentences" in outputs[0] and b"timing" not in outputs[0]


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a connection or resolve a name fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"network use attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def test_scoring_with_the_judge_opens_no_connection(no_network, small_model_path, tmp_path, write_jsonl):
    from localeval.judge import load_judge

    with pytest.raises(AssertionError, match="network use attempted"):
        socket.create_connection(("127.0.0.1", 9))  # the fixture really blocks
    judge = load_judge(str(small_model_path), n_ctx=1024, threads=2)
    run = evaluate(
        [{"user_input": "Where is the tower?", "retrieved_contexts": ["The tower is in Paris."], "reference": "It is in Paris.", "reference_contexts": ["The tower is in Paris."], "retrieved_context_ids": [1], "reference_context_ids": [1]}],
        ["context_relevance", "context_recall", "nonllm_context_recall", "id_context_recall"],
        judge=judge,
    )
    assert run.results[0]["errors"] == {}
    data = write_jsonl([{"retrieved_context_ids": [1], "reference_context_ids": [1]}])
    assert CliRunner().invoke(cli, ["score", str(data), "-m", "id_context_recall", "-q"]).exit_code == 0


def test_a_truncated_gguf_is_a_clear_error_not_a_crash(tmp_path, small_model_path):
    truncated = tmp_path / "truncated.gguf"
    with open(small_model_path, "rb") as source:
        truncated.write_bytes(source.read(1_000_000))
    code = f"from localeval.judge import load_judge\nload_judge({str(truncated)!r})"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert completed.returncode == 1
    assert "localeval.errors.ModelError: llama.cpp could not load" in completed.stderr
    data = tmp_path / "d.jsonl"
    data.write_text('{"user_input": "q", "retrieved_contexts": ["c"]}\n')
    result = CliRunner().invoke(cli, ["score", str(data), "--model", str(truncated), "-m", "context_relevance", "--no-verifier"])
    assert result.exit_code == 2
    assert "could not load" in result.stderr


def test_a_catalog_model_with_the_wrong_hash_is_refused_at_load(tmp_path, monkeypatch, small_model_path):
    from localeval.models import store as models

    monkeypatch.setenv(models.HOME_ENV, str(tmp_path))
    store = models.store_dir()
    store.mkdir(parents=True)
    tampered = bytearray(small_model_path.read_bytes())
    tampered[-1] ^= 0xFF
    (store / models.CATALOG["smollm2-135m"].file).write_bytes(bytes(tampered))
    data = tmp_path / "d.jsonl"
    data.write_text('{"user_input": "q", "retrieved_contexts": ["c"]}\n')
    result = CliRunner().invoke(cli, ["score", str(data), "--model", "smollm2-135m", "-m", "context_relevance", "--no-verifier"])
    assert result.exit_code == 2
    assert "SHA-256" in result.stderr and "localeval models pull smollm2-135m" in result.stderr
