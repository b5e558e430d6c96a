"""How long `localeval compare` takes on two large results files (target: under 5 s for 20,000 samples).

Writes two results files of N samples each (default 20,000) with three metrics per row, shaped
like the built-ins' (context_recall's statements with verdicts and reasons, id_context_recall's
found and missing ids, context_relevance's selected sentences), in a temporary folder, then times
the command as a user runs it (a fresh process: start-up, reading both files, pairing, the
figures, Markdown and JSON) and, in this process, `localeval.compare` alone; wall-clock and CPU
seconds both, since on a shared machine the wall clock measures the other processes too.

    nice python benchmarks/compare_speed.py
    nice python benchmarks/compare_speed.py --samples 100000
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

from localeval import compare

METRICS = ("context_recall", "id_context_recall", "context_relevance")


def write_results(path: Path, samples: int, seed: int) -> None:
    """A results file of `samples` rows with the three metrics' scores and details."""
    rng = random.Random(seed)
    header = {"format": "localeval-results", "version": 1, "run": {"localeval": "0.5.0", "input": {"path": "absent.jsonl", "sha256": f"{seed:064x}"}, "metrics": {m: {} for m in METRICS}, "map": {}, "judge": None}}
    with open(path, "w", encoding="utf-8") as out:
        out.write(json.dumps(header) + "\n")
        for line in range(1, samples + 1):
            verdicts = [rng.random() < 0.7 for _ in range(3)]
            statements = [{"statement": f"Statement {k} of question {line}.", "attributed": int(v), "probability": 0.9 if v else 0.1, "evidence": [k], "reason": "matched"} for k, v in enumerate(verdicts)]
            found = [str(i) for i in range(2) if rng.random() < 0.8]
            selected = [f"Sentence {k} of context {line}." for k in range(3) if rng.random() < 0.5]
            row = {
                "id": f"q{line}", "line": line,
                "scores": {"context_recall": sum(verdicts) / 3, "id_context_recall": len(found) / 2, "context_relevance": len(selected) / 6},
                "details": {
                    "context_recall": {"statements": statements},
                    "id_context_recall": {"found": found, "missing": [str(i) for i in range(2) if str(i) not in found]},
                    "context_relevance": {"selected": list(range(len(selected))), "selected_sentences": selected, "n_selected": len(selected), "n_sentences": 6},
                },
                "errors": {},
            }
            out.write(json.dumps(row) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        base, candidate = Path(folder) / "base.jsonl", Path(folder) / "candidate.jsonl"
        write_results(base, args.samples, 1)
        write_results(candidate, args.samples, 2)
        size = (base.stat().st_size + candidate.stat().st_size) / 1e6
        command = [sys.executable, "-m", "localeval", "compare", str(base), str(candidate), "--markdown", str(Path(folder) / "c.md"), "--json", str(Path(folder) / "c.json"), "-q"]
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        whole = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        whole_cpu = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
        if done.returncode != 0:
            raise SystemExit(f"localeval compare exited {done.returncode}: {done.stderr[-2000:]}")
        started, cpu = time.perf_counter(), time.process_time()
        result = compare(base, candidate)
        alone, alone_cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"{args.samples:,} samples per file, {len(METRICS)} metrics, {size:.1f} MB in all; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"localeval compare (a fresh process, with --markdown and --json): {whole:.2f} s wall, {whole_cpu:.2f} s CPU")
    print(f"localeval.compare() alone: {alone:.2f} s wall, {alone_cpu:.2f} s CPU")
    print("paired: " + ", ".join(f"{name} {m.difference.count}" for name, m in result.metrics.items()))


if __name__ == "__main__":
    main()
