"""Decision rules for the verifier's relevance selection, on validation questions only (no training row, no benchmark row).

The shipped rule selects the units whose logit reaches one cut (1.70, chosen on HotpotQA
validation questions by training/tune_cut.py). This asks whether another rule does better once
SQuAD's validation paragraphs (the fit half's validation groups of prepare_verifier_data.py) count
too: the cut alone, units within a margin of the sample's best unit, or the best unit plus every
unit above a cut; each with a floor under which nothing is selected ("insufficient information").
Prints the shipped rule and the three best of each kind, by the mean over shapes.

    python training/explore_rules.py     # about 5 minutes on 2 cores (the verifier reads every unit once)
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "training"))
sys.path.insert(0, str(ROOT))
import json  # noqa: E402

from accuracy import _answer_sentence, read_squad  # noqa: E402
from prepare_verifier_data import _validation  # noqa: E402
from tune_cut import unit_logits  # noqa: E402

from localeval.fitting import selection_f1  # noqa: E402
from localeval.text import split_sentences  # noqa: E402
from localeval.verifier import load_verifier  # noqa: E402

Rule = Callable[[list[float]], set[int]]


def squad_validation() -> list[dict[str, Any]]:
    samples = []
    for row in read_squad(None, held_out=False):
        group = row["id"].removeprefix("squad/")
        if not _validation("squad", group):
            continue
        answer = _answer_sentence(row["context"], row["answer_start"])
        before = len(split_sentences(row["others"][0]))
        samples.append({"shape": "squad 1", "question": row["question"], "contexts": [row["context"]], "required": [answer]})
        samples.append({"shape": "squad 3", "question": row["question"], "contexts": [row["others"][0], row["context"], row["others"][1]], "required": [before + answer]})
        if row["impossible"]:
            samples.append({"shape": "squad 1 without gold", "question": row["impossible"], "contexts": [row["context"]], "required": []})
    return samples


def figures(samples: list[dict[str, Any]], logits: list[list[float]], rule: Rule) -> dict[str, float]:
    by_shape: dict[str, list[float]] = {}
    for sample, values in zip(samples, logits):
        chosen = rule(values) if values else set()
        if sample["required"]:
            by_shape.setdefault(f"F1 {sample['shape']}", []).append(selection_f1(chosen, set(sample["required"]))[2])
        else:
            by_shape.setdefault(f"insufficient {sample['shape']}", []).append(float(not chosen))
    return {shape: statistics.fmean(values) for shape, values in by_shape.items()}


def cut_rule(cut: float) -> Rule:
    return lambda values: {i for i, v in enumerate(values) if v >= cut}


def margin_rule(floor: float, margin: float) -> Rule:
    def select(values: list[float]) -> set[int]:
        best = max(values)
        return set() if best < floor else {i for i, v in enumerate(values) if v >= best - margin}
    return select


def best_plus_rule(floor: float, cut: float) -> Rule:
    def select(values: list[float]) -> set[int]:
        best = max(values)
        return set() if best < floor else {i for i, v in enumerate(values) if v >= cut} | {values.index(best)}
    return select


def show(name: str, found: dict[str, float]) -> None:
    hotpotqa = [v for k, v in found.items() if "squad" not in k]
    squad = [v for k, v in found.items() if "squad" in k]
    cells = ", ".join(f"{k} {v:.2f}" for k, v in sorted(found.items()))
    print(f"{name:32} mean {statistics.fmean(found.values()):.3f} (HotpotQA {statistics.fmean(hotpotqa):.3f}, SQuAD {statistics.fmean(squad):.3f}): {cells}")


def main() -> None:
    hotpotqa = [json.loads(line) for line in (ROOT / "training" / ".cache" / "validation_samples.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    samples = hotpotqa + squad_validation()
    print(f"{len(hotpotqa)} HotpotQA and {len(samples) - len(hotpotqa)} SQuAD validation samples")
    logits = [[value for value, _ in units] for units in unit_logits(load_verifier(), samples)]
    rules: dict[str, Rule] = {f"cut {c / 10:+.1f}": cut_rule(c / 10) for c in range(-20, 40, 2)}
    for floor in (f / 4 for f in range(-8, 16)):
        rules.update({f"margin {m} above {floor:+.2f}": margin_rule(floor, m) for m in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)})
        rules.update({f"best + cut {c / 2:+.1f} above {floor:+.2f}": best_plus_rule(floor, c / 2) for c in range(8) if c / 2 > floor})
    scored = {name: figures(samples, logits, rule) for name, rule in rules.items()}
    show("shipped: cut +1.70", figures(samples, logits, cut_rule(1.70)))
    for kind in ("cut", "margin", "best"):
        for name in sorted((n for n in scored if n.startswith(kind)), key=lambda n: -statistics.fmean(scored[n].values()))[:3]:
            show(name, scored[name])


if __name__ == "__main__":
    main()
