"""Can one statement table serve news summaries and claims if it knows how long the context is?
From the cached judge answers (no model when the cache holds every prompt).

The judge rule's one statement table (catalog `calibration.attribution`) is lenient on QAGS news
summaries and strict on SciFact / WiCE claims (docs/measured.md). This refits and cross-validates
the table on the rows `benchmarks/write_catalog.py` fitted it on (attribution_dev's 150, recall_dev's
60 summaries, unshifted: never a row of the dev half), with and without log(1 + the context's sentences)
as a feature, and prints each source's share attributed beside the people's. The answer
(docs/experiments.md, 2026-11-27): the feature helps, through WiCE's long web pages, by making a
verdict more lenient the longer the context: not shipped.

    LOCALEVAL_DEV_DATA=../shared/data python lab/statement_context_length.py
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # the benchmarks' libraries: no package holds them
import accuracy  # noqa: E402
from judge_cache import CACHE, CachedJudge  # noqa: E402

from localeval.calibration.fitting import balancing_weights, cross_validated, fit_logistic  # noqa: E402
from localeval.data.text import split_sentences  # noqa: E402
from localeval.judge import load_judge  # noqa: E402
from localeval.models.store import CATALOG, resolve_model  # noqa: E402

FIT_ROWS = {"attribution": 150, "recall": 60}  # write_catalog's rows for the shipped table (docs/measured.md)
COMBINATIONS = {
    "judge, best_coverage (shipped)": ["judge", "best_coverage"],
    "+ context length": ["judge", "best_coverage", "context_length"],
}


def statement_records(judge: CachedJudge) -> list[dict[str, Any]]:
    """One record per statement of the fit rows: label, task, source, group, features (with context_length)."""
    records = []
    for task, limit in FIT_ROWS.items():
        samples = {row_id: sample for row_id, _, sample, _, _ in accuracy.statement_items(task, limit, 0)}
        for row in accuracy.statement_rows(judge, task, limit, 0):
            if "error" in row:
                continue
            sentences = sum(len(split_sentences(context)) for context in samples[row["group"]].retrieved_contexts)
            records.append({**row, "task": task, "features": {**row["features"], "context_length": math.log1p(sentences)}})
    return records


def report(records: Sequence[dict[str, Any]], chosen: list[str]) -> None:
    """Cross-validated balanced accuracy per task, the attributed share per source, and the fit on all rows."""
    labels = [r["label"] for r in records]
    weights = balancing_weights(labels, [r["task"] for r in records])
    features = [r["features"] for r in records]

    def fitted(train: list[int]) -> Any:
        model = fit_logistic([features[i] for i in train], [labels[i] for i in train], [weights[i] for i in train], chosen)
        return lambda test: model.probabilities([features[i] for i in test])

    predicted = cross_validated(features, [f"{r['task']}/{r['group']}" for r in records], fitted)
    for task in FIT_ROWS:
        picked = [(r, p) for r, p in zip(records, predicted) if r["task"] == task]
        figures = accuracy.verdict_figures([r for r, _ in picked], [p for _, p in picked], 0.5)
        print(f"  {task}: balanced accuracy {figures['balanced_accuracy']:.3f}, AUC {figures['auc']:.3f}")
        for source in sorted({r["source"] for r, _ in picked}):
            mine = [(r["label"], p) for r, p in picked if r["source"] == source]
            print(f"    {source}: attributed {statistics.fmean(p >= 0.5 for _, p in mine):.3f}, people {statistics.fmean(y for y, _ in mine):.3f} ({len(mine)})")
    print(f"  fitted on all rows: {fit_logistic(features, labels, weights, chosen).table()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2, help="for the judge, loaded only if a prompt is not cached")
    args = parser.parse_args()
    path, name = resolve_model(None)
    shipped = CATALOG[name].calibration if name else {}
    judge = CachedJudge(CACHE / path.name / "answers.jsonl", lambda: load_judge(str(path), threads=args.threads), shipped)
    records = statement_records(judge)
    judge.close()
    print(f"{len(records)} statements; judge cache misses: {judge.misses}")
    for title, chosen in COMBINATIONS.items():
        print(f"{title} (10 folds by row):")
        report(records, chosen)


if __name__ == "__main__":
    main()
