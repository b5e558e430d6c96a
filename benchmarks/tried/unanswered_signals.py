"""Can signals of the whole sample tell context_relevance that nothing answers?

Tried on 2026-11-25 and not shipped (README, "Judge accuracy"). The hand-written case r10 ("What
is the population of Canada?" beside Canada's capital and provinces) still selects two sentences:
the contexts name the subject, so every unit looks on topic. Each variant adds one feature, the
same for every unit of a sample, to the shipped relevance features, refitted and 10-fold
cross-validated by question exactly as benchmarks/explore_relevance.py does it, from the cached
answers (no model; run accuracy.py --task relevance,squad,plain with the same --limit first):

- no_answer_unit: no unit holds the judge's short answer (it said "none", or what it said is in
  no sentence);
- unfocused: no unit mentions any of the question's words beyond the contexts' subjects;
- nothing_found: both at once.

    python benchmarks/tried/unanswered_signals.py --limit relevance=60,squad=80
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import accuracy  # noqa: E402
import explore_relevance  # noqa: E402

from localeval.fitting import UNANSWERABLE_WEIGHT  # noqa: E402


def _none_hold(features: list[Mapping[str, float]], name: str) -> bool:
    return max((f[name] for f in features), default=0.0) == 0.0


SIGNALS: dict[str, Callable[[list[Mapping[str, float]]], bool]] = {
    "no_answer_unit": lambda fs: _none_hold(fs, "judge_answer"),
    "unfocused": lambda fs: _none_hold(fs, "focus_vs_best"),
    "nothing_found": lambda fs: _none_hold(fs, "judge_answer") and _none_hold(fs, "focus_vs_best"),
}


def add_signals(records: Iterable[dict[str, Any]]) -> None:
    """Give every unit of each record the sample's signals (1 or 0)."""
    for record in records:
        values = {name: float(signal(record["features"])) for name, signal in SIGNALS.items()}
        for unit in record["features"]:
            unit.update(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=accuracy._limits, default={"relevance": 60, "squad": 80}, help="as accuracy.py's: relevance=N,squad=N")
    args = parser.parse_args()
    judge = explore_relevance.cached_judge()
    records, plain = explore_relevance.dev_records(judge, args.limit.get), accuracy.plain_relevance_records(judge)
    add_signals(records)
    add_signals(plain)
    for name in SIGNALS:
        fired = Counter(r["shape"] for r in records if r["features"] and r["features"][0][name])
        print(f"{name} fires on {sum(fired.values())} of {len(records)} records: {dict(sorted(fired.items()))}")
    for name in ("shipped", *SIGNALS):
        features = accuracy.RELEVANCE_FEATURES + ([name] if name in SIGNALS else [])
        right = explore_relevance.plain_right(records, plain, features, UNANSWERABLE_WEIGHT)
        print(f"{name:<15} {explore_relevance.figures(records, features, UNANSWERABLE_WEIGHT)}   plain {right} of {len(plain)}", flush=True)


if __name__ == "__main__":
    main()
