"""`localeval generate` end to end. With the real small judge (SmolLM2-135M): the command runs,
every row it keeps is well formed, two runs with one seed write the same bytes, and the summary
counts every candidate. With a scripted judge (the run's own control flow, no model): a resume
after an interruption (a row and half a line written) gives what an uninterrupted run gives, a
file of another seed is refused naming its line, and an existing file is never overwritten.
The checks themselves: tests/test_generate_checks.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import SMALL_MODEL, invoke

from localeval.errors import ConfigError, InputError
from localeval.generation import attribution, checks
from localeval.generation.documents import Chunk
from localeval.generation.runner import generate
from localeval.generation.writing import ANSWER_CHARS, QUESTION_CHARS, single_messages, write
from localeval.judge import Message
from localeval.testing import ScriptedJudge

DOCS = {
    "curie.md": "# Marie Curie\n\nMarie Curie was born in Warsaw in 1867. In 1903 Marie Curie shared the Nobel Prize in Physics with Pierre Curie.",
    "tower.html": "<html><body><p>The Eiffel Tower in Paris was completed on 31 March 1889. The Eiffel Tower is 330 metres tall.</p></body></html>",
}


CHECK_REASONS = {checks.NEAR_COPY, checks.NOT_STANDALONE, checks.NEAR_DUPLICATE, checks.NOT_A_QUESTION, checks.ANSWER_CUT_OFF,
                 checks.ANSWER_ASKS, checks.ANSWER_ABOUT_SOURCE, checks.EMPTY, attribution.NOT_ATTRIBUTED, attribution.ONE_CONTEXT_SUFFICES}


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _check_rows(rows: list[dict], summary: dict) -> None:
    for row in rows:
        assert set(row) == {"id", "user_input", "reference", "reference_contexts", "reference_context_ids", "metadata"}
        assert row["user_input"].strip().endswith("?") and row["reference"].strip()
        assert len(row["reference_contexts"]) == len(row["reference_context_ids"]) >= 1
        meta = row["metadata"]
        assert meta["question_kind"] in ("single_context", "two_context") and meta["generator"] == summary["generator"]


def test_the_small_judge_generates_well_formed_rows_the_same_for_a_seed(small_model_path: Path, docs: Path, tmp_path: Path):
    args = ["-n", "2", "--two-context-share", "0", "--model", SMALL_MODEL, "--n-ctx", "2048", "--threads", "2", "--no-cache", "-q"]
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    result = invoke(["generate", str(docs), "-o", str(first), *args])
    assert result.exit_code == 0, result.output
    assert "localeval: generate: kept" in result.output and "near-duplicates measured by" in result.output
    summary = json.loads((tmp_path / "first.summary.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in first.read_text(encoding="utf-8").splitlines()]
    assert summary["kept"] == len(rows) and summary["candidates"] == summary["kept"] + sum(summary["rejected"].values()) == 2
    assert summary["generator"]["model"] == SMALL_MODEL and len(summary["generator"]["sha256"]) == 64
    assert (summary["shortfall"] is None) == (len(rows) == 2)
    # SmolLM2-135M seldom writes a question a check keeps (it ends few with '?'), so the rows may be
    # none: every candidate it wrote was then read and refused by a named check, never unreadable.
    assert summary["shortfall"] or rows
    assert set(summary["rejected"]) <= CHECK_REASONS, summary["rejected"]
    _check_rows(rows, summary)
    assert invoke(["generate", str(docs), "-o", str(second), *args]).exit_code == 0
    assert second.read_bytes() == first.read_bytes()
    assert (tmp_path / "second.summary.json").read_text() == (tmp_path / "first.summary.json").read_text()


@pytest.mark.judge
def test_the_small_judge_writes_a_bounded_question_and_answer_for_every_passage(small_judge):
    """The grammar is what makes a row well formed: even the 135M model's answer parses, every
    field a bounded string, whatever the passage."""
    for text in [*DOCS.values(), CHUNKS[0].text, "x" * 400]:
        written = write(small_judge, single_messages(text))
        assert 8 <= len(written.question) <= QUESTION_CHARS and 2 <= len(written.answer) <= ANSWER_CHARS
        assert written.question == " ".join(written.question.split()) and written.answer == " ".join(written.answer.split())


def _scripted() -> ScriptedJudge:
    """Writes "What does <the chunk's first name> have?" with the chunk's first sentence as the answer, and says Yes."""

    def answer(messages: list[Message], schema: type) -> dict:
        passage = messages[-1]["content"].split("Passage:\n", 1)[1]
        name = re.findall(r"[A-Z][a-z]+ [A-Z][a-z]+|[A-Z][a-z]{3,}", passage)[0]
        return {"question": f"What is said about {name} here in {len(passage)} characters?", "answer": passage.split(". ")[0] + "."}

    return ScriptedJudge(answer=answer)


