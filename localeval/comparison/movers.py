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


def _statements(details: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    items = details.get("statements") if isinstance(details, dict) else None
    if not isinstance(items, list):
        return {}
    return {item["statement"]: item for item in items if isinstance(item, dict) and isinstance(item.get("statement"), str) and item.get("attributed") in (0, 1)}


def _evidence(item: dict[str, Any]) -> str:
    """A verdict's evidence as the run recorded it: its reason, else the evidence sentences' indices."""
    reason = item.get("reason")
    if isinstance(reason, str) and reason:
        return _quote(reason)
    evidence = item.get("evidence")
    if isinstance(evidence, list) and evidence:
        return "context sentences " + ", ".join(str(e) for e in evidence[:5])
    return "no evidence recorded"


def statement_changes(base: dict[str, Any] | None, candidate: dict[str, Any] | None) -> list[str]:
    """The statements whose verdict flipped (both runs' evidence), and those only one run judged."""
    before, after = _statements(base), _statements(candidate)
    found = []
    for text, item in after.items():
        old = before.get(text)
        if old is not None and old["attributed"] != item["attributed"]:
            was, now = ("attributed", "not attributed") if old["attributed"] else ("not attributed", "attributed")
            found.append(f"statement {_quote(text)}: {was} in the base ({_evidence(old)}), {now} in the candidate ({_evidence(item)})")
    found += [f"statement judged only in the candidate ({'attributed' if item['attributed'] else 'not attributed'}): {_quote(t)}" for t, item in after.items() if t not in before]
    found += [f"statement judged only in the base ({'attributed' if item['attributed'] else 'not attributed'}): {_quote(t)}" for t, item in before.items() if t not in after]
    return found


def _strings(details: dict[str, Any] | None, key: str) -> list[str]:
    items = details.get(key) if isinstance(details, dict) else None
    return [str(item) for item in items if isinstance(item, (str, int))] if isinstance(items, list) else []


def listed_changes(base: dict[str, Any] | None, candidate: dict[str, Any] | None) -> list[str]:
    """Units the relevance metric selected now and not then (and back), ids found now and not then."""
    found = []
    for key, now, then in (("selected_sentences", "unit selected in the candidate only", "unit selected in the base only"), ("found", "found in the candidate only", "found in the base only")):
        before, after = _strings(base, key), _strings(candidate, key)
        found += [f"{now}: {_quote(text)}" for text in after if text not in before]
        found += [f"{then}: {_quote(text)}" for text in before if text not in after]
    return found


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
    found = context_changes(samples[0], samples[1]) + statement_changes(details[0], details[1]) + listed_changes(details[0], details[1])
    if len(found) > MAX_CHANGES:
        found = [*found[:MAX_CHANGES], f"... and {len(found) - MAX_CHANGES} more changes"]
    return tuple(found)
