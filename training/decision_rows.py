"""Both graders' answers on validation rows: what a decision that uses both is fitted on.

context_relevance can decide a unit with the judge rule (the judge's choice among a chunk's
sentences, calibrated with the sample's features) or with the verifier (a cross-encoder logit).
A stacked or cascaded decision needs, for the same units, both answers and the label. This script
scores each validation sample that prepare_split_data.py wrote (HotpotQA questions of the
validation split, in the benchmarks' shapes; never a sealed row) with the metric's judge rule, as a
user's run does, and with the verifier file given, and appends one line per sample:
the judge rule's probabilities, features and selection, the verifier's unit logits and the
index of each unit's context, and the required units. The judge is the slow part (about 5 s per
sample on 2 cores), so the file is the cache: a rerun skips the samples already written.

`--task attribution` does the same for the statements context_recall, faithfulness and
factual_correctness judge: validation claims of the training split's attribution rows, each read
inside a context of other claims' evidence as tune_cut.py reads them (the same seeded
construction), CLAIMS_PER_SOURCE per source so no one source decides. One line per claim: the
judge rule's features and probability (the metric's shipped calibration), the verifier's logit
(the best of its windows) and the label.

    python training/decision_rows.py --file training/.cache/candidate/verifier.safetensors
    python training/decision_rows.py --task attribution --file localeval/verifier/verifier.safetensors
    python training/decision_rows.py --file NEW.safetensors --logits-from training/.cache/decision/relevance_rows.jsonl --out ROWS_NEW.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
from pathlib import Path
from typing import Any

from splits import refuse_sealed
from tune_cut import DISTRACTORS, SEED, unit_logits

from localeval.data.samples import Sample
from localeval.graders.verifier import verified_windows
from localeval.judge import Judge, load_judge
from localeval.judge.reading import UsageTally
from localeval.metrics import create_metric
from localeval.verifier import Verifier

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "training" / ".cache"


def sample_key(sample: dict[str, Any]) -> str:
    """A validation sample's identity: its question and contexts (the same group appears in several shapes)."""
    return hashlib.sha256(json.dumps([sample["question"], sample["contexts"]], ensure_ascii=False).encode("utf-8")).hexdigest()[:24]


