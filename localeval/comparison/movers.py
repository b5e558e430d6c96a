"""What changed in one sample between two runs, in words a pull-request comment can hold, and as
typed fields for `--json`.

A person reading why recall dropped wants the statements whose verdict flipped (with the evidence
each run gave), the contexts that entered or left the retrieval, and the units the relevance
metric selected now and not then, without opening two JSON files. A program reading `--json`
wants the same as fields, not sentences to parse: each change is a `Change` with its `kind`, its
fields, and its `text` in words. Details are untrusted (a results file from anywhere): each field
is read only when it has the shape the built-in metrics write, and anything else is passed over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from localeval.comparison.inputs import ScoredSample
from localeval.comparison.quoting import quote, short
from localeval.comparison.rank_movers import relevant_id_moves

MAX_CHANGES = 8  # changes listed per sample and metric; the rest are counted
BEFORE_DIFFERENCE = 40  # characters of a changed response shown before its first difference

# The changes read from the recorded inputs, not from a metric's details: the same for every
# metric a sample moved in (a report shows them once per sample).
INPUT_KINDS = frozenset({"context_entered", "context_left", "contexts_reordered", "response_changed"})


@dataclass(frozen=True)
class Change:
    """One thing that changed in a sample: its `kind` (docs/compare.md lists them), the fields
    that kind has (texts shortened to MAX_TEXT characters), and `text`, the change in words."""

    kind: str
    text: str
    fields: dict[str, Any] = field(default_factory=dict)

    @property
    def of_input(self) -> bool:
        """Read from the recorded inputs (contexts, response): the same under every metric."""
        return self.kind in INPUT_KINDS

    def to_json_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.fields, "text": self.text}


@dataclass(frozen=True)
class Mover:
    """A sample whose score changed: its id, its line in each file, both scores, and what changed."""

    id: str | int | None
    base_line: int
    candidate_line: int
    base: float
    candidate: float
    changes: tuple[Change, ...]

    @property
    def difference(self) -> float:
        return self.candidate - self.base

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "base_line": self.base_line, "candidate_line": self.candidate_line, "base": self.base, "candidate": self.candidate,
            "changes": [change.to_json_dict() for change in self.changes],
        }


def _statements(details: dict[str, Any] | None, key: str = "statements", verdict: str = "attributed") -> dict[str, dict[str, Any]]:
    """The verdicts listed under `key`, by statement: those whose `verdict` field is 0 or 1."""
    items = details.get(key) if isinstance(details, dict) else None
    if not isinstance(items, list):
        return {}
    return {item["statement"]: item for item in items if isinstance(item, dict) and isinstance(item.get("statement"), str) and item.get(verdict) in (0, 1)}


def _evidence(item: dict[str, Any]) -> tuple[str | list[int] | None, str]:
    """A verdict's evidence as the run recorded it (its reason, else the evidence sentences'
    indices, else None) and in words."""
    reason = item.get("reason")
    if isinstance(reason, str) and reason:
        return short(reason), quote(reason)
    evidence = item.get("evidence")
    indices = [e for e in evidence[:5] if isinstance(e, int) and not isinstance(e, bool)] if isinstance(evidence, list) else []
    if indices:
        return indices, "context sentences " + ", ".join(str(e) for e in indices)
    return None, "no evidence recorded"


# Where the built-in metrics list statement verdicts, and what a statement there is called:
# context_recall and faithfulness under "statements"; factual_correctness and answer_correctness
# under the response's and the reference's lists.
STATEMENT_LISTS = (("statements", "statement"), ("response_statements", "response statement"), ("reference_statements", "reference statement"))


def statement_changes(base: dict[str, Any] | None, candidate: dict[str, Any] | None) -> list[Change]:
    """The statements whose verdict flipped (both runs' evidence), and those only one run judged."""
    found = []
    for key, called in STATEMENT_LISTS:
        before, after = _statements(base, key), _statements(candidate, key)
        for text, item in after.items():
            old = before.get(text)
            if old is not None and old["attributed"] != item["attributed"]:
                was, now = ("attributed", "not attributed") if old["attributed"] else ("not attributed", "attributed")
                (old_evidence, old_words), (new_evidence, new_words) = _evidence(old), _evidence(item)
                found.append(Change(
                    "verdict_flipped", f"{called} {quote(text)}: {was} in the base ({old_words}), {now} in the candidate ({new_words})",
                    {"list": key, "statement": short(text), "base": bool(old["attributed"]), "candidate": bool(item["attributed"]), "base_evidence": old_evidence, "candidate_evidence": new_evidence},
                ))
        for side, mine, other in (("candidate", after, before), ("base", before, after)):
            found += [
                Change(
                    "judged_in_one_run", f"{called} judged only in the {side} ({'attributed' if item['attributed'] else 'not attributed'}): {quote(t)}",
                    {"list": key, "statement": short(t), "side": side, "attributed": bool(item["attributed"])},
                )
                for t, item in mine.items() if t not in other
            ]
    return found


def _noise_state(item: dict[str, Any]) -> str:
    """A noise_sensitivity verdict in words: counted or not, and why."""
    contexts = [c + 1 for c in item.get("contexts") or [] if isinstance(c, int) and not isinstance(c, bool)]
    if item["correct"]:
        why = "the reference supports it"
    elif contexts:
        why = f"the reference does not support it, retrieved context {', '.join(map(str, contexts[:5]))} does"
    else:
        why = "the reference does not support it, no retrieved context does"
    return f"{'counted' if item.get('counted') == 1 else 'not counted'}: {why}"


def noise_changes(base: dict[str, Any] | None, candidate: dict[str, Any] | None) -> list[Change]:
    """noise_sensitivity's response statements counted in one run and not the other (each run's
    reading), and those only one run has."""
    before, after = _statements(base, verdict="correct"), _statements(candidate, verdict="correct")
    found = []
    for text, item in after.items():
        old = before.get(text)
        if old is not None and (old.get("counted") == 1) != (item.get("counted") == 1):
            found.append(Change(
                "noise_flipped", f"response statement {quote(text)}: {_noise_state(old)} in the base; {_noise_state(item)} in the candidate",
                {"statement": short(text), "base_counted": old.get("counted") == 1, "candidate_counted": item.get("counted") == 1},
            ))
    for side, mine, other in (("candidate", after, before), ("base", before, after)):
        found += [
            Change("noise_in_one_run", f"response statement only in the {side} ({_noise_state(item)}): {quote(t)}", {"statement": short(t), "side": side, "counted": item.get("counted") == 1})
            for t, item in mine.items() if t not in other
        ]
    return found


# The figures a score is made of (semantic_similarity's cosine; answer_correctness' two parts), by
# the name a reader knows them by.
FIGURES = (("cosine", "cosine similarity"), ("similarity", "similarity"), ("factuality", "factuality"))


def figure_changes(base: dict[str, Any] | None, candidate: dict[str, Any] | None) -> list[Change]:
    """The figures a score is made of that moved, each run's value."""
    found = []
    for key, called in FIGURES:
        old, new = (d.get(key) if isinstance(d, dict) else None for d in (base, candidate))
        numbers = [v for v in (old, new) if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v]
        if len(numbers) == 2 and round(numbers[0], 2) != round(numbers[1], 2):
            found.append(Change("figure_changed", f"{called} {numbers[0]:.2f} in the base, {numbers[1]:.2f} in the candidate", {"figure": key, "base": numbers[0], "candidate": numbers[1]}))
    return found


def _relevant_ranks(details: dict[str, Any] | None) -> list[int] | None:
    """The ranks (from 1) of the contexts an average-precision metric found relevant: context_precision's
    `contexts` (`useful`), nonllm_context_precision's `retrieved` (`relevant`); None for another shape."""
    for key, verdict in (("contexts", "useful"), ("retrieved", "relevant")):
        items = details.get(key) if isinstance(details, dict) else None
        if isinstance(items, list) and items and all(isinstance(item, dict) and item.get(verdict) in (0, 1) for item in items):
            return [rank for rank, item in enumerate(items, 1) if item[verdict]]
    return None


def _ranks(ranks: list[int]) -> str:
    return f"rank{'s' if len(ranks) > 1 else ''} {', '.join(map(str, ranks[:10]))}{' ...' if len(ranks) > 10 else ''}" if ranks else "no rank"


def rank_changes(base: dict[str, Any] | None, candidate: dict[str, Any] | None, scores: tuple[float, float] | None) -> list[Change]:
    """The ranks of the relevant contexts, where an average-precision score's changed; and, when the
    score fell though no relevant context was lost, why: average precision counts rank, so a
    relevant context found below an irrelevant one (a gold context recovered at rank 3) adds less
    than it weighs at the top, and lowers the average."""
    before, after = _relevant_ranks(base), _relevant_ranks(candidate)
    if before is None or after is None or before == after:
        return []
    text = f"relevant contexts at {_ranks(before)} in the base, at {_ranks(after)} in the candidate"
    counts_rank = scores is not None and scores[1] < scores[0] and len(after) >= len(before)
    if counts_rank:
        text += (
            "; the score fell though no relevant context was lost: average precision counts rank, so a relevant context"
            " ranked below an irrelevant one adds less than one at the top and lowers the average"
        )
    return [Change("relevant_ranks", text, {"base_ranks": before, "candidate_ranks": after, "rank_lowered_score": counts_rank})]


def _strings(details: dict[str, Any] | None, key: str) -> list[str]:
    items = details.get(key) if isinstance(details, dict) else None
    return [str(item) for item in items if isinstance(item, (str, int))] if isinstance(items, list) else []


def listed_changes(base: dict[str, Any] | None, candidate: dict[str, Any] | None) -> list[Change]:
    """Units the relevance metric selected now and not then (and back), ids found now and not then
    (context_entity_recall's reference entities the contexts named, called so)."""
    entities = any(isinstance(d, dict) and "reference_entities" in d for d in (base, candidate))
    what = "reference entity the contexts name" if entities else "found"
    found = []
    for key, kind, words in (("selected_sentences", "selected_in_one_run", "unit selected in the {side} only"), ("found", "found_in_one_run", what + " in the {side} only")):
        before, after = _strings(base, key), _strings(candidate, key)
        for side, mine, other in (("candidate", after, before), ("base", before, after)):
            found += [Change(kind, f"{words.format(side=side)}: {quote(text)}", {"item": short(text), "side": side}) for text in mine if text not in other]
    return found


def _first_difference(one: str, two: str) -> int:
    index = 0
    for a, b in zip(one, two):
        if a != b:
            break
        index += 1
    return index


def response_change(base: ScoredSample | None, candidate: ScoredSample | None) -> list[Change]:
    """The response, where the two inputs give another one: each quoted from a little before
    their first difference (two long answers that differ at the end show where they do)."""
    if base is None or candidate is None or base.response is None or candidate.response is None or base.response == candidate.response:
        return []
    at = _first_difference(base.response, candidate.response)
    start = max(0, at - BEFORE_DIFFERENCE)
    start = base.response.rfind(" ", 0, start + 1) + 1 if start else 0  # from a word's start
    lead = "..." if start else ""
    one, two = (short(lead + text[start:]) for text in (base.response, candidate.response))
    where = f" from character {at + 1}" if start else ""
    return [Change(
        "response_changed", f"response changed{where}: {quote(one)} in the base, {quote(two)} in the candidate",
        {"first_difference": at, "base": one, "candidate": two},
    )]


def context_changes(base: ScoredSample | None, candidate: ScoredSample | None) -> list[Change]:
    """The retrieved contexts that entered or left, with their rank (from the recorded inputs)."""
    if base is None or candidate is None:
        return []
    entered = [Change("context_entered", f"context entered at rank {rank}: {quote(text)}", {"rank": rank, "context": short(text)}) for rank, text in enumerate(candidate.contexts, 1) if text not in base.contexts]
    left = [Change("context_left", f"context left (rank {rank} in the base): {quote(text)}", {"base_rank": rank, "context": short(text)}) for rank, text in enumerate(base.contexts, 1) if text not in candidate.contexts]
    if not entered and not left and base.contexts != candidate.contexts:
        entered.append(Change("contexts_reordered", "the same contexts in another order"))
    return entered + left


def what_changed(details: Sequence[dict[str, Any] | None], samples: Sequence[ScoredSample | None], scores: tuple[float, float] | None = None) -> tuple[Change, ...]:
    """Everything that changed in one sample for one metric: `details`, `samples` and `scores` are (base, candidate)."""
    found = context_changes(samples[0], samples[1]) + response_change(samples[0], samples[1]) + rank_changes(details[0], details[1], scores)
    found += figure_changes(details[0], details[1]) + statement_changes(details[0], details[1]) + noise_changes(details[0], details[1]) + listed_changes(details[0], details[1])
    found += [Change(kind, text, fields) for kind, text, fields in relevant_id_moves(details[0], details[1])]
    if len(found) > MAX_CHANGES:
        found = [*found[:MAX_CHANGES], Change("more", f"... and {len(found) - MAX_CHANGES} more changes", {"count": len(found) - MAX_CHANGES})]
    return tuple(found)
