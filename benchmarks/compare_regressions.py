"""Does `localeval compare` flag changes of known harm, and only on the metrics they touch?

HotpotQA dev questions (shared/data relevance_dev.jsonl, the reserved evaluation ids left out)
through a base pipeline and three candidates of known harm:

- base: four paragraphs, the two gold ones among them at ranks that vary by question (rank 1 in 3
  questions of 5), one of them missed (a distractor instead) in 30% of the questions: a good
  retriever, not a perfect one; the reference and the response are the human-annotated supporting
  sentences;
- distractor: in 20% of the questions the first gold paragraph is replaced by a third distractor;
- reversed: the contexts in reverse rank order (every set the same, every rank changed);
- invented: one invented statement (another question's supporting sentence) added to 30% of the
  responses.

Each is scored (the id, string and judge metrics; the judge metrics with `--grader`), written as a
results file and compared with the base by `localeval.compare`. For each candidate and metric the
script prints the human-label difference computed from HotpotQA's gold labels (a supporting
sentence is attributable where its paragraph is retrieved; a paragraph is useful where it holds
one; the invented statement is supported by nothing), compare's difference, interval and verdict,
whether the verdict goes the way the labels go (worse where they drop, "no difference shown"
where they do not move), and the paired interval's width against the unpaired one.

Judge answers are cached on disk by prompt (benchmarks/judge_cache.py: a candidate's unchanged
samples are the base's, answered once), and results files are kept under --out, so a killed run
with the default judge continues where it stopped.

    nice python benchmarks/compare_regressions.py --grader verifier              # minutes, no judge
    nice python benchmarks/compare_regressions.py --grader judge --sizes 100     # the default judge: hours on 2 cores
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from judge_cache import CACHE, CachedJudge  # noqa: E402
from labelled_rows import DATA, read, same_sentence  # noqa: E402

from localeval import compare, create_metric, load_judge  # noqa: E402
from localeval.data.files import file_sha256  # noqa: E402
from localeval.data.results import ResultRow, RunHeader  # noqa: E402
from localeval.data.text import split_sentences  # noqa: E402
from localeval.models.store import CATALOG, resolve_model  # noqa: E402
from localeval.run.runner import score  # noqa: E402

JUDGE_METRICS = ("context_precision", "faithfulness", "context_recall", "context_relevance")  # cheapest first
PLAIN_METRICS = ("id_context_recall", "nonllm_context_recall", "id_context_precision", "nonllm_context_precision")
HARMS = ("distractor", "invented", "reversed")  # the harms that change fewest samples first
RESERVED = DATA / "reserved_hotpotqa_ids.txt"
DISTRACTED_SHARE, INVENTED_SHARE = 0.2, 0.3
BASE_MISS_SHARE = 0.3  # the base retriever is not perfect: it misses one gold paragraph in 30% of the questions
BASE_ORDERS = (("g1", "g2", "d1", "d2"), ("g1", "d1", "g2", "d2"), ("d1", "g1", "g2", "d2"), ("g1", "d1", "d2", "g2"), ("d1", "g1", "d2", "g2"))


def reserved_ids() -> set[str]:
    return {line.strip() for line in RESERVED.read_text(encoding="utf-8").splitlines() if line.strip() and not line.startswith("#")}


def dev_rows(count: int) -> list[dict[str, Any]]:
    """`count` HotpotQA dev rows evenly spaced through the file, none of the reserved ids, each with
    its gold and distractor paragraphs found from the supporting sentences."""
    reserved = reserved_ids()
    rows = [row for row in read("relevance_dev.jsonl", None) if row["id"].removeprefix("hotpotqa-") not in reserved]
    picked = [rows[i * len(rows) // count] for i in range(count)] if count < len(rows) else rows
    for row in picked:
        contexts = row["retrieved_contexts"]
        holds = [[g for g in row["gold_sentences"] if any(same_sentence(s, g) for s in split_sentences(c))] for c in contexts]
        row["gold"] = [i for i, found in enumerate(holds) if found]
        row["others"] = [i for i, found in enumerate(holds) if not found]
    return [row for row in picked if len(row["gold"]) >= 2 and len(row["others"]) >= 4]


def chosen(row_id: str, share: float, salt: str) -> bool:
    """Whether a harm touches this question: a stable hash, so every run harms the same ones."""
    return hashlib.sha256(f"{salt}:{row_id}".encode()).digest()[0] < share * 256


def pipeline(row: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], index: int, harm: str | None) -> tuple[dict[str, Any], dict[str, float]]:
    """One sample of the base pipeline or a harmed candidate, and its human scores per metric."""
    contexts, titles = row["retrieved_contexts"], [f"p{i}" for i in range(len(row["retrieved_contexts"]))]
    first, second, (d1, d2, d3) = row["gold"][0], row["gold"][1], row["others"][:3]
    if chosen(row["id"], BASE_MISS_SHARE, "base miss"):
        second = row["others"][3]  # the base retriever misses one gold paragraph here
    order = BASE_ORDERS[hashlib.sha256(f"base order:{row['id']}".encode()).digest()[0] % len(BASE_ORDERS)]
    slots = {"g1": first, "g2": second, "d1": d1, "d2": d2}
    ranked = [slots[name] for name in order]
    if harm == "distractor" and chosen(row["id"], DISTRACTED_SHARE, harm):
        ranked[order.index("g1")] = d3
    if harm == "reversed":
        ranked.reverse()
    gold = set(row["gold"])
    statements = [g for g in row["gold_sentences"] if any(same_sentence(s, g) for i in gold for s in split_sentences(contexts[i]))]
    response = list(statements)
    if harm == "invented" and chosen(row["id"], INVENTED_SHARE, harm):
        response.append(rows[(index + 1) % len(rows)]["gold_sentences"][0])
    retrieved = [contexts[i] for i in ranked]
    supported = [s for s in statements if any(same_sentence(u, s) for i in ranked for u in split_sentences(contexts[i]))]
    useful = [i in gold for i in ranked]
    hits = [sum(useful[: k + 1]) / (k + 1) for k in range(len(useful)) if useful[k]]
    units = [u for c in retrieved for u in split_sentences(c)]
    sample = {
        "id": row["id"], "user_input": row["user_input"], "retrieved_contexts": retrieved, "reference": " ".join(statements),
        "response": " ".join(response), "reference_contexts": [contexts[i] for i in row["gold"]],
        "retrieved_context_ids": [titles[i] for i in ranked], "reference_context_ids": [titles[i] for i in row["gold"]],
    }
    human = {
        "context_recall": len(supported) / len(statements),
        "faithfulness": len(supported) / len(response),
        "context_precision": sum(hits) / len(hits) if hits else 0.0,
        "context_relevance": sum(1 for u in units if any(same_sentence(u, s) for s in statements)) / len(units),
        "id_context_recall": sum(useful) / len(gold),
        "nonllm_context_recall": sum(useful) / len(gold),
        "id_context_precision": sum(useful) / len(useful),
        "nonllm_context_precision": sum(hits) / len(hits) if hits else 0.0,
    }
    return sample, human


class RowCache:
    """Each metric's result per sample, on disk, keyed by the metric, its options and the sample fields
    it reads: a candidate's sample that a harm left alone (for that metric) is the base's, scored
    once, and a killed run goes on from the last sample written (every result is flushed)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, dict[str, Any]] = {}
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    entry = json.loads(line)
                    self.entries[entry["k"]] = entry["v"]
        self.out = open(path, "a", encoding="utf-8")

    @staticmethod
    def key(metric: Any, sample: Mapping[str, Any]) -> str:
        read = {field: sample.get(field) for field in type(metric).required_fields}
        return hashlib.sha256(json.dumps([metric.name, metric.describe_params(), read], sort_keys=True).encode()).hexdigest()

    def fill(self, metric: Any, samples: Sequence[Mapping[str, Any]], judge: Any, label: str) -> None:
        missing = {self.key(metric, s): s for s in samples if self.key(metric, s) not in self.entries}
        for done, row in enumerate(score(list(missing.values()), [metric], judge=judge), start=1):
            value = row.scores.get(metric.name)
            entry = {"score": None if value is None or value != value else value, "details": row.details.get(metric.name), "error": row.errors.get(metric.name)}
            self.entries[list(missing)[row.line - 1]] = entry
            self.out.write(json.dumps({"k": list(missing)[row.line - 1], "v": entry}) + "\n")
            self.out.flush()
            if done % 10 == 0:
                print(f"    {label} {metric.name}: {done} of {len(missing)} scored", flush=True)


