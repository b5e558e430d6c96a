"""Where a run of the seven rank metrics spends its CPU, phase by phase, in one process: importing
localeval's command line, reading and checking each line (`common_sample`), reading each ranking
against its relevant ids (`judge_ranking`), the seven figures with their evidence (a `Reading`, the
row, each metric's `figure_of`), and the summary. The same steps, in the same order, as
`localeval score` takes for each common line (localeval.run.rank_lines); the per-query figure is
what benchmarks/rank_speed.py's shapes differ by.

The input is rank_speed's generated queries. Run it with the bytecode cache on (as rank_speed's
processes have it), or its import figure includes compiling localeval:

    PYTHONPYCACHEPREFIX=/tmp/pycache python benchmarks/rank_phases.py
    PYTHONPYCACHEPREFIX=/tmp/pycache python benchmarks/rank_phases.py --queries 100000 --depth 10
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rank_speed import METRICS, write_queries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--depth", type=int, default=100, help="ids retrieved per query")
    args = parser.parse_args()
    clock = time.process_time
    started = clock()
    import localeval.cli  # noqa: F401  - what every `localeval` process imports

    imported = clock() - started
    from localeval.data.results import ResultRow
    from localeval.metrics import create_metric
    from localeval.metrics.rank_core import judge_ranking
    from localeval.metrics.rank_metrics import Reading
    from localeval.run.rank_lines import common_sample
    from localeval.stats.summary import Summary

    metrics = [create_metric(name) for name in METRICS]
    figures = [(metric.name, metric.figure_of) for metric in metrics]
    summary = Summary(list(METRICS))
    spent = {"reading and checking the line": 0.0, "judge_ranking": 0.0, "the seven figures and the row": 0.0, "the summary": 0.0}
    steps = list(spent)
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "ranked.jsonl"
        write_queries(data, args.queries, args.depth)
        with open(data, "rb") as lines:
            for number, raw in enumerate(lines, start=1):
                t0 = clock()
                sample = common_sample(raw)
                assert sample is not None  # the generated lines all have the common shape
                t1 = clock()
                judged = judge_ranking(sample["retrieved_context_ids"], sample["reference_context_ids"], sample.get("reference_context_grades"))
                t2 = clock()
                reading, row = Reading(judged), ResultRow(line=number, id=sample.get("id"))
                for name, figure_of in figures:
                    row.scores[name], row.details[name] = figure_of(reading)
                t3 = clock()
                summary.add(row)
                t4 = clock()
                for step, seconds in zip(steps, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                    spent[step] += seconds
    calls = 5 * args.queries  # the clock's own cost, read the same number of times, taken off
    started = clock()
    for _ in range(calls):
        clock()
    own = (clock() - started) / 5
    print(f"{args.queries:,} queries x {args.depth} ids, CPU seconds by phase (one process; the clock's own cost taken off)")
    print(f"{'importing localeval.cli':<34} {imported:>6.3f}")
    for step in steps:
        print(f"{step:<34} {max(0.0, spent[step] - own):>6.3f}")
    per_query = sum(max(0.0, spent[step] - own) for step in steps) / args.queries
    print(f"{'per query, all four':<34} {per_query * 1e6:>6.1f} microseconds")


if __name__ == "__main__":
    main()