def read_done(path: Path) -> set[str]:
    if not path.exists():
        return set()
    return {json.loads(line)["key"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}


CLAIMS_PER_SOURCE = 30


def attribution_claims(rows_path: Path) -> list[dict[str, Any]]:
    """Up to CLAIMS_PER_SOURCE validation claims per source, each with its context: its evidence
    among DISTRACTORS evidence sentences of other groups' claims, in a seeded order."""
    rows = [r for r in map(json.loads, rows_path.read_text(encoding="utf-8").splitlines()) if r["split"] == "validation" and r["task"] == "attribution"]
    rng = random.Random(SEED)
    by_source: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_source.setdefault(row["source"], []).append(row)
    ranked: list[tuple[int, str, dict[str, Any]]] = []
    for source in sorted(by_source):
        for rank, row in enumerate(rng.sample(by_source[source], min(CLAIMS_PER_SOURCE, len(by_source[source])))):
            others = [o["b"] for o in rng.sample(rows, DISTRACTORS * 2) if o["group"] != row["group"]][:DISTRACTORS]
            sentences = [*others, row["b"]]
            rng.shuffle(sentences)
            ranked.append((rank, source, {"source": source, "group": row["group"], "claim": row["a"], "sentences": sentences, "label": int(row["label"])}))
    # Source by source in turn, so a run stopped early (the file resumes) still holds every source.
    return [claim for _, _, claim in sorted(ranked, key=lambda item: item[:2])]


def attribution_rows(args: argparse.Namespace, verifier: Verifier, judge: Judge) -> None:
    """The judge rule's and the verifier's answers for each claim of attribution_claims."""
    claims = attribution_claims(args.rows)
    done = read_done(args.out)
    todo = [c for c in claims if sample_key({"question": c["claim"], "contexts": c["sentences"]}) not in done]
    print(f"{len(claims)} claims, {len(done)} already written, {len(todo)} to score", flush=True)
    grader = create_metric("context_recall", {"verifier": False}).grader(judge)
    with args.out.open("a", encoding="utf-8") as out:
        for n, claim in enumerate(todo, 1):
            started = time.perf_counter()
            support = grader.supported([claim["claim"]], claim["sentences"], UsageTally())[0]
            logit = verified_windows(verifier, [claim["claim"]], claim["sentences"])[0].logit
            row = {"key": sample_key({"question": claim["claim"], "contexts": claim["sentences"]}), "source": claim["source"], "group": claim["group"],
                   "label": claim["label"], "judge_probability": round(support.probability, 6), "judge_features": support.features,
                   "verifier_logit": round(logit, 4), "judge_seconds": round(time.perf_counter() - started, 2)}
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(f"{n}/{len(todo)} {claim['source']}: {row['judge_seconds']} s", flush=True)


def relogit(args: argparse.Namespace, verifier: Verifier) -> None:
    """Another verifier file's logits beside the judge's answers already written in --logits-from:
    the judge part is copied as it is (it does not depend on the verifier), so a new file is
    weighed in minutes, not the hours the judge took. Every sample or claim of that file must
    still be in --samples / --rows, and read as the same number of units."""
    source_rows = [json.loads(line) for line in args.logits_from.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.task == "attribution":
        claims = {sample_key({"question": c["claim"], "contexts": c["sentences"]}): c for c in attribution_claims(args.rows)}
    else:
        claims = {sample_key(s): s for s in (json.loads(line) for line in args.samples.read_text(encoding="utf-8").splitlines() if line.strip())}
    missing = [row["key"] for row in source_rows if row["key"] not in claims]
    if missing:
        read = args.rows if args.task == "attribution" else args.samples
        raise SystemExit(f"{args.logits_from}: {len(missing)} rows (first {missing[0]}) are not among those read from {read}: name the file they were built on, or rebuild them with the judge")
    started = time.perf_counter()
    with args.out.open("w", encoding="utf-8") as out:
        for n, row in enumerate(source_rows, 1):
            found = claims[row["key"]]
            if args.task == "attribution":
                row = {**row, "verifier_logit": round(verified_windows(verifier, [found["claim"]], found["sentences"])[0].logit, 4)}
            else:
                logits = unit_logits(verifier, [found])[0]
                if len(logits) != len(row["verifier_logits"]):
                    raise SystemExit(f"{args.logits_from}: sample {row['key']}: {len(row['verifier_logits'])} units written, the verifier reads {len(logits)}")
                row = {**row, "verifier_logits": [round(v, 4) for v, _ in logits]}
            out.write(json.dumps(row) + "\n")
            if n % 50 == 0:
                print(f"{n}/{len(source_rows)} in {time.perf_counter() - started:.0f} s", flush=True)
    print(f"wrote {len(source_rows)} rows with {args.file}'s logits -> {args.out}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=("relevance", "attribution"), default="relevance")
    parser.add_argument("--samples", type=Path, default=CACHE / "split" / "validation_samples.jsonl", help="relevance: prepare_split_data.py's validation samples")
    parser.add_argument("--rows", type=Path, default=CACHE / "split" / "rows.jsonl", help="attribution: the split's rows (their validation part)")
    parser.add_argument("--file", type=Path, required=True, help="the verifier file whose logits go beside the judge's answers")
    parser.add_argument("--out", type=Path, help="default: training/.cache/decision/<task>_rows.jsonl")
    parser.add_argument("--model", help="the judge (default: the catalog's default)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--logits-from", type=Path, help="copy the judge's answers from this rows file and compute only --file's logits (no judge)")
    args = parser.parse_args()
    args.out = args.out or CACHE / "decision" / f"{args.task}_rows.jsonl"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    refuse_sealed(args.samples)
    refuse_sealed(args.rows)
    verifier = Verifier(str(args.file), args.file.read_bytes())
    if args.logits_from:
        if args.out.resolve() == args.logits_from.resolve():
            raise SystemExit("--out must differ from --logits-from: the judge's answers are read from it")
        relogit(args, verifier)
        return
    if args.task == "attribution":
        attribution_rows(args, verifier, load_judge(args.model, threads=args.threads))
        return
    samples = [json.loads(line) for line in args.samples.read_text(encoding="utf-8").splitlines() if line.strip()]
    done = read_done(args.out)
    todo = [s for s in samples if sample_key(s) not in done]
    print(f"{len(samples)} samples, {len(done)} already written, {len(todo)} to score", flush=True)
    if not todo:
        return
    metric = create_metric("context_relevance", {"verifier": False})
    judge = load_judge(args.model, threads=args.threads)
    with args.out.open("a", encoding="utf-8") as out:
        for n, sample in enumerate(todo, 1):
            started = time.perf_counter()
            details = metric.score_batch([Sample(user_input=sample["question"], retrieved_contexts=sample["contexts"])], judge)[0].details
            logits = unit_logits(verifier, [sample])[0]
            if len(logits) != len(details["probabilities"]):
                raise SystemExit(f"{args.samples}: sample {sample_key(sample)}: the judge rule read {len(details['probabilities'])} units, the verifier {len(logits)}")
            row = {"key": sample_key(sample), "source": sample["source"], "group": sample["group"], "shape": sample["shape"], "required": sample["required"],
                   "judge_probabilities": details["probabilities"], "judge_features": details.get("features"), "judge_selected": details["selected"],
                   "verifier_logits": [round(v, 4) for v, _ in logits], "contexts_of_units": [p for _, p in logits],
                   "judge_seconds": round(time.perf_counter() - started, 2)}
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(f"{n}/{len(todo)} {sample['shape']}: {row['judge_seconds']} s", flush=True)


if __name__ == "__main__":
    main()
