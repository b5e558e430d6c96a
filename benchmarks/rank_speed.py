"""How fast the seven rank metrics score 20,000 queries x 100 retrieved ids, as whole processes:
`localeval score` against a process that loads the same JSON Lines into pytrec_eval (trec_eval)
and evaluates it, with ranx beside them (its first call, which compiles its numba code, and a
warm second call, in one process).

The input is generated (seeded): each query ranks 100 distinct ids and has 8 relevant ids (5 of
them retrieved somewhere in the ranking, 3 never), graded 1 to 3. Each tool computes nDCG@10,
reciprocal rank, average precision, P@10, recall@10, success@10 and R-precision for every query.
localeval is timed twice: as pytrec_eval and ranx work (every query's scores in memory, and the
summary printed), and with `-o`, writing each query's scores and evidence to a results file
(about 31 MB here). The same queries are also written as a TREC run and qrels file, scored by
`localeval score RUN --qrels QRELS` and by pytrec_eval's own `parse_run` and `parse_qrel`. Wall-clock and CPU seconds are both printed: on a shared machine the wall
clock measures the other processes too. Every process runs with Python's bytecode cache (in a
temporary folder), as an installed package has it, so no run compiles localeval's source; the
fastest of `--repeat` runs is kept.

    nice python benchmarks/rank_speed.py
    nice python benchmarks/rank_speed.py --queries 2000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

METRICS = ("ndcg_at_k", "reciprocal_rank", "average_precision", "precision_at_k", "recall_at_k", "hit_rate_at_k", "r_precision")
TREC_MEASURES = '{"ndcg_cut_10", "recip_rank", "map", "P_10", "recall_10", "success_10", "Rprec"}'
RANX_MEASURES = '["ndcg@10", "mrr", "map", "precision@10", "recall@10", "hit_rate@10", "r-precision"]'

# The same JSON Lines, read into each library's own shape: a run {qid: {docid: score}} with the
# rank order as scores (the first id highest), and qrels {qid: {docid: grade}}.
READ = """
import json, sys, time
run, qrels = {}, {}
with open(sys.argv[1], encoding="utf-8") as f:
    for line in f:
        s = json.loads(line)
        q, ranked = str(s["id"]), s["retrieved_context_ids"]
        run[q] = {str(d): float(len(ranked) - i) for i, d in enumerate(ranked)}
        qrels[q] = {str(d): int(g) for d, g in zip(s["reference_context_ids"], s["reference_context_grades"])}
"""
PYTREC_EVAL = READ + f"""
import pytrec_eval
scores = pytrec_eval.RelevanceEvaluator(qrels, {TREC_MEASURES}).evaluate(run)
assert len(scores) == len(run)
"""
# The same queries as TREC files, read as pytrec_eval's own helpers read them.
PYTREC_EVAL_FILES = f"""
import sys, pytrec_eval
with open(sys.argv[1], encoding="utf-8") as f:
    run = pytrec_eval.parse_run(f)
with open(sys.argv[2], encoding="utf-8") as f:
    qrels = pytrec_eval.parse_qrel(f)
scores = pytrec_eval.RelevanceEvaluator(qrels, {TREC_MEASURES}).evaluate(run)
assert len(scores) == len(run)
"""
RANX = READ + f"""
import warnings
warnings.filterwarnings("ignore")
from ranx import Qrels, Run, evaluate
timings = []
for _ in range(2):
    started = time.perf_counter()
    evaluate(Qrels(qrels), Run(run), {RANX_MEASURES})
    timings.append(time.perf_counter() - started)
print(json.dumps(timings))
"""


def write_queries(path: Path, queries: int, depth: int, seed: int = 78) -> None:
    """`queries` samples of `depth` distinct retrieved ids and 8 graded relevant ids."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as out:
        for q in range(queries):
            ranked = [f"d{i}" for i in rng.sample(range(1_000_000), depth)]
            relevant = rng.sample(ranked, 5) + [f"n{q}-{i}" for i in range(3)]
            grades = [rng.choice((1, 2, 3)) for _ in relevant]
            out.write(json.dumps({"id": f"q{q}", "retrieved_context_ids": ranked, "reference_context_ids": relevant, "reference_context_grades": grades}) + "\n")