def write_results(path: Path, samples: list[dict[str, Any]], metrics: list[Any], judge: Any, cache: RowCache) -> None:
    """`samples` scored (from the cache where it has them) and written as `localeval score -o` would
    (the header records the input's SHA-256)."""
    data = path.with_suffix(".input.jsonl")
    data.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    for metric in metrics:
        cache.fill(metric, samples, judge, path.name)
    header = RunHeader(run={
        "localeval": None, "input": {"path": str(data), "sha256": file_sha256(data)}, "metrics": {m.name: m.describe_params() for m in metrics},
        "map": {}, "judge": None if judge is None else {k: v for k, v in judge.describe().items() if k != "speed"},
    })
    with open(path, "w", encoding="utf-8") as out:
        out.write(header.to_line())
        for line, sample in enumerate(samples, start=1):
            found = {m.name: cache.entries[cache.key(m, sample)] for m in metrics}
            row = ResultRow(
                line=line, id=sample["id"], scores={name: e["score"] for name, e in found.items() if not e["error"]},
                details={name: e["details"] for name, e in found.items() if e["details"] is not None},
                errors={name: e["error"] for name, e in found.items() if e["error"]},
            )
            out.write(row.to_line(timing=False))


def expected(human: float) -> str:
    return "worse" if human < -1e-9 else "better" if human > 1e-9 else "no difference shown"