CHUNKS = [
    Chunk(f"doc{i}#0", f"{name} was founded in {1900 + i}. It grew.", f"doc{i}")
    for i, name in enumerate(["Acme Works", "Bolt Motors", "Crane Foods", "Delta Mills", "Eagle Bank"])
]


def test_a_resume_after_an_interruption_gives_the_uninterrupted_run(tmp_path: Path):
    whole = tmp_path / "whole.jsonl"
    summary = generate(CHUNKS, 4, str(whole), _scripted(), seed=3)
    assert summary.kept == 4 and summary.shortfall is None
    lines = whole.read_text(encoding="utf-8").splitlines(keepends=True)
    _check_rows([json.loads(line) for line in lines], {"generator": summary.generator})
    cut = tmp_path / "cut.jsonl"
    cut.write_text(lines[0] + lines[1][:20], encoding="utf-8")
    judge = _scripted()
    resumed = generate(CHUNKS, 4, str(cut), judge, seed=3, resume=True)
    assert cut.read_bytes() == whole.read_bytes()
    assert resumed.to_json_dict() == summary.to_json_dict()
    assert sum(1 for messages in judge.calls if messages[-1]["content"].startswith("Passage:")) == 3  # the kept row was not written again
    kept = whole.read_bytes()
    with pytest.raises(ConfigError, match="--resume"):
        generate(CHUNKS, 4, str(whole), _scripted(), seed=3)
    assert whole.read_bytes() == kept  # a file that holds rows is never overwritten
    with pytest.raises(InputError, match=r"whole.jsonl:1: field 'metadata.seed'"):
        generate(CHUNKS, 4, str(whole), _scripted(), seed=4, resume=True)
    assert generate(CHUNKS, 9, str(tmp_path / "more.jsonl"), _scripted(), seed=3).shortfall is not None


def test_a_near_copy_is_asked_again_in_other_words_and_kept_only_if_the_rewrite_passes(tmp_path: Path):
    from localeval.generation.writing import Rewritten

    chunk = Chunk("doc#0", "The boiling point of water at sea level is 100 degrees Celsius.", "doc")

    def answer(rewrite_to: str):
        def script(messages: list[Message], schema: type) -> dict:
            if schema is Rewritten:
                return {"question": rewrite_to}
            return {"question": "What is the boiling point of water at sea level?", "answer": "It is 100 degrees Celsius."}

        return script

    kept = generate([chunk], 1, str(tmp_path / "a.jsonl"), ScriptedJudge(answer=answer("At what temperature does water boil at sea level?")))
    row = json.loads((tmp_path / "a.jsonl").read_text(encoding="utf-8"))
    assert row["user_input"] == "At what temperature does water boil at sea level?" and row["metadata"]["rewritten"] is True
    assert kept.rewritten == 1 and kept.to_json_dict()["kept_rewritten"] == 1
    refused = generate([chunk], 1, str(tmp_path / "b.jsonl"), ScriptedJudge(answer=answer("What is the boiling point of water at sea level?")))
    assert refused.kept == 0 and refused.rejected == {"near_copy": 1}
    plain = generate([chunk], 1, str(tmp_path / "c.jsonl"), ScriptedJudge(answer=answer("unused")), rewrites=False)
    assert plain.rejected == {"near_copy": 1}
