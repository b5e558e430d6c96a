"""An earlier release's judge metrics on this release's plain cases and relevance shapes, from
the cached judge answers (no model: the prompts they share are already answered).

    git worktree add /tmp/old e298b7d
    python benchmarks/accuracy.py --task relevance,plain --limit 30     # fills the cache
    python benchmarks/compare_release.py /tmp/old --limit 30

It imports the metrics of the checkout at OLD (with its catalog's calibrations) and scores
each plain case (right or wrong, as `accuracy.py --task plain`) and each HotpotQA shape
(F1, or the "insufficient" share where nothing answers) with that release's shipped rule.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "shared" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old", type=Path, help="a checkout of the earlier release")
    parser.add_argument("--limit", type=int, default=30)
    args = parser.parse_args()
    sys.path[:0] = [str(args.old), str(HERE)]
    from judge_cache import CachedJudge

    from localeval.data.samples import Sample
    from localeval.data.text import split_sentences
    from localeval.metrics import create_metric
    from localeval.models.store import CATALOG, resolve_model

    path, name = resolve_model(None)

    def miss() -> None:
        raise SystemExit("a judge answer is not cached: run benchmarks/accuracy.py first (see the docstring)")

    judge = CachedJudge(HERE / ".cache" / "judge" / path.name / "answers.jsonl", miss, CATALOG[name].calibration if name else {})
    relevance, recall = create_metric("context_relevance"), create_metric("context_recall")
    right: dict[str, list[bool]] = {"relevance": [], "attribution": []}
    for line in (HERE / "data" / "plain_cases.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        sample = Sample(user_input=row["user_input"], retrieved_contexts=row["retrieved_contexts"])
        if row["kind"] == "relevance":
            right["relevance"].append(set(relevance.score_batch([sample], judge)[0].details["selected_sentences"]) == set(row["required"]))
        else:
            verdict = recall.score_statements(sample, [row["statement"]], judge).details["statements"][0]
            right["attribution"].append(verdict["attributed"] == row["label"])
    print("plain cases: " + ", ".join(f"{kind} {sum(oks)} of {len(oks)} right" for kind, oks in right.items()))
    scores: dict[str, list[float]] = {shape: [] for shape in ("10", "3", "1", "10 without gold", "1 without gold")}
    rows = [json.loads(line) for line in open(DATA / "relevance_dev.jsonl", encoding="utf-8")]
    for row in [rows[i * len(rows) // args.limit] for i in range(args.limit)]:  # accuracy.py's evenly spaced rows
        for shape, variants in _shapes(row, split_sentences).items():
            for contexts in variants:
                if not contexts:
                    continue
                selected = set(relevance.score_batch([Sample(user_input=row["user_input"], retrieved_contexts=contexts)], judge)[0].details["selected"])
                units = [s for c in contexts for s in split_sentences(c)]
                gold = {i for i, text in enumerate(units) if any(_same(text, g) for g in row["gold_sentences"])}
                scores[shape].append(float(not selected) if "without" in shape else _f1(selected, gold))
    print("relevance, shipped rule: " + "   ".join(f"[{shape}] {'insufficient' if 'without' in shape else 'F1'} {statistics.fmean(v):.3f}" for shape, v in scores.items()))


# accuracy.py's shapes, sentence matching and F1, written out here: the earlier release's
# package, imported instead of this one, has not the modules accuracy.py imports.
def _same(a: str, b: str) -> bool:
    a, b = a.strip(), b.strip()
    return a == b or (len(a) > 20 and a in b) or (len(b) > 20 and b in a)


def _f1(selected: set[int], gold: set[int]) -> float:
    hits = len(selected & gold)
    return 2 * hits / (len(selected) + len(gold)) if hits else 0.0


def _shapes(row: dict, split: Callable[[str], list[str]]) -> dict[str, list[list[str]]]:
    contexts = row["retrieved_contexts"]
    gold = [i for i, c in enumerate(contexts) if any(_same(s, g) for s in split(c) for g in row["gold_sentences"])]
    others = [i for i in range(len(contexts)) if i not in gold]
    return {
        "10": [contexts],
        "3": [[contexts[i] for i in sorted([*gold, others[0]])]],
        "1": [[contexts[i]] for i in gold],
        "10 without gold": [[contexts[i] for i in others]],
        "1 without gold": [[contexts[others[0]]]],
    }


if __name__ == "__main__":
    main()