def run_size(count: int, names: Sequence[str], grader: str, out: Path, judge: Any, show: Callable[[str], None]) -> None:
    """Score the base, then each candidate, and compare each with the base as soon as it is scored
    (a long run shows its first figures early; the cheap harms come first)."""
    rows = dev_rows(count)
    metrics = [create_metric(name, {"grader": grader} if name in JUDGE_METRICS else {}) for name in names]
    cache = RowCache(out / f"rows-{grader}.jsonl")
    tag = hashlib.sha256("-".join(sorted(names)).encode()).hexdigest()[:8]

    def written(harm: str | None) -> tuple[Path, list[dict[str, float]]]:
        built = [pipeline(row, rows, i, harm) for i, row in enumerate(rows)]
        path = out / f"n{len(rows)}-{grader}-{tag}-{harm or 'base'}.jsonl"
        write_results(path, [s for s, _ in built], metrics, judge, cache)
        return path, [h for _, h in built]

    base, base_humans = written(None)
    lines = [f"\n{len(rows)} questions, grader {grader}\n", "| candidate | metric | human difference | compare: difference (95% interval) | verdict | as the labels say | paired / unpaired width |", "|---|---|---|---|---|---|---|"]
    agree = total = 0
    for harm in HARMS:
        path, humans = written(harm)
        for name, m in compare(base, path, show=0).metrics.items():
            d = m.difference
            human = sum(c[name] - b[name] for b, c in zip(base_humans, humans)) / len(rows)
            ok = d.verdict.value == expected(human)
            agree, total = agree + ok, total + 1
            widths = "-" if d.ci95 is None or d.unpaired_ci95 is None else f"{d.ci95[1] - d.ci95[0]:.3f} / {d.unpaired_ci95[1] - d.unpaired_ci95[0]:.3f}" + (f" ({d.width_ratio:.1f}x)" if d.width_ratio else "")
            interval = "-" if d.ci95 is None else f"{d.mean:+.3f} ({d.ci95[0]:+.3f} to {d.ci95[1]:+.3f})"
            lines.append(f"| {harm} | {name} | {human:+.3f} | {interval} | {d.verdict.value} | {'yes' if ok else 'NO'} | {widths} |")
        print("\n".join(lines[-len(names):]), flush=True)
    lines.append(f"\nverdicts as the labels say: {agree} of {total}")
    for line in lines:
        show(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200], help="numbers of questions")
    parser.add_argument("--grader", choices=("verifier", "judge", "stacked"), default="verifier", help="what decides the judge metrics (judge: the default judge, cached)")
    parser.add_argument("--metrics", nargs="+", choices=(*JUDGE_METRICS, *PLAIN_METRICS), default=list(PLAIN_METRICS + JUDGE_METRICS), help="the metrics to score and compare")
    parser.add_argument("--out", type=Path, default=HERE / ".cache" / "compare_regressions", help="where the inputs and results files are kept (a rerun reuses them)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    judge = None
    if args.grader != "verifier":
        path, name = resolve_model(None)
        judge = CachedJudge(CACHE / path.name / "answers.jsonl", lambda: load_judge(str(path), cache=False), CATALOG[name].calibration if name else {})
    lines: list[str] = []

    def show(line: str) -> None:
        lines.append(line)
        print(line, flush=True)

    try:
        for count in args.sizes:
            run_size(count, args.metrics, args.grader, args.out, judge, show)
    finally:
        if judge is not None:
            judge.close()
    (args.out / f"table-{args.grader}-{'-'.join(args.metrics)}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
