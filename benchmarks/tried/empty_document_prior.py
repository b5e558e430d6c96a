"""Does the judge say Yes without the document? A content-free prior for statement verdicts (issue 19).

"Calibrate before use" (Zhao et al. 2021): a small model's answer carries a bias of its own,
measurable by asking the same question with the evidence replaced by a content-free
input. For attribution the bias is per statement: a 1.5B judge says Yes to what it believes
true whatever the document says. This script asks context_recall's own verdict prompt (same
system message, worked examples, question and statement) once more per statement with the
document replaced by EMPTY_DOCUMENT, and measures the feature

- judge_prior: the log-odds of Yes on that prompt

beside the shipped features (judge, best_coverage), with the combinations below fitted on the
four statement sets at once and cross-validated exactly as accuracy.py does. The prompts go
through accuracy.py's judge cache, so a rerun needs no model.

    python benchmarks/tried/empty_document_prior.py --limit attribution=150,recall=40,vitaminc=240,fever=120

Cost: one more prompt per statement, the worked examples restored from the judge's snapshot of
the shared head: about the statement's tokens plus 30.

Measured 2026-11-25 (default judge, same rows as accuracy.py's statement table): not shipped. The
judge says No to the empty document whatever the statement (median log-odds: claims -1.84
supported / -1.87 unsupported, QAGS -1.74 / -1.71). Balanced accuracy / AUC, claims / QAGS /
VitaminC / FEVER: shipped features 0.700 / 0.792, 0.767 / 0.849, 0.633 / 0.742, 0.784 / 0.877;
+ judge_prior 0.693 / 0.793, 0.715 / 0.852, 0.637 / 0.740, 0.809 / 0.887; judge_gain in place of
the judge 0.688 / 0.780, 0.706 / 0.858, 0.629 / 0.733, 0.792 / 0.892. Extra per sample: a claim
56 prompt tokens (0.8 judge s), a QAGS summary 120 (1.6 s).
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
from localeval.judge.prompts import attribution_messages  # noqa: E402
from localeval.metrics.judging import yes_log_odds  # noqa: E402
from localeval.models import CATALOG, DEFAULT_MODEL, resolve_model  # noqa: E402
from localeval.samples import Sample  # noqa: E402

TASKS = ("attribution", "recall", "vitaminc", "fever")
EMPTY_DOCUMENT = "(no document)"
COMBINATIONS = {
    "shipped features (judge, best_coverage)": ["judge", "best_coverage"],
    "+ judge_prior": ["judge", "best_coverage", "judge_prior"],
    "judge - judge_prior, best_coverage": ["judge_gain", "best_coverage"],
    "+ judge_gain": ["judge", "best_coverage", "judge_gain"],
}


class Prior:
    """accuracy.statement_rows' hook: judge_prior and judge_gain (judge - judge_prior) per
    statement, and what the extra prompts cost per sample."""

    def __init__(self, judge: CachedJudge) -> None:
        self.judge = judge
        self.extra = {"samples": 0.0, "calls": 0.0, "prompt_evaluated": 0.0, "seconds": 0.0}

    def __call__(self, sample: Sample, statements: Sequence[str], verdicts: Sequence[Mapping[str, Any]]) -> list[dict[str, float]]:
        features = []
        self.extra["samples"] += 1
        for statement, verdict in zip(statements, verdicts):
            before = self.judge.seconds
            prior, usage = yes_log_odds(self.judge, attribution_messages(EMPTY_DOCUMENT, statement, sample.user_input))
            self.extra["calls"] += 1
            self.extra["prompt_evaluated"] += usage.prompt_evaluated
            self.extra["seconds"] += self.judge.seconds - before
            features.append({"judge_prior": prior, "judge_gain": verdict["features"]["judge"] - prior})
        return features

    def per_sample(self) -> dict[str, float]:
        return {k: v / max(self.extra["samples"], 1) for k, v in self.extra.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=accuracy._limits, default={}, help="rows per task: TASK=N,...")
    parser.add_argument("--task", default=",".join(TASKS))
    parser.add_argument("--shift", type=int, default=0, help="held-out rows, as accuracy.py --shift")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    args = parser.parse_args()
    path, catalog_name = resolve_model(args.model)
    shipped = CATALOG[catalog_name].calibration if catalog_name else {}
    judge = CachedJudge(accuracy.CACHE / path.name / "answers.jsonl", lambda: load_judge(str(path)), shipped)
    tasks, costs = {}, {}
    for task in args.task.split(","):
        prior = Prior(judge)
        tasks[task] = accuracy.statement_rows(judge, task, args.limit.get(task), args.shift, prior)
        costs[task] = prior.per_sample()
    judge.close()
    for task, records in tasks.items():
        rows = [r for r in records if "error" not in r]
        medians = {label: statistics.median(r["features"]["judge_prior"] for r in rows if r["label"] == label) for label in (1, 0)}
        extra = costs[task]
        print(
            f"{task}: judge_prior median, supported {medians[1]:+.2f} / unsupported {medians[0]:+.2f}; extra per sample "
            f"{extra['calls']:.2f} calls, {extra['prompt_evaluated']:.0f} prompt tokens evaluated, {extra['seconds']:.1f} judge s"
        )
    accuracy.print_combinations(tasks, COMBINATIONS)


if __name__ == "__main__":
    main()
