"""training/plain_samples.py: the plain one-context relevance windows the relevance decision is
chosen on (issue 48). A window must hold its question's answer sentence and mark it, a window
"without answer" must keep two sentences away from every answer, and the rows keep their group's
split (a sealed group's window never becomes a training row)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))

import plain_samples  # noqa: E402

SENTENCES = [f"Sentence number {n} talks about the topic at some length here." for n in range(9)]


def rows(split: str, answer: int, group: str = "g1", question: str = "Which sentence answers?") -> list[dict[str, object]]:
    return [{"task": "relevance", "a": question, "b": s, "c": " ".join(SENTENCES), "label": int(i == answer),
             "source": "selqa", "group": group, "split": split} for i, s in enumerate(SENTENCES)]


def test_the_window_holds_and_marks_the_answer_and_the_empty_window_keeps_away():
    samples = list(plain_samples.plain_samples(rows("validation", answer=4), "validation"))
    shapes = {s["shape"]: s for s in samples}
    assert set(shapes) == {"plain", "plain without answer"}
    plain = shapes["plain"]
    units = plain_samples.split_sentences(plain["contexts"][0])
    assert 2 <= len(units) <= 4 and [units[k] for k in plain["required"]] == [SENTENCES[4]]
    empty = shapes["plain without answer"]["contexts"][0]
    assert all(SENTENCES[n] not in empty for n in (3, 4, 5)) and shapes["plain without answer"]["required"] == []


def test_samples_and_rows_stay_in_their_split():
    both = rows("test", answer=1, group="sealed-one") + rows("train", answer=7, group="train-one", question="Another?")
    assert {s["group"] for s in plain_samples.plain_samples(both, "train")} == {"train-one"}
    test = list(plain_samples.plain_samples(both, "test"))
    assert test and {s["group"] for s in test} == {"sealed-one"}
    pairs = [r for s in test for r in plain_samples.sample_rows(s, "test")]
    assert {r["split"] for r in pairs} == {"test"} and sum(r["label"] for r in pairs) == 1
    assert {r["source"] for r in pairs} == {"selqa_window"} and {r["family"] for r in pairs} == {"selqa"}


def test_a_question_without_an_answer_sentence_makes_no_sample():
    assert not list(plain_samples.plain_samples(rows("validation", answer=-1), "validation"))
