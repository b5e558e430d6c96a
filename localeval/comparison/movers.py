"""What changed in one sample between two runs, in words a pull-request comment can hold.

A person reading why recall dropped wants the statements whose verdict flipped (with the evidence
each run gave), the contexts that entered or left the retrieval, and the units the relevance
metric selected now and not then, without opening two JSON files. Details are untrusted (a
results file from anywhere): each field is read only when it has the shape the built-in metrics
write, and anything else is passed over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from localeval.comparison.inputs import ScoredSample

MAX_CHANGES = 8  # changes listed per sample and metric; the rest are counted
MAX_TEXT = 160  # characters of a statement, context or unit quoted


@dataclass(frozen=True)
class Mover:
    """A sample whose score changed: its id, its line in each file, both scores, and what changed."""

    id: str | int | None
    base_line: int
    candidate_line: int
    base: float
    candidate: float
    changes: tuple[str, ...]

    @property
    def difference(self) -> float:
        return self.candidate - self.base

    def to_json_dict(self) -> dict[str, Any]:
        return {"id": self.id, "base_line": self.base_line, "candidate_line": self.candidate_line, "base": self.base, "candidate": self.candidate, "changes": list(self.changes)}


def _quote(text: Any) -> str:
    text = " ".join(str(text).split())
    return repr(text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "...")


def _statements(details: dict[str, Any] | None, key: str = "statements", verdict: str = "attributed") -> dict[str, dict[str, Any]]:
    """The verdicts listed under `key`, by statement: those whose `verdict` field is 0 or 1."""
    items = details.get(key) if isinstance(details, dict) else None
    if not isinstance(items, list):
        return {}
    return {item["statement"]: item for item in items if isinstance(item, dict) and isinstance(item.get("statement"), str) and item.get(verdict) in (0, 1)}


def _evidence(item: dict[str, Any]) -> str:
    """A verdict's evidence as the run recorded it: its reason, else the evidence sentences' indices."""
    reason = item.get("reason")
    if isinstance(reason, str) and reason:
        return _quote(reason)
    evidence = item.get("evidence")
    if isinstance(evidence, list) and evidence:
        return "context sentences " + ", ".join(str(e) for e in evidence[:5])
    return "no evidence recorded"


# Where the built-in metrics list statement verdicts, and what a statement there is called:
# context_recall and faithfulness under "statements"; factual_correctness and answer_correctness
# under the response's and the reference's lists.
STATEMENT_LISTS = (("statements", "statement"), ("response_statements", "response statement"), ("reference_statements", "reference statement"))


def statement_changes(base: dict[str, Any] | None, candidate: dict[str, Any] | None) -> list[str]:
    """The statements whose verdict flipped (both runs' evidence), and those only one run judged."""
    found = []
    for key, called in STATEMENT_LISTS:
        before, after = _statements(base, key), _statements(candidate, key)
        for text, item in after.items():
            old = before.get(text)
            if old is not None and old["attributed"] != item["attributed"]:
                was, now = ("attributed", "not attributed") if old["attributed"] else ("not attributed", "attributed")
                found.append(f"{called} {_quote(text)}: {was} in the base ({_evidence(old)}), {now} in the candidate ({_evidence(item)})")
        found += [f"{called} judged only in the candidate ({'attributed' if item['attributed'] else 'not attributed'}): {_quote(t)}" for t, item in after.items() if t not in before]
        found += [f"{called} judged only in the base ({'attributed' if item['attributed'] else 'not attributed'}): {_quote(t)}" for t, item in before.items() if t not in after]
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


def noise_changes(base: dict[str, Any] | None, candidate: dict[str, Any] | None) -> list[str]:
    """noise_sensitivity's response statements counted in one run and not the other (each run's
    reading), and those only one run has."""
    before, after = _statements(base, verdict="correct"), _statements(candidate, verdict="correct")
    found = []
    for text, item in after.items():
        old = before.get(text)
        if old is not None and (old.get("counted") == 1) != (item.get("counted") == 1):
            found.append(f"response statement {_quote(text)}: {_noise_state(old)} in the base; {_noise_state(item)} in the candidate")
    found += [f"response statement only in the candidate ({_noise_state(item)}): {_quote(t)}" for t, item in after.items() if t not in before]
    found += [f"response statement only in the base ({_noise_state(item)}): {_quote(t)}" for t, item in before.items() if t not in after]
    return found


# The figures a score is made of (semantic_similarity's cosine; answer_correctness' two parts), by
# the name a reader knows them by.
FIGURES = (("cosine", "cosine similarity"), ("similarity", "similarity"), ("factuality", "factuality"))


def figure_changes(base: dict[str, Any] | None, candidate: dict[str, Any] | None) -> list[str]:
    """The figures a score is made of that moved, each run's value."""
    found = []
    for key, called in FIGURES:
        old, new = (d.get(key) if isinstance(d, dict) else None for d in (base, candidate))
        numbers = [v for v in (old, new) if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v]
        if len(numbers) == 2 and round(numbers[0], 2) != round(numbers[1], 2):
            found.append(f"{called} {numbers[0]:.2f} in the base, {numbers[1]:.2f} in the candidate")
    return found


def _strings(details: dict[str, Any] | None, key: str) -> list[str]:
    items = details.get(key) if isinstance(details, dict) else None
    return [str(item) for item in items if isinstance(item, (str, int))] if isinstance(items, list) else []


def listed_changes(base: dict[str, Any] | None, candidate: dict[str, Any] | None) -> list[str]:
    """Units the relevance metric selected now and not then (and back), ids found now and not then
    (context_entity_recall's reference entities the contexts named, called so)."""
    entities = any(isinstance(d, dict) and "reference_entities" in d for d in (base, candidate))
    what = "reference entity the contexts name" if entities else "found"
    found = []
    for key, now, then in (("selected_sentences", "unit selected in the candidate only", "unit selected in the base only"), ("found", f"{what} in the candidate only", f"{what} in the base only")):
        before, after = _strings(base, key), _strings(candidate, key)
        found += [f"{now}: {_quote(text)}" for text in after if text not in before]
        found += [f"{then}: {_quote(text)}" for text in before if text not in after]
    return found


def response_change(base: ScoredSample | None, candidate: ScoredSample | None) -> list[str]:
    """The response, where the two inputs give another one (each quoted, shortened)."""
    if base is None or candidate is None or base.response is None or candidate.response is None or base.response == candidate.response:
        return []
    return [f"response changed: {_quote(base.response)} in the base, {_quote(candidate.response)} in the candidate"]


def context_changes(base: ScoredSample | None, candidate: ScoredSample | None) -> list[str]:
    """The retrieved contexts that entered or left, with their rank (from the recorded inputs)."""
    if base is None or candidate is None:
        return []
    entered = [f"context entered at rank {rank}: {_quote(text)}" for rank, text in enumerate(candidate.contexts, 1) if text not in base.contexts]
    left = [f"context left (rank {rank} in the base): {_quote(text)}" for rank, text in enumerate(base.contexts, 1) if text not in candidate.contexts]
    if not entered and not left and base.contexts != candidate.contexts:
        entered.append("the same contexts in another order")
    return entered + left


def what_changed(details: Sequence[dict[str, Any] | None], samples: Sequence[ScoredSample | None]) -> tuple[str, ...]:
    """Everything that changed in one sample for one metric: `details` and `samples` are (base, candidate)."""
    found = context_changes(samples[0], samples[1]) + response_change(samples[0], samples[1]) + figure_changes(details[0], details[1])
    found += statement_changes(details[0], details[1]) + noise_changes(details[0], details[1]) + listed_changes(details[0], details[1])
    if len(found) > MAX_CHANGES:
        found = [*found[:MAX_CHANGES], f"... and {len(found) - MAX_CHANGES} more changes"]
    return tuple(found)
