"""Does `--verifier` find a two-hop question's second sentence if it reads it beside the first?

On HotpotQA the verifier ranks the first hop's sentence near the top, and the second hop's far
down (the question names the bridge entity only through the first hop). This reads every unit
of the other contexts a second time with the sample's best unit beside the question (variant
"question": the question followed by that unit; variant "context": the unit's context preceded by
that unit) and scores a unit max(first logit, second logit + b). b, the passage weight and the cut
are chosen on four folds of the validation questions and scored on the fifth (tune_cut.py's figure:
the mean over shapes of F1 where something answers and of the "insufficient" share where nothing
does), beside the same out-of-fold choice without the second read. Validation rows only.

    python lab/verifier_second_hop.py [--gate]

`--gate`: the second read counts only in a sample where the first read selected something at the
cut (without it, a second read beside the best of unrelated paragraphs lifts a bridge that is not
there, and "insufficient information" falls). The verifier's reads are cached under lab/.cache/.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))  # the training scripts' helpers
from splits import refuse_sealed  # noqa: E402
from tune_cut import figures, unit_logits, unit_scores  # noqa: E402

from localeval.calibration.fitting import folds_by_group  # noqa: E402
from localeval.data.text import split_sentences  # noqa: E402
from localeval.verifier import load_verifier  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[1] / "training" / ".cache" / "split" / "validation_samples.jsonl"
OFFSETS = (None, -3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0)  # b; None: no second read
PASSAGE_WEIGHTS = (0.0, 0.5)
CUTS = [round(c * 0.25, 2) for c in range(0, 33)]
FOLDS = 5
CACHE = Path(__file__).resolve().parent / ".cache" / "second_hop.json"


def second_reads(samples: Sequence[dict[str, Any]], first: Sequence[Sequence[tuple[float, int]]], variant: str) -> list[list[float | None]]:
    """Each unit's logit read beside the sample's best unit (None for the best unit's own context's units)."""
    verifier = load_verifier()
    keys: list[list[tuple[str, str, str] | None]] = []
    for sample, units in zip(samples, first):
        texts = [(unit, p) for p, context in enumerate(sample["contexts"]) for unit in split_sentences(context)]
        top = max(range(len(units)), key=lambda i: units[i][0])
        best, best_passage = texts[top]
        row: list[tuple[str, str, str] | None] = []
        for unit, p in texts:
            if p == best_passage:
                row.append(None)
            elif variant == "question":
                row.append((f"{sample['question']} {best}", unit, sample["contexts"][p]))
            else:
                row.append((sample["question"], unit, f"{best} {sample['contexts'][p]}"))
        keys.append(row)
    order = sorted({k for row in keys for k in row if k is not None})
    value = dict(zip(order, verifier.logits("relevance", order)))
    return [[value[k] if k is not None else None for k in row] for row in keys]


def best_of_context(first: Sequence[tuple[float, int]], second: Sequence[float | None], contexts: str) -> list[float | None]:
    """The second reads kept only for each context's best unit by them ("each"), or only for the
    best unit of the one context they favour most ("one"): read beside the first hop, every
    sentence of the bridged paragraph scores high, and only one of them is the second hop."""
    read = {i: value for i, value in enumerate(second) if value is not None}
    best: dict[int, int] = {}  # context -> its unit with the highest second read
    for i, value in read.items():
        context = first[i][1]
        if context not in best or value > read[best[context]]:
            best[context] = i
    if contexts == "each":
        keep = set(best.values())
    else:
        keep = {max(best.values(), key=read.__getitem__)} if best else set()
    return [value if i in keep else None for i, value in enumerate(second)]


def scores(first: Sequence[tuple[float, int]], second: Sequence[float | None], offset: float | None, weight: float) -> list[float]:
    combined = [(v if offset is None or s is None else max(v, s + offset), p) for (v, p), s in zip(first, second)]
    return list(unit_scores(combined, weight))


def gated(first: Sequence[tuple[float, int]], second: Sequence[float | None], offset: float | None, weight: float) -> tuple[list[float], list[float]]:
    """A unit's scores without and with the second read."""
    return scores(first, [None] * len(first), None, weight), scores(first, second, offset, weight)


def pick(pair: tuple[list[float], list[float]], cut: float, gate: bool) -> list[float]:
    """With `gate`, the second read counts only where the first found something (its best unit at
    the cut): where nothing answers, a second read beside an unrelated best unit invents a bridge."""
    alone, read = pair
    return alone if gate and max(alone, default=-math.inf) < cut else read


def out_of_fold(samples: list[dict[str, Any]], first: list[list[tuple[float, int]]], second: list[list[float | None]], offsets: Sequence[float | None], gate: bool) -> dict[str, float]:
    """Per shape, each fold scored by the (b, passage weight, cut) best on the other folds."""
    fold_of = folds_by_group([s["group"] for s in samples], FOLDS)
    chosen_scores: list[list[float]] = [[] for _ in samples]
    chosen_cut: list[float] = [0.0] * len(samples)
    for fold in range(FOLDS):
        train = [i for i, f in enumerate(fold_of) if f != fold]
        best: tuple[float, float | None, float, float] = (-1.0, None, 0.0, 0.0)
        for offset in offsets:
            for weight in PASSAGE_WEIGHTS:
                train_scores = [gated(first[i], second[i], offset, weight) for i in train]
                for cut in CUTS:
                    value = statistics.fmean(figures([samples[i] for i in train], [pick(pair, cut, gate) for pair in train_scores], cut).values())
                    if value > best[0]:
                        best = (value, offset, weight, cut)
        print(f"  fold {fold}: b {best[1]}, passage weight {best[2]}, cut {best[3]} (training folds {best[0]:.3f})")
        for i, f in enumerate(fold_of):
            if f == fold:
                chosen_scores[i], chosen_cut[i] = pick(gated(first[i], second[i], best[1], best[2]), best[3], gate), best[3]
    by_shape: dict[str, list[float]] = {}
    for sample, values, cut in zip(samples, chosen_scores, chosen_cut):
        for shape, value in figures([sample], [values], cut).items():
            by_shape.setdefault(shape, []).append(value)
    return {shape: statistics.fmean(values) for shape, values in sorted(by_shape.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gate", action="store_true", help="the second read counts only where the first selected something")
    args = parser.parse_args()
    refuse_sealed(SAMPLES)
    samples = [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]
    cached = json.loads(CACHE.read_text()) if CACHE.exists() else {}
    first = [[tuple(u) for u in units] for units in cached["first"]] if "first" in cached else unit_logits(load_verifier(), samples)
    print("without a second read:")
    cells = out_of_fold(samples, first, [[None] * len(u) for u in first], [None], False)
    print(f"  mean {statistics.fmean(cells.values()):.3f} " + ", ".join(f"{k} {v:.3f}" for k, v in cells.items()))
    for variant in ("question", "context"):
        second = cached[variant] if variant in cached else second_reads(samples, first, variant)
        cached.update({"first": first, variant: second})
        for kept in ("all", "each", "one"):
            kept_reads = second if kept == "all" else [best_of_context(f, s, kept) for f, s in zip(first, second)]
            print(f"second read, variant {variant}, kept for {kept}:")
            cells = out_of_fold(samples, first, kept_reads, OFFSETS, args.gate)
            print(f"  mean {statistics.fmean(cells.values()):.3f} " + ", ".join(f"{k} {v:.3f}" for k, v in cells.items()))
    CACHE.parent.mkdir(exist_ok=True)
    CACHE.write_text(json.dumps(cached))


if __name__ == "__main__":
    main()