def write_trec_files(data: Path, run: Path, qrels: Path) -> None:
    """The JSON Lines queries as a TREC run (scores falling with the rank) and TREC qrels."""
    with open(data, encoding="utf-8") as samples, open(run, "w", encoding="utf-8") as ranked, open(qrels, "w", encoding="utf-8") as judged:
        for line in samples:
            sample = json.loads(line)
            for rank, doc in enumerate(sample["retrieved_context_ids"], start=1):
                ranked.write(f"{sample['id']} Q0 {doc} {rank} {1000 - rank} bm25\n")
            for doc, grade in zip(sample["reference_context_ids"], sample["reference_context_grades"]):
                judged.write(f"{sample['id']} 0 {doc} {grade}\n")


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """Wall-clock and CPU seconds (user + system) of a child process, and what it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:4])} ... failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def with_bytecode_cache(folder: Path) -> dict[str, str]:
    """The environment with Python's bytecode cache on, kept in `folder` (pip compiles an installed
    package's bytecode; a checkout run with PYTHONDONTWRITEBYTECODE would compile every module on every run)."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(folder)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--depth", type=int, default=100, help="ids retrieved per query")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each process; the fastest is kept (a shared machine varies by 5-10%%)")
    parser.add_argument("--no-ranx", action="store_true", help="leave ranx out (it compiles numba code on its first call)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "ranked.jsonl"
        write_queries(data, args.queries, args.depth)
        run, qrels = Path(folder) / "run.trec", Path(folder) / "qrels.trec"
        write_trec_files(data, run, qrels)
        env = with_bytecode_cache(Path(folder) / "pycache")
        metrics = [f"--metric={m}" for m in METRICS]
        localeval = [sys.executable, "-m", "localeval", "score", str(data), *metrics, "-q"]
        commands = {
            "localeval score (scores in memory, summary)": localeval,
            "localeval score -o (and each query's row written)": [*localeval, "-o", str(Path(folder) / "results.jsonl")],
            "pytrec_eval (read JSONL, evaluate)": [sys.executable, "-c", PYTREC_EVAL, str(data)],
            "localeval score RUN --qrels QRELS (TREC files)": [sys.executable, "-m", "localeval", "score", str(run), "--qrels", str(qrels), *metrics, "-q"],
            "pytrec_eval parse_run, parse_qrel, evaluate": [sys.executable, "-c", PYTREC_EVAL_FILES, str(run), str(qrels)],
        }
        if not args.no_ranx:
            commands["ranx (read JSONL, two calls)"] = [sys.executable, "-c", RANX, str(data)]
        rows: dict[str, tuple[float, float]] = {}
        ranx_calls: list[float] = []
        for _ in range(args.repeat):
            for name, command in commands.items():
                wall, cpu, printed = timed(command, env)
                rows[name] = min(rows.get(name, (wall, cpu)), (wall, cpu))
                if name.startswith("ranx"):
                    calls = json.loads(printed.strip().splitlines()[-1])
                    ranx_calls = calls if not ranx_calls else [min(a, b) for a, b in zip(ranx_calls, calls)]
    print(f"{args.queries:,} queries x {args.depth} retrieved ids, 7 metrics; whole processes, fastest of {args.repeat}")
    print(f"{'':<52} {'wall s':>7} {'CPU s':>7}")
    for name, (wall, cpu) in rows.items():
        print(f"{name:<52} {wall:>7.2f} {cpu:>7.2f}")
    if ranx_calls:
        print(f"{'ranx evaluate(), first call (numba compiles)':<52} {ranx_calls[0]:>7.2f}")
        print(f"{'ranx evaluate(), warm second call':<52} {ranx_calls[1]:>7.2f}")
    names = list(commands)
    for name, against in ((names[0], names[2]), (names[1], names[2]), (names[3], names[4])):
        (wall, cpu), (trec_wall, trec_cpu) = rows[name], rows[against]
        print(f"{name}: {wall / trec_wall:.2f}x pytrec_eval's wall clock, {cpu / trec_cpu:.2f}x its CPU")


if __name__ == "__main__":
    main()
