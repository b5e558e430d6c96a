"""Put one grader's statement feature beside another's, row by row, from two dumps of the same rows.

Rule 21 (docs/experiments.md) asks whether a second judge's opinion adds to the judge rule's
statement table: `verifier_accuracy.py --grader judge --dump-rows` run once with the default judge
and once with `--model qwen2.5-coder-0.5b` on the same rows gives two dumps in the same order; this
copies the second's `judge` log-odds into the first as `--as` (judge_small), refusing dumps whose
rows disagree (label, source or the evidence features that need no model), so lab/statement_table.py
can fit a table over both judges.

    python lab/join_dumps.py --into j_claims.jsonl --take s_claims.jsonl --as judge_small --out m_claims.jsonl
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SAME_ROW = ("label", "source", "coverage", "best_coverage")  # what both dumps read without a model


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def joined(into: Sequence[dict[str, Any]], take: Sequence[dict[str, Any]], feature: str, name: str) -> list[dict[str, Any]]:
    """`into`'s rows, each with `take`'s `feature` of the same row added as `name`."""
    if len(into) != len(take):
        raise SystemExit(f"the dumps hold {len(into)} and {len(take)} rows: not the same rows")
    for number, (first, second) in enumerate(zip(into, take), start=1):
        differing = [key for key in SAME_ROW if first.get(key) != second.get(key)]
        if differing:
            raise SystemExit(f"row {number}: {', '.join(differing)} differ: not the same rows")
    return [{**first, name: second[feature]} for first, second in zip(into, take)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--into", type=Path, required=True, help="the dump that keeps its features")
    parser.add_argument("--take", type=Path, required=True, help="the dump of the same rows whose feature is added")
    parser.add_argument("--feature", default="judge", help="the feature taken (default: judge)")
    parser.add_argument("--as", dest="name", required=True, help="its name in the joined rows")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    rows = joined(read_rows(args.into), read_rows(args.take), args.feature, args.name)
    args.out.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    print(f"{args.out}: {len(rows)} rows, {args.feature} of {args.take} as {args.name}")


if __name__ == "__main__":
    main()
