"""Claim decomposition for statement verdicts (issue 19, item 4): min over a statement's parts.

MiniCheck and AlignScore judge a long claim by its parts: the claim is supported only if
every part is, each part read against its own best chunk (max over chunks). This script
measures that design on the statement sets of benchmarks/accuracy.py, with localeval's
own code: a statement of at least --min-words words is split into parts by the judge
(the prompt `context_recall --option statements=claims` uses, on the statement alone),
each part is judged as a statement of its own (`score_statements`: its best chunk, the
next under the usual rule), and the statement gets features

- parts_judge: the lowest judge log-odds over its parts (the statement's own where it
  was not split), and parts_coverage: the lowest best-sentence coverage over its parts;

then the combinations below are fitted on the four sets at once and cross-validated
exactly as accuracy.py does (10 folds by claim or summary, each set and class weighing
the same). Judge answers are cached with accuracy.py's (same file), so a rerun needs no
model; costs are those measured when each answer was first asked.

    python benchmarks/tried/claim_parts.py --limit attribution=150,recall=40,vitaminc=240,fever=120
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import accuracy  # noqa: E402
from judge_cache import CachedJudge  # noqa: E402

from localeval.judge import load_judge  # noqa: E402
from localeval.judge.prompts import claims_messages  # noqa: E402
from localeval.metrics.recall import Claims  # noqa: E402
from localeval.models import CATALOG, DEFAULT_MODEL, resolve_model  # noqa: E402
from localeval.samples import Sample  # noqa: E402

TASKS = ("attribution", "recall", "vitaminc", "fever")
COMBINATIONS = {
    "shipped features (judge, best_coverage)": ["judge", "best_coverage"],
    "+ parts_judge": ["judge", "best_coverage", "parts_judge"],
    "+ parts_judge, parts_coverage": ["judge", "best_coverage", "parts_judge", "parts_coverage"],
    "parts_judge, best_coverage": ["parts_judge", "best_coverage"],
    "parts_judge, parts_coverage": ["parts_judge", "parts_coverage"],
}


class Parts:
    """accuracy.statement_rows' hook: parts_judge and parts_coverage per statement, what the
    splits and the parts' reads cost per sample, and each split statement's parts (--show)."""

    def __init__(self, judge: CachedJudge, min_words: int) -> None:
        self.judge = judge
        self.min_words = min_words
        self.metric = accuracy.recall_metric()
        self.extras: list[dict[str, float]] = []
        self.splits: list[tuple[str, list[str], Mapping[str, Any]]] = []  # statement, parts, its features

    def __call__(self, sample: Sample, statements: Sequence[str], verdicts: Sequence[Mapping[str, Any]]) -> list[dict[str, float]]:
        extra = {"calls": 0.0, "prompt_evaluated": 0.0, "completion_tokens": 0.0, "seconds": 0.0, "split": 0.0, "parts": 0.0}
        self.extras.append(extra)
        added = []
        for statement, verdict in zip(statements, verdicts):
            if len(statement.split()) < self.min_words:
                added.append({"parts_judge": verdict["features"]["judge"], "parts_coverage": verdict["features"]["best_coverage"]})
                continue
            before = self.judge.seconds
            answer, usage = self.judge.ask(claims_messages(sample.user_input or "", statement), Claims)
            parts = [c.strip() for c in answer.claims if c.strip()] or [statement]
            split = self.metric.score_statements(sample, parts, self.judge)
            part_features = [v["features"] for v in split.details["statements"]]
            added.append({"parts_judge": min(f["judge"] for f in part_features), "parts_coverage": min(f["best_coverage"] for f in part_features)})
            extra["calls"] += 1 + (split.usage or {}).get("calls", 0)
            extra["prompt_evaluated"] += usage.prompt_evaluated + (split.usage or {}).get("prompt_evaluated", 0)
            extra["completion_tokens"] += usage.completion_tokens
            extra["seconds"] += self.judge.seconds - before
            extra["split"] += 1
            extra["parts"] += len(parts)
            if len(parts) > 1:
                self.splits.append((statement, parts, {**verdict["features"], **added[-1]}))
        return added


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=accuracy._limits, default={}, help="rows per task: TASK=N,...")
    parser.add_argument("--task", default=",".join(TASKS))
    parser.add_argument("--min-words", type=int, default=15, help="split statements of at least this many words")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--show", type=int, default=0, help="print this many split statements with their parts")
    args = parser.parse_args()
    path, catalog_name = resolve_model(args.model)
    shipped = CATALOG[catalog_name].calibration if catalog_name else {}
    judge = CachedJudge(accuracy.CACHE / path.name / "answers.jsonl", lambda: load_judge(str(path)), shipped)
    tasks, hooks = {}, {}
    for task in args.task.split(","):
        hooks[task] = Parts(judge, args.min_words)
        tasks[task] = accuracy.statement_rows(judge, task, args.limit.get(task), 0, hooks[task])
    judge.close()
    for task, records in tasks.items():
        extras = hooks[task].extras
        split = sum(e["split"] for e in extras)
        print(f"{task}: {len(records)} statements, {split:.0f} split into {sum(e['parts'] for e in extras) / max(split, 1):.1f} parts on average; "
              f"extra per sample: {statistics.fmean(e['calls'] for e in extras):.2f} calls, {statistics.fmean(e['prompt_evaluated'] for e in extras):.0f} prompt tokens, "
              f"{statistics.fmean(e['completion_tokens'] for e in extras):.0f} generated, {statistics.fmean(e['seconds'] for e in extras):.1f} judge s")
    shown = [(task, split) for task, hook in hooks.items() for split in hook.splits][: args.show]
    for task, (statement, parts, features) in shown:
        print(f"\n[{task}] {statement}\n  " + "\n  ".join(parts) + f"\n  judge {features['judge']:.2f} parts_judge {features['parts_judge']:.2f}")
    accuracy.print_combinations(tasks, COMBINATIONS)


if __name__ == "__main__":
    main()
