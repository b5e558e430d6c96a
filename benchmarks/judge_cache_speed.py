"""What the verdict cache saves, and that it changes nothing: five runs of `localeval score` on one
input, timed as wall seconds of the whole command (start-up included), in one go:

1. uncached (`--no-cache`), the reference results;
2. cold: a new, empty cache (its overhead: against run 1);
3. warm: the same input again (against run 2), and whether llama.cpp was imported at all;
4. changed: the input with a share of its samples given new retrieved contexts (against run 2);
5. with --check-changed, the changed input uncached too, for the exactness of run 4.

Every run is `--no-timing`, so results files of equal scores are equal bytes; the script says
which are. All eight default metrics unless `-m` narrows them.

    python benchmarks/judge_cache_speed.py                       # the README example, default judge
    python benchmarks/judge_cache_speed.py --model smollm2-135m --n-ctx 2048
    python benchmarks/judge_cache_speed.py --claims 100 -m faithfulness -m context_recall

--claims N scores N claims of shared/data's attribution_dev.jsonl (evenly spaced, as every
benchmark reads them: labelled_rows.read), each as a sample whose response and reference are the
claim and whose one retrieved context is its document: dev rows, never a fit's.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "rag_samples.jsonl"
CHANGED_NOTE = " (This passage was retrieved again, from a newer copy.)"
# Run in the child: the command itself, then whether llama.cpp was imported, on its last line.
CHILD = (
    "import atexit, sys\n"
    "atexit.register(lambda: print('LLAMA_CPP_IMPORTED=' + str('llama_cpp' in sys.modules), file=sys.stderr))\n"
    "sys.argv = ['localeval', *sys.argv[1:]]\n"
    "from localeval.entry import main\n"
    "main()\n"
)


@dataclass
class Timed:
    """One run: its wall seconds, results file and whether it imported llama.cpp."""

    seconds: float
    results: Path
    llama_cpp: bool


def changed_input(source: Path, target: Path, share: float, seed: int = 0) -> int:
    """`source` with round(share * samples) of its samples (at least one) given new retrieved
    contexts (each context reworded at its end, the list reversed); how many."""
    lines = source.read_text(encoding="utf-8").splitlines()
    count = max(1, round(share * len(lines)))
    chosen = set(random.Random(seed).sample(range(len(lines)), count))
    out = []
    for index, line in enumerate(lines):
        sample = json.loads(line)
        if index in chosen:
            sample["retrieved_contexts"] = [context + CHANGED_NOTE for context in reversed(sample["retrieved_contexts"])]
        out.append(json.dumps(sample, ensure_ascii=False))
    target.write_text("\n".join(out) + "\n", encoding="utf-8")
    return count


def claims_input(count: int, target: Path) -> None:
    """`count` dev claims written as samples (see the module's docstring)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from labelled_rows import read

    rows = read("attribution_dev.jsonl", count)
    samples = [{"id": row["id"], "user_input": "What does the document say?", "response": row["claim"], "reference": row["claim"],
                "retrieved_contexts": [row["context"]]} for row in rows]
    target.write_text("".join(json.dumps(sample, ensure_ascii=False) + "\n" for sample in samples), encoding="utf-8")


def run_score(input_path: Path, results: Path, cache: Path | None, extra: list[str]) -> Timed:
    chosen = ["--cache", str(cache)] if cache is not None else ["--no-cache"]
    command = [sys.executable, "-c", CHILD, "score", str(input_path), "-o", str(results), "--no-timing", "-q", *chosen, *extra]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("LOCALEVAL_CACHE", None)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"localeval score exited {done.returncode}:\n{done.stderr[-2000:]}")
    return Timed(seconds, results, "LLAMA_CPP_IMPORTED=True" in done.stderr)


def _told(name: str, run: Timed) -> Timed:
    """Each run's seconds as it ends (a long benchmark shows where it is)."""
    print(f"{name}: {run.seconds:.1f} s", file=sys.stderr, flush=True)
    return run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", type=Path, default=EXAMPLE)
    parser.add_argument("--claims", type=int, help="score this many dev claims instead of --input (see above)")
    parser.add_argument("--model", help="the judge (default: the catalog's default)")
    parser.add_argument("--n-ctx", type=int)
    parser.add_argument("--threads", type=int)
    parser.add_argument("-m", "--metric", action="append", default=[], help="narrow the metrics (default: the eight default metrics)")
    parser.add_argument("--changed-share", type=float, default=0.1, help="share of the samples given new contexts (at least one sample)")
    parser.add_argument("--check-changed", action="store_true", help="also score the changed input uncached, to diff it")
    parser.add_argument("--work", type=Path, help="keep the files here (default: a temporary folder)")
    args = parser.parse_args(argv)
    extra = [*(["--model", args.model] if args.model else []), *(["--n-ctx", str(args.n_ctx)] if args.n_ctx else [])]
    extra += [*(["--threads", str(args.threads)] if args.threads else []), *(f"-m{m}" for m in args.metric)]
    work = args.work or Path(tempfile.mkdtemp(prefix="judge_cache_speed."))
    work.mkdir(parents=True, exist_ok=True)
    cache = work / "verdicts.sqlite"
    for stale in work.glob("verdicts.sqlite*"):
        stale.unlink()
    if args.claims:
        args.input = work / f"claims{args.claims}.jsonl"
        claims_input(args.claims, args.input)
    changed = work / "changed.jsonl"
    changed_count = changed_input(args.input, changed, args.changed_share)
    samples = len(args.input.read_text(encoding="utf-8").splitlines())

    uncached = _told("uncached", run_score(args.input, work / "uncached.jsonl", None, extra))
    cold = _told("cold", run_score(args.input, work / "cold.jsonl", cache, extra))
    warm = _told("warm", run_score(args.input, work / "warm.jsonl", cache, extra))
    partly = _told("changed", run_score(changed, work / "changed.results.jsonl", cache, extra))
    figures = {
        "input": str(args.input), "samples": samples, "work": str(work),
        "uncached_s": round(uncached.seconds, 2), "cold_s": round(cold.seconds, 2), "warm_s": round(warm.seconds, 2), "changed_s": round(partly.seconds, 2),
        "cold_overhead": round(cold.seconds / uncached.seconds - 1, 4),
        "warm_over_cold": round(warm.seconds / cold.seconds, 4),
        "changed_samples": changed_count, "changed_share": round(changed_count / samples, 3),
        "changed_over_cold": round(partly.seconds / cold.seconds, 4),
        "warm_imported_llama_cpp": warm.llama_cpp,
        "cold_equals_uncached": cold.results.read_bytes() == uncached.results.read_bytes(),
        "warm_equals_uncached": warm.results.read_bytes() == uncached.results.read_bytes(),
    }
    if args.check_changed:
        reference = _told("changed, uncached", run_score(changed, work / "changed_uncached.jsonl", None, extra))
        figures["changed_equals_uncached"] = partly.results.read_bytes() == reference.results.read_bytes()
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
