"""Plain one-context relevance: a short window of a paragraph, the answer sentence obvious in it.

The hand-written plain cases (benchmarks/data/plain_cases.jsonl) are two to four sentences of one
context where one sentence answers the question, or none does. Neither the verifier's rows (a
question against a whole SelQA section, HotpotQA's paragraphs) nor the validation samples the
relevance decision was chosen on (HotpotQA questions only) have that shape, and the verifier and the
stacked decision fail it (issue 48): they select the answer's neighbours. This module cuts that
shape out of the answer-sentence sources (SelQA, SQuAD), from the same pair rows and so in the same
split as their group:

- "plain": a window of WINDOW_SIZES consecutive sentences holding the question's first answer
  sentence at a seeded position; required = the window's answer sentences;
- "plain without answer": a window of the same section whose every sentence is at least two
  sentences away from any answer sentence (a neighbour may still say it with a pronoun); required = [].

Windows are rebuilt as the metric reads them: the sentences joined with a space, split again with
pysbd, and a unit is required when it is (or holds, or is held in) an answer sentence.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from localeval.data.text import split_sentences

SEED = "localeval-plain-windows-20261126"
WINDOW_SIZES = (2, 3, 4)
SOURCES = ("selqa", "squad")
QUESTIONS_PER_GROUP = {"validation": 2, "test": 1}  # bounds the judge's time on whole samples


def _questions(rows: Iterable[dict[str, Any]]) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
    """Pair rows of the answer-sentence sources, by (source, group, question), in paragraph order."""
    found: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for item in rows:
        if item["task"] == "relevance" and item["source"] in SOURCES:
            found[(item["source"], item["group"], item["a"])].append(item)
    return found


def _required(units: list[str], answers: list[str]) -> list[int]:
    return [k for k, unit in enumerate(units) if any(unit == a or (len(unit) > 20 and unit in a) or (len(a) > 20 and a in unit) for a in answers)]


def _sample(first: dict[str, Any], shape: str, window: list[str], answers: list[str]) -> dict[str, Any]:
    context = " ".join(window)
    units = split_sentences(context)
    return {"source": first["source"], "group": first["group"], "shape": shape, "question": first["a"],
            "contexts": [context], "required": _required(units, answers) if answers else []}


def windows(question_rows: list[dict[str, Any]], rng: random.Random) -> tuple[list[str], list[str] | None]:
    """(the answering window, a window far from every answer or None) for one question's rows."""
    sentences = [r["b"] for r in question_rows]
    answering = [i for i, r in enumerate(question_rows) if r["label"] == 1]
    size = min(rng.choice(WINDOW_SIZES), len(sentences))
    first = answering[0]
    start = max(0, min(first - rng.randrange(size), len(sentences) - size))
    far = [i for i in range(len(sentences)) if all(abs(i - a) >= 2 for a in answering)]
    runs = [i for i in far if all(i + k in far for k in range(size))]
    empty = sentences[runs[rng.randrange(len(runs))]:][:size] if runs else None
    return sentences[start:start + size], empty


def plain_samples(rows: Iterable[dict[str, Any]], split: str) -> Iterator[dict[str, Any]]:
    """The split's plain samples: QUESTIONS_PER_GROUP answered questions per group (seeded), each as
    a "plain" sample, and for the first of them a "plain without answer" sample when its section
    has a window far enough from its answers."""
    by_group: dict[tuple[str, str], list[list[dict[str, Any]]]] = defaultdict(list)
    for (source, group, _), question_rows in _questions(r for r in rows if r["split"] == split).items():
        if any(r["label"] == 1 for r in question_rows) and len(question_rows) >= 2:
            by_group[(source, group)].append(question_rows)
    for (source, group), questions in sorted(by_group.items()):
        rng = random.Random(f"{SEED}:{source}:{group}")
        chosen = rng.sample(questions, min(QUESTIONS_PER_GROUP.get(split, 1), len(questions)))
        for number, question_rows in enumerate(chosen):
            window, empty = windows(question_rows, rng)
            answers = [r["b"] for r in question_rows if r["label"] == 1]
            sample = _sample(question_rows[0], "plain", window, answers)
            if sample["required"]:  # pysbd may cut the window otherwise than the source did
                yield sample
            if number == 0 and empty is not None:
                yield _sample(question_rows[0], "plain without answer", empty, [])


def sample_rows(sample: dict[str, Any], split: str) -> Iterator[dict[str, Any]]:
    """A plain sample as the verifier's pair rows: each unit against its window (family and group
    as the sample's source, so the rows stay on their group's side of the split)."""
    context = sample["contexts"][0]
    for k, unit in enumerate(split_sentences(context)):
        yield {"task": "relevance", "a": sample["question"].strip(), "b": unit.strip(), "c": context.strip(), "label": int(k in sample["required"]),
               "source": f"{sample['source']}_window", "family": sample["source"], "group": sample["group"], "split": split, "level": "pair"}
