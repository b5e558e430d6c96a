"""`localeval score --ray` on a local Ray cluster (ray.init(num_cpus=2)): the same results
file as a run in this process, byte for byte (--no-timing), also after a worker is
killed mid-run, and when resuming a local run's file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from localeval import RunSettings, score_file
from localeval.run.settings import LOCAL_RAY

ray = pytest.importorskip("ray")

THREADS = 1  # the same judge threads in process and on the workers: llama.cpp's sums depend on the split


def samples(n: int) -> list[dict]:
    return [
        {
            "id": f"s{i}",
            "user_input": f"When did museum {i} open?",
            "retrieved_contexts": [f"Museum {i} opened in {1900 + i}. It has {i} rooms.", "The city has a park."],
            "reference": f"Museum {i} opened in {1900 + i}.",
            "reference_contexts": [f"Museum {i} opened in {1900 + i}."],
            "retrieved_context_ids": [i, i + 1],
            "reference_context_ids": [i],
        }
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False, _node_ip_address="127.0.0.1")
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def rows_of(path: Path) -> list[str]:
    return path.read_text().splitlines()[1:]  # the header records how the run was executed


def test_non_judge_metrics_on_ray_equal_a_local_run(cluster, write_jsonl, tmp_path):
    data = write_jsonl([*samples(30), "{not json", {"id": "x", "retrieved_context_ids": "no"}])
    local, distributed = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    common = {"input": str(data), "metrics": ["nonllm_context_recall", "id_context_recall", "nonllm_context_precision", "id_context_precision"], "timing": False}
    first = score_file(RunSettings(**common, output=str(local)))
    second = score_file(RunSettings(**common, output=str(distributed), ray=LOCAL_RAY))
    assert rows_of(local) == rows_of(distributed)
    assert first.summary["metrics"] == second.summary["metrics"] and second.exit_code == first.exit_code == 2


def test_the_rank_metrics_on_ray_equal_a_local_run(cluster, write_jsonl, tmp_path):
    graded = [{**sample, "retrieved_context_ids": [i + 2, i, i, i + 1], "reference_context_ids": [i, i + 1, "x"], "reference_context_grades": [2, 1, 3]} for i, sample in enumerate(samples(20))]
    data = write_jsonl(graded)
    local, distributed = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    common = {"input": str(data), "metrics": ["ndcg_at_k", "reciprocal_rank", "average_precision", "precision_at_k", "recall_at_k", "hit_rate_at_k", "r_precision"], "timing": False}
    first = score_file(RunSettings(**common, output=str(local)))
    second = score_file(RunSettings(**common, output=str(distributed), ray=LOCAL_RAY))
    assert rows_of(local) == rows_of(distributed)
    assert first.summary["metrics"] == second.summary["metrics"] and first.exit_code == 0


def test_without_a_judge_ray_batches_start_at_one_sample_and_grow_by_time(cluster, write_jsonl, tmp_path, monkeypatch):
    """A slow metric without a judge (the verifier) hands rows on from its first batch, as a local
    run does, instead of after 512 samples; fast string metrics still grow to large batches."""
    from localeval.run.distributed import RayScorer

    sizes: list[int] = []
    submit = RayScorer._submit
    monkeypatch.setattr(RayScorer, "_submit", lambda self, slot, batch: sizes.append(len(batch)) or submit(self, slot, batch))
    data = write_jsonl(samples(200))
    result = score_file(RunSettings(input=str(data), output=str(tmp_path / "ray.jsonl"), metrics=["nonllm_context_recall", "id_context_recall"], timing=False, ray=LOCAL_RAY))
    assert result.exit_code == 0 and len(rows_of(tmp_path / "ray.jsonl")) == 200
    assert sizes[0] == 1 and sum(sizes) == 200
    assert max(sizes) >= 4  # fast metrics: later batches take several samples at once


def test_faithfulness_and_context_precision_on_ray_equal_a_local_run(cluster, write_jsonl, tmp_path):
    """The verifier decides (no judge to load on the workers); the options reach the workers whole."""
    data = write_jsonl([{**sample, "response": sample["reference"] + " It has a famous cafe."} for sample in samples(4)])
    local, distributed = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    common = {
        "input": str(data),
        "metrics": ["faithfulness", "context_precision", "factual_correctness"],
        "options": {"faithfulness": {"verifier": True}, "context_precision": {"verifier": True, "against": "response"}, "factual_correctness": {"verifier": True}},
        "timing": False,
    }
    first = score_file(RunSettings(**common, output=str(local)))
    second = score_file(RunSettings(**common, output=str(distributed), ray=LOCAL_RAY))
    assert rows_of(local) == rows_of(distributed)
    assert first.summary["metrics"] == second.summary["metrics"] and first.summary["metrics"]["faithfulness"]["scored"] == 4
    assert first.summary["metrics"]["factual_correctness"]["scored"] == 4


def test_the_scorecard_metrics_without_a_judge_on_ray_equal_a_local_command_run(cluster, write_jsonl, tmp_path):
    """semantic_similarity, answer_correctness and noise_sensitivity (the verifier deciding) and
    context_entity_recall without a model: the embedding model loads on the workers and each
    sample's cosine is the same bits there. Both runs are the localeval command, so numpy's BLAS
    runs one thread in each, as on Ray's workers (a matrix product's last bits depend on BLAS's
    threads)."""
    data = write_jsonl([{**sample, "response": sample["reference"] + " It has a famous cafe."} for sample in samples(6)])
    config = tmp_path / "localeval.toml"
    config.write_text(
        'metrics = ["semantic_similarity", "answer_correctness", "noise_sensitivity", "context_entity_recall"]\n'
        '[options.answer_correctness]\ngrader = "verifier"\n[options.noise_sensitivity]\ngrader = "verifier"\n'
        '[options.context_entity_recall]\nextractor = "capitalised_spans"\n'
    )
    local, distributed = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    args = [sys.executable, "-m", "localeval", "score", str(data), "--config", str(config), "--no-timing", "-q"]
    first = subprocess.run([*args, "-o", str(local)], capture_output=True, text=True)
    second = subprocess.run([*args, "-o", str(distributed), "--ray", cluster], capture_output=True, text=True, timeout=600)
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert rows_of(local) == rows_of(distributed) and len(rows_of(local)) == 6
    assert all('"errors": {}' in row for row in rows_of(local))


@pytest.mark.judge
def test_judge_metrics_on_ray_equal_a_local_run_and_resume_it(cluster, write_jsonl, tmp_path, small_model_path):
    data = write_jsonl(samples(6))
    local, distributed = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    rubric = tmp_path / "rubric.txt"
    rubric.write_text("Text: {document}\n\nClaim: {statement}\n\nDoes the text support the claim? Answer Yes or No.")
    common = {
        "input": str(data),
        "metrics": ["context_relevance", "context_recall", "id_context_recall"],
        "options": {"context_recall": {"rubric": str(rubric)}, "context_relevance": {"verifier": False}},  # options the workers must receive whole
        "timing": False,
        "model": str(small_model_path),
        "n_ctx": 2048,
        "threads": THREADS,
    }
    score_file(RunSettings(**common, output=str(local)))
    score_file(RunSettings(**common, output=str(distributed), ray=LOCAL_RAY))
    assert rows_of(local) == rows_of(distributed)
    # A local run's file, cut after three samples, resumed on Ray: the file a local run writes.
    lines = local.read_text().splitlines(keepends=True)
    resumed = tmp_path / "resumed.jsonl"
    resumed.write_text("".join(lines[:4]))
    outcome = score_file(RunSettings(**common, output=str(resumed), ray=LOCAL_RAY, resume=True))
    assert resumed.read_text() == local.read_text() and outcome.written == 3


@pytest.mark.judge
def test_a_worker_killed_mid_run_changes_nothing(cluster, write_jsonl, tmp_path, small_model_path):
    # 36 samples: enough batches that the watcher, polling every 5 ms, finds one being scored on an
    # idle fast machine too (with 12, a CI run on an idle machine once saw none: the test proved nothing).
    data = write_jsonl(samples(36))
    local, distributed = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    args = ["score", str(data), "-m", "context_recall", "--no-verifier", "--model", str(small_model_path), "--n-ctx", "2048", "--threads", str(THREADS), "--no-timing", "-q"]
    assert subprocess.run([sys.executable, "-m", "localeval", *args, "-o", str(local)], capture_output=True).returncode == 0
    killed: list[int] = []
    finished = threading.Event()

    def kill_a_worker() -> None:
        # Mid-run means while an actor is scoring a batch: Ray titles its process
        # "ray::_Worker.score" then (and "ray::_Worker" between batches), so the kill lands
        # inside a batch however fast or loaded the machine is. Waiting for written lines
        # instead missed the run on a fast machine.
        while not finished.is_set():
            found = subprocess.run(["pgrep", "-f", "ray::_Worker.score"], capture_output=True, text=True).stdout.split()
            if found:
                os.kill(int(found[0]), signal.SIGKILL)
                killed.append(int(found[0]))
                return
            finished.wait(0.005)

    killer = threading.Thread(target=kill_a_worker)
    killer.start()
    try:
        completed = subprocess.run([sys.executable, "-m", "localeval", *args, "-o", str(distributed), "--ray", cluster], capture_output=True, text=True, timeout=600)
    finally:
        finished.set()
        killer.join()
    assert killed, "no worker was killed: the test proves nothing"
    assert completed.returncode == 0, completed.stderr
    assert rows_of(distributed) == rows_of(local)


@pytest.mark.judge
def test_a_ray_run_fills_the_verdict_cache_a_local_run_then_reads(cluster, write_jsonl, tmp_path, small_model_path):
    """Each actor keeps its answers in the machine's cache file: a local run of the same file after
    a Ray run asks the judge nothing (it never loads it) and writes the same rows."""
    data = write_jsonl(samples(6))
    cache = tmp_path / "verdicts.sqlite"
    args = [sys.executable, "-m", "localeval", "score", str(data), "-m", "context_recall", "--no-verifier", "--model", str(small_model_path),
            "--n-ctx", "2048", "--threads", str(THREADS), "--no-timing", "--cache", str(cache)]
    distributed, local = tmp_path / "ray.jsonl", tmp_path / "local.jsonl"
    first = subprocess.run([*args, "-q", "-o", str(distributed), "--ray", cluster], capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    second = subprocess.run([*args, "-o", str(local)], capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr
    assert "6 judge answers came from the verdict cache and 0 from the judge" in second.stderr
    assert rows_of(local) == rows_of(distributed)
