"""A user's own task text for the judge metrics: placeholders checked when the metric is
built, the text reaching the judge, and its hash deciding whether a run may resume."""

from __future__ import annotations

import pytest

from localeval import ConfigError, evaluate
from localeval.metrics import create_metric
from localeval.run.pipeline import score_file
from localeval.run.settings import build_settings
from localeval.testing import ScriptedJudge

SAMPLE = {"id": "q", "user_input": "Who wrote it?", "retrieved_contexts": ["Ann wrote the book."], "reference": "Ann wrote it."}


@pytest.mark.parametrize(
    "metric, text, message",
    [
        ("context_recall", "Doc: {document}\nClaim: {statment}\nYes or No?", "unknown placeholder {statment}"),
        ("context_recall", "Claim: {statement}\nYes or No?", "missing placeholder {document}"),
        ("faithfulness", "Q: {question} Doc: {document} Claim: {statement} Yes or No?", "unknown placeholder {question}"),
        ("context_precision", "Q: {question} P: {paragraph} Yes or No?", "missing placeholder {answer}"),
        ("context_relevance", "Q: {question} P: {document}", "unknown placeholder {document}"),
        ("context_relevance", "Q: {question} P: {paragraph} {", "literal braces"),
        ("context_relevance", "Q: {question!r} P: {paragraph}", "is not a plain name"),
    ],
)
def test_a_wrong_placeholder_is_named_before_anything_runs(tmp_path, metric, text, message):
    rubric = tmp_path / "rubric.txt"
    rubric.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("{", r"\{").replace("}", r"\}")) as raised:
        create_metric(metric, {"rubric": str(rubric)})
    assert "option 'rubric'" in str(raised.value) and "Value error" not in str(raised.value)


def test_an_unreadable_rubric_is_a_message(tmp_path):
    with pytest.raises(ConfigError, match="cannot read rubric file"):
        create_metric("context_recall", {"rubric": str(tmp_path / "absent.txt")})
    (tmp_path / "latin1.txt").write_bytes(b"{document} {statement} \xe9")
    with pytest.raises(ConfigError, match="not UTF-8"):
        create_metric("context_recall", {"rubric": str(tmp_path / "latin1.txt")})


TASKS = {  # the rubric text each judge metric's placeholders allow (the statement verdicts never read the question)
    "context_recall": "Q= DOC={document} CLAIM={statement}",
    "faithfulness": "Q= DOC={document} CLAIM={statement}",
    "context_relevance": "Q={question} PARA={paragraph}",
    "context_precision": "Q={question} ANSWER={answer} PARA={paragraph}",
}


@pytest.mark.parametrize("metric, needle", [("context_recall", "CLAIM=Ann wrote it."), ("faithfulness", "CLAIM=Ann did."), ("context_relevance", "PARA=Ann wrote the book."), ("context_precision", "ANSWER=Ann wrote it. PARA=Ann wrote the book.")])
def test_the_rubric_is_what_the_judge_reads(tmp_path, metric, needle):
    rubric = tmp_path / "rubric.txt"
    rubric.write_text("{{literal}} " + TASKS[metric] + " Yes or No?")
    judge = ScriptedJudge()
    evaluate([{**SAMPLE, "response": "Ann did."}], [create_metric(metric, {"rubric": str(rubric)})], judge=judge)
    users = [m["content"] for call in judge.calls for m in call if m["role"] == "user"]
    question = "" if "{question}" not in TASKS[metric] else "Who wrote it?"
    assert users and all(u.startswith("{literal} Q=" + question) and u.endswith(" Yes or No?") for u in users)
    assert any(needle in u for u in users)


def test_the_rubric_hash_is_recorded_and_a_changed_rubric_cannot_resume(tmp_path, write_jsonl):
    data = write_jsonl([SAMPLE, {**SAMPLE, "id": "q2"}])
    rubric, out = tmp_path / "rubric.txt", tmp_path / "r.jsonl"
    rubric.write_text("{document} / {statement}: Yes or No?")
    values = {"input": str(data), "output": str(out), "metrics": ["context_recall"], "options": {"context_recall": {"rubric": str(rubric)}}}
    run = score_file(build_settings(values), judge=ScriptedJudge())
    assert run.exit_code == 0
    header = out.read_text().splitlines()[0]
    assert '"rubric":{"path":' in header.replace(" ", "") and '"sha256":' in header
    out.write_text("\n".join(out.read_text().splitlines()[:2]) + "\n")  # interrupted after one sample
    rubric.write_text("{document} // {statement}: Yes or No?")
    with pytest.raises(ConfigError, match="cannot resume.*metrics"):
        score_file(build_settings({**values, "resume": True}), judge=ScriptedJudge())


def test_an_endless_file_named_as_a_rubric_is_refused_without_reading_it_all(tmp_path):
    with pytest.raises(ConfigError, match="not a regular file"):
        create_metric("context_recall", {"rubric": "/dev/zero"})
    big = tmp_path / "big.txt"
    big.write_bytes(b"{document} {statement} " + b"x" * (1 << 20))
    with pytest.raises(ConfigError, match="larger than"):
        create_metric("context_recall", {"rubric": str(big)})


def test_a_fifo_as_a_rubric_is_refused_without_waiting(tmp_path):
    import os

    fifo = tmp_path / "rubric.fifo"
    os.mkfifo(fifo)  # nobody writes to it: reading would wait forever
    with pytest.raises(ConfigError, match="not a regular file"):
        create_metric("context_recall", {"rubric": str(fifo)})
