"""--resume continues only the run that wrote the file: a different run, a changed input, a file
without a header or of an unknown version is refused naming what differs, and nothing a crafted
results line says can make it merge or allocate."""

from __future__ import annotations

import json

import pytest
from conftest import invoke

from localeval.errors import EXIT_USAGE
from localeval.run.provenance import resume_differences

NONLLM = ["-m", "nonllm_context_recall", "-m", "id_context_recall"]


UNRECALLED = {"id": "q1", "retrieved_contexts": ["Paris has many museums."], "reference_contexts": ["Construction was completed on 31 March 1889."]}


RECALLED = {"id": "q2", "retrieved_contexts": ["The tower was completed on 31 March 1889."], "reference_contexts": ["The tower was completed on 31 March 1889."]}


@pytest.mark.parametrize(
    "change, differs",
    [
        (["-m", "id_context_recall"], "metrics"),
        (["-m", "nonllm_context_recall", "-m", "id_context_recall", "--option", "nonllm_context_recall.threshold=0.9"], "metrics"),
        (["-m", "nonllm_context_recall", "-m", "id_context_recall", "--map", "foo=reference"], "map"),
    ],
)
def test_resume_refuses_a_file_written_by_a_different_run(write_jsonl, tmp_path, change, differs):
    data = write_jsonl([RECALLED, UNRECALLED])
    out = tmp_path / "r.jsonl"
    invoke(["score", str(data), *NONLLM, "-o", str(out)])
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:2]))  # the header and one result: an interrupted run
    result = invoke(["score", str(data), *change, "-o", str(out), "--resume"])
    assert result.exit_code == EXIT_USAGE, result.output
    assert "cannot resume" in result.stderr and f"({differs}." in result.stderr  # the differing key, dotted
    assert out.read_text() == "".join(lines[:2])  # nothing was merged


def test_resume_refuses_a_changed_input_and_a_file_without_header(write_jsonl, tmp_path):
    data = write_jsonl([RECALLED, UNRECALLED])
    out = tmp_path / "r.jsonl"
    invoke(["score", str(data), *NONLLM, "-o", str(out)])
    data.write_text(data.read_text() + json.dumps(RECALLED) + "\n")
    result = invoke(["score", str(data), *NONLLM, "-o", str(out), "--resume"])
    assert result.exit_code == EXIT_USAGE and "input:" in result.stderr
    out.write_text("\n".join(out.read_text().splitlines()[1:]) + "\n")
    result = invoke(["score", str(data), *NONLLM, "-o", str(out), "--resume"])
    assert result.exit_code == EXIT_USAGE and "run header" in result.stderr


def test_a_results_file_of_an_unknown_version_is_refused(write_jsonl, tmp_path):
    out = tmp_path / "r.jsonl"
    data = write_jsonl([RECALLED])
    invoke(["score", str(data), *NONLLM, "-o", str(out), "-q"])
    lines = out.read_text().splitlines()
    header = json.loads(lines[0])
    out.write_text("\n".join([json.dumps({**header, "version": 99}), *lines[1:]]) + "\n")
    report = invoke(["report", str(out), "-o", str(tmp_path / "p.html")])
    assert report.exit_code == EXIT_USAGE and "version 99" in report.stderr
    resumed = invoke(["score", str(data), *NONLLM, "-o", str(out), "--resume", "-q"])
    assert resumed.exit_code == EXIT_USAGE and "version 99" in resumed.stderr


def test_a_crafted_line_number_cannot_make_resume_allocate(write_jsonl, tmp_path):
    data, out = write_jsonl([RECALLED]), tmp_path / "r.jsonl"
    invoke(["score", str(data), *NONLLM, "-o", str(out), "-q"])
    lines = out.read_text().splitlines()
    out.write_text("\n".join([lines[0], json.dumps({**json.loads(lines[1]), "line": 2**40})]) + "\n")
    resumed = invoke(["score", str(data), *NONLLM, "-o", str(out), "--resume", "-q"])
    assert resumed.exit_code == EXIT_USAGE and "which the input does not have" in resumed.stderr


def test_a_resume_names_the_differing_key_with_both_values_and_ignores_speed_settings():
    before = {"input": {"sha256": "x"}, "metrics": {"m": {"threshold": 0.5, "long": "a" * 200}}, "judge": {"file": "f", "speed": {"n_threads": 2, "concurrency": 4}}}
    now = json.loads(json.dumps(before))
    now["judge"]["speed"] = {"concurrency": 1, "n_threads": 8, "timeout": 5.0}
    assert resume_differences(before, now) == []
    now["judge"]["n_batch"] = 256
    assert resume_differences(before, now) == ["judge.n_batch: (not set) then, 256 now"]
    del now["judge"]["n_batch"]
    now["metrics"]["m"]["threshold"] = 0.6
    assert resume_differences(before, now) == ["metrics.m.threshold: 0.5 then, 0.6 now"]
