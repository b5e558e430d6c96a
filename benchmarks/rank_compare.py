"""compare on ranks: localeval's paired interval on nDCG@10 beside ranx's paired t-test and
randomization test, on the retrieval example's two runs (examples/retrieval: idf against common).

Each run is scored by `localeval score RUN --qrels QRELS -m ndcg_at_k` (through the API, as the
command runs it) and compared with `localeval.compare`. ranx scores the same files (its own
Qrels and Run) and tests the difference with its `paired_student_t_test` and
`fisher_randomization_test` (1,000 permutations, its default seed). ranx gives p-values, not
intervals; to set a width beside localeval's, each test is inverted: the 95% interval is the
shifts d of the candidate's scores for which ranx's own test does not reject "no difference" at
p = 0.05 (found by bisection on each side). The printed table has every interval and its width.

    nice python benchmarks/rank_compare.py
"""

from __future__ import annotations

import argparse
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localeval import RunSettings, compare, score_file

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "retrieval"
BASE, CANDIDATE = EXAMPLE / "runs" / "common.json", EXAMPLE / "runs" / "idf.trec"
QRELS = EXAMPLE / "qrels" / "test.tsv"
LEVEL = 0.05  # a 95% interval


def localeval_interval(folder: Path) -> tuple[float, tuple[float, float]]:
    """localeval's paired difference on ndcg_at_k (candidate minus base) and its 95% interval."""
    outputs = []
    for run in (BASE, CANDIDATE):
        output = folder / f"{run.name}.results.jsonl"
        score_file(RunSettings(input=str(run), qrels=str(QRELS), output=str(output), metrics=["ndcg_at_k"], timing=False))
        outputs.append(output)
    difference = compare(outputs[0], outputs[1]).metrics["ndcg_at_k"].difference
    assert difference.mean is not None and difference.ci95 is not None
    return difference.mean, difference.ci95


def ranx_scores() -> tuple[Any, Any]:
    """Each run's nDCG@10 per query as ranx computes it, in the same query order."""
    import numpy as np
    from ranx import Qrels, Run, evaluate

    judged: dict[str, dict[str, int]] = {}
    for line in QRELS.read_text(encoding="utf-8").splitlines()[1:]:  # BEIR's TSV, which ranx does not read: its header, then rows
        query, doc, grade = line.split("\t")
        judged.setdefault(query, {})[doc] = int(grade)
    qrels = Qrels(judged)
    runs = [Run.from_file(str(BASE), kind="json"), Run.from_file(str(CANDIDATE), kind="trec")]
    per_query = []
    for run in runs:
        evaluate(qrels, run, "ndcg@10", make_comparable=True)
        per_query.append(run.scores["ndcg@10"])
    queries = sorted(per_query[0])
    return np.array([per_query[0][q] for q in queries]), np.array([per_query[1][q] for q in queries])


def inverted_interval(test: Callable[[Any, Any], float], base: Any, candidate: Any) -> tuple[float, float]:
    """The shifts d for which `test(base, candidate - d)` gives p above LEVEL: the test's 95% interval."""
    mean = float((candidate - base).mean())

    def accepted(shift: float) -> bool:
        return test(base, candidate - shift) > LEVEL

    def edge(outward: float) -> float:
        inside, outside = mean, mean + outward
        while accepted(outside):
            outside += outward
        for _ in range(25):  # to 0.05 / 2**25: far below the 4 decimals printed
            middle = (inside + outside) / 2
            inside, outside = (middle, outside) if accepted(middle) else (inside, middle)
        return inside

    return edge(-0.05), edge(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args()
    warnings.filterwarnings("ignore")  # numba's type-safety notes from inside ranx
    from ranx.statistical_tests import fisher_randomization_test, paired_student_t_test

    with tempfile.TemporaryDirectory() as folder:
        mean, ours = localeval_interval(Path(folder))
    base, candidate = ranx_scores()
    t_p = float(paired_student_t_test(base, candidate)[0])
    r_p = float(fisher_randomization_test(base, candidate)[0])
    t_interval = inverted_interval(lambda b, c: float(paired_student_t_test(b, c)[0]), base, candidate)
    r_interval = inverted_interval(lambda b, c: float(fisher_randomization_test(b, c)[0]), base, candidate)
    print(f"ndcg_at_k (nDCG@10), {len(base)} queries, candidate {CANDIDATE.name} minus base {BASE.name}: localeval {mean:+.4f}, ranx {float((candidate - base).mean()):+.4f}")
    print(f"{'method':<44} {'p':>6}  {'95% interval':>20}  {'width':>6}")
    print(f"{'localeval compare (paired interval)':<44} {'-':>6}  {ours[0]:+.4f} to {ours[1]:+.4f}  {ours[1] - ours[0]:.4f}")
    print(f"{'ranx paired t-test (inverted)':<44} {t_p:>6.3f}  {t_interval[0]:+.4f} to {t_interval[1]:+.4f}  {t_interval[1] - t_interval[0]:.4f}")
    print(f"{'ranx randomization test, 1,000 (inverted)':<44} {r_p:>6.3f}  {r_interval[0]:+.4f} to {r_interval[1]:+.4f}  {r_interval[1] - r_interval[0]:.4f}")


if __name__ == "__main__":
    main()
