"""Does the bridge evidence select the second-hop paragraph's opening sentence?

Tried on 2026-11-25 and not shipped (README, "Judge accuracy"). At 10 contexts most of a
two-hop question's gold sentences open their paragraph (87 of 147 on the 60 dev questions), and
the second-hop paragraph's opening names what the best-matching paragraph mentions (the
`bridge` feature, the same for every unit of a paragraph). Each variant adds one unit feature to
the shipped relevance features, from the cached answers (no model; run accuracy.py --task
relevance,squad,plain with the same --limit, and with --shift 1 for the held-out rows, first):

- bridge_opening: `bridge` on opening units (0 elsewhere);
- bridge_vs_best_opening: the same, relative to the sample's highest `bridge`;
- top_bridge_opening: 1 for the opening unit of the paragraph that bridges best;

and, since the judge's passage verdict is what the rule lacks most (explore_relevance.py
--oracle-verdicts), two of that verdict relative to the sample's (over the contexts it reads):

- passage_vs_best: the unit's passage verdict minus the highest (capped log-odds);
- passage_is_best: 1 for the units of the passage with the highest verdict.

Each is cross-validated by question on the dev rows, as explore_relevance.py does, and fitted on
all dev rows and applied to the held-out rows (`--shift 1` of accuracy.py), beside the shipped
features fitted the same way.

    python benchmarks/tried/bridge_features.py --limit relevance=60,squad=80
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import accuracy  # noqa: E402
import explore_relevance  # noqa: E402

from localeval.fitting import UNANSWERABLE_WEIGHT  # noqa: E402
from localeval.metrics import relevance  # noqa: E402

# Each variant from a unit and the sample's highest `bridge` and highest passage verdict (over the contexts read).
VARIANTS: dict[str, Callable[[Mapping[str, float], float, float], float]] = {
    "bridge_opening": lambda unit, top, verdict: unit["bridge"] * unit["opens_passage"],
    "bridge_vs_best_opening": lambda unit, top, verdict: (unit["bridge"] / top if top > 0 else 0.0) * unit["opens_passage"],
    "top_bridge_opening": lambda unit, top, verdict: float(unit["opens_passage"] == 1.0 and top > 0 and unit["bridge"] == top),
    "passage_vs_best": lambda unit, top, verdict: unit["judge_passage"] - verdict,
    "passage_is_best": lambda unit, top, verdict: float(unit["judge_passage"] == verdict),
}


def add_variants(records: Iterable[dict[str, Any]]) -> None:
    for record in records:
        top = max((unit["bridge"] for unit in record["features"]), default=0.0)
        verdict = max((unit["judge_passage"] for unit in record["features"] if unit["judge_passage"] != relevance.UNREAD_VERDICT), default=0.0)
        for unit in record["features"]:
            unit.update({name: variant(unit, top, verdict) for name, variant in VARIANTS.items()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=accuracy._limits, default={"relevance": 60, "squad": 80}, help="as accuracy.py's: relevance=N,squad=N")
    args = parser.parse_args()
    judge = explore_relevance.cached_judge()
    records, plain = explore_relevance.dev_records(judge, args.limit.get), accuracy.plain_relevance_records(judge)
    held = accuracy.relevance_rows(judge, args.limit["relevance"], 1) + accuracy.squad_rows(judge, args.limit["squad"], 1)
    for rows in (records, plain, held):
        add_variants(rows)
    for name in ("shipped", *VARIANTS):
        features = accuracy.RELEVANCE_FEATURES + ([name] if name in VARIANTS else [])
        right = explore_relevance.plain_right(records, plain, features, UNANSWERABLE_WEIGHT)
        print(f"{name:<23} cross-validated {explore_relevance.figures(records, features, UNANSWERABLE_WEIGHT)}   plain {right} of {len(plain)}")
        print(f"{'':<23} held out        {explore_relevance.held_out(records, held, features)}", flush=True)


if __name__ == "__main__":
    main()
