"""The CI recipe of examples/ci, run for real (issue 76 item 4): the script both workflows call
scores main's output and the candidate's, compares them with the config's gate, and writes every
report even when the gate fails (exit 1); main's results come from the cache the second time; the
GitHub Actions and GitLab CI files parse and keep their promises (the reports kept, the comment
and the summary posted, the gate failing the job last)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CI = ROOT / "examples" / "ci"
SCRIPT = CI / "compare_pr.sh"
REPORTS = ("base.results.jsonl", "candidate.results.jsonl", "compare.md", "compare.json", "compare.junit.xml", "compare.html")
SETTINGS = ("BASE_INPUT", "CANDIDATE_INPUT", "LOCALEVAL_CONFIG", "REPORTS")


def run_recipe(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The script as CI runs it, from a folder of its own, with its own cache folder."""
    environment = {**os.environ, "REPORTS": str(tmp_path / "reports"), "LOCALEVAL_HOME": str(tmp_path / "home"), "LOCALEVAL": f"{sys.executable} -m localeval", **env}
    return subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=600)


def test_the_bundled_example_fails_its_gate_writes_every_report_and_reuses_mains_results(tmp_path):
    first = run_recipe(tmp_path)
    assert first.returncode == 1, first.stderr
    reports = tmp_path / "reports"
    assert all((reports / name).is_file() and (reports / name).stat().st_size for name in REPORTS), sorted(p.name for p in reports.iterdir())
    failed = [line for line in first.stderr.splitlines() if line.startswith("localeval: gate failed: --max-drop ")]
    assert {line.split()[4].split("=")[0] for line in failed} >= {"id_context_recall", "nonllm_context_recall"}, first.stderr
    comparison = json.loads((reports / "compare.json").read_text(encoding="utf-8"))
    assert comparison["gates_hold"] is False and comparison["gate_refusal"] is None and comparison["paired_by"] == "id"
    assert comparison["metrics"]["id_context_recall"]["verdict"] == "worse" and comparison["metrics"]["id_context_recall"]["gate"]["max_drop"] == 0.02
    suite = ET.parse(reports / "compare.junit.xml").getroot().find("testsuite")
    assert suite is not None and int(suite.get("failures", "0")) == len(failed) and int(suite.get("tests", "0")) == 4
    markdown = (reports / "compare.md").read_text(encoding="utf-8")
    assert "worse" in markdown.splitlines()[0] and len(markdown) < 60_000
    assert "scoring main's output" in first.stderr
    before = (reports / "base.results.jsonl").read_bytes()
    again = run_recipe(tmp_path)  # main's input, the config and localeval unchanged: its results come from the cache
    assert again.returncode == 1 and "main's results from the cache" in again.stderr and "scoring main's output" not in again.stderr, again.stderr
    assert (reports / "base.results.jsonl").read_bytes() == before


def test_a_candidate_that_changes_nothing_passes(tmp_path):
    same = run_recipe(tmp_path, CANDIDATE_INPUT=str(CI / "base.jsonl"))
    assert same.returncode == 0, same.stderr
    assert json.loads((tmp_path / "reports" / "compare.json").read_text(encoding="utf-8"))["gates_hold"] is True


def test_the_example_inputs_are_one_question_set_whose_candidate_lost_gold_passages():
    def rows(name: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in (CI / name).read_text(encoding="utf-8").splitlines()]

    base, candidate = rows("base.jsonl"), rows("candidate.jsonl")
    assert [(r["id"], r["user_input"], r["reference_context_ids"]) for r in base] == [(r["id"], r["user_input"], r["reference_context_ids"]) for r in candidate]
    lost = [b["id"] for b, c in zip(base, candidate, strict=True) if set(b["reference_context_ids"]) <= set(b["retrieved_context_ids"]) and not set(c["reference_context_ids"]) <= set(c["retrieved_context_ids"])]
    found = [b["id"] for b, c in zip(base, candidate, strict=True) if not set(b["reference_context_ids"]) <= set(b["retrieved_context_ids"]) and set(c["reference_context_ids"]) <= set(c["retrieved_context_ids"])]
    assert len(base) == 16 and len(lost) == 10 and found == ["tides"]


def _workflow(name: str) -> dict[Any, Any]:
    loaded = yaml.safe_load((CI / name).read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_the_github_actions_workflow_runs_the_script_caches_posts_and_keeps_the_reports_whatever_the_gate():
    workflow = _workflow("github-actions.yml")
    assert "pull_request" in workflow.get("on", workflow.get(True, {}))  # YAML 1.1 reads a bare `on` as true
    job = workflow["jobs"]["compare"]
    assert set(SETTINGS) <= set(job["env"]) and workflow["permissions"]["pull-requests"] == "write"
    steps = {step.get("name", step.get("uses")): step for step in job["steps"]}
    assert "bash examples/ci/compare_pr.sh" in steps["Score and compare"]["run"] and "GITHUB_OUTPUT" in steps["Score and compare"]["run"]
    cache = steps["Cache ~/.cache/localeval"]
    assert cache["uses"].startswith("actions/cache@") and cache["with"]["path"] == "~/.cache/localeval" and "hashFiles(env.BASE_INPUT" in cache["with"]["key"]
    for name in ("Job summary", "Comment on the pull request", "Keep the reports", "Gate"):
        assert steps[name]["if"].startswith("always()"), name
    assert "GITHUB_STEP_SUMMARY" in steps["Job summary"]["run"] and "gh pr comment" in steps["Comment on the pull request"]["run"]
    assert steps["Keep the reports"]["uses"].startswith("actions/upload-artifact@") and steps["Keep the reports"]["with"]["path"] == "${{ env.REPORTS }}"
    assert job["steps"][-1]["name"] == "Gate" and "steps.compare.outputs.exit_code" in job["steps"][-1]["run"]


def test_the_gitlab_job_runs_the_script_caches_posts_and_keeps_the_reports_whatever_the_gate():
    job = _workflow("gitlab-ci.yml")["localeval"]
    assert set(SETTINGS) <= set(job["variables"]) and job["variables"]["LOCALEVAL_HOME"].endswith("/.cache/localeval")
    script = "\n".join(job["script"])
    assert "bash examples/ci/compare_pr.sh || status=$?" in script and "merge_requests/$CI_MERGE_REQUEST_IID/notes" in script and job["script"][-1] == "exit $status"
    assert ".cache/localeval" in job["cache"]["paths"] and job["cache"]["key"]["files"] == ["examples/ci/base.jsonl", "examples/ci/localeval.toml"]
    assert job["artifacts"]["when"] == "always" and job["artifacts"]["reports"]["junit"] == "localeval-reports/compare.junit.xml"


@pytest.mark.parametrize("name", ["github-actions.yml", "gitlab-ci.yml"])
def test_every_setting_a_workflow_gives_is_one_the_script_reads(name):
    text = SCRIPT.read_text(encoding="utf-8")
    assert all(f"${{{setting}:-" in text for setting in SETTINGS)
    assert all(setting in (CI / name).read_text(encoding="utf-8") for setting in SETTINGS)
