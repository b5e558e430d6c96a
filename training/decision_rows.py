"""Both graders' answers for every unit of the validation relevance samples: what a decision that uses both is fitted on.

context_relevance can decide a unit with the judge rule (the judge's choice among a chunk's
sentences, calibrated with the sample's features) or with the verifier (a cross-encoder logit).
A stacked or cascaded decision needs, for the same units, both answers and the label. This script
scores each validation sample that prepare_split_data.py wrote (HotpotQA questions of the
validation split, in the benchmarks' shapes; never a sealed row) with the metric's judge rule, as a
user's run does, and with the verifier file given, and appends one line per sample:
the judge rule's probabilities, features and selection, the verifier's unit logits and the
index of each unit's context, and the required units. The judge is the slow part (about 5 s per
sample on 2 cores), so the file is the cache: a rerun skips the samples already written.

    python training/decision_rows.py --file training/.cache/candidate/verifier.safetensors
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path
from typing import Any

from splits import refuse_sealed
from tune_cut import unit_logits

from localeval.data.samples import Sample
from localeval.judge import load_judge
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=Path, default=CACHE / "split" / "validation_samples.jsonl")
    parser.add_argument("--file", type=Path, required=True, help="the verifier file whose logits go beside the judge's answers")
    parser.add_argument("--out", type=Path, default=CACHE / "decision" / "relevance_rows.jsonl")
    parser.add_argument("--model", help="the judge (default: the catalog's default)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    refuse_sealed(args.samples)
    samples = [json.loads(line) for line in args.samples.read_text(encoding="utf-8").splitlines() if line.strip()]
    done = read_done(args.out)
    todo = [s for s in samples if sample_key(s) not in done]
    print(f"{len(samples)} samples, {len(done)} already written, {len(todo)} to score", flush=True)
    if not todo:
        return
    verifier = Verifier(str(args.file), args.file.read_bytes())
    metric = create_metric("context_relevance", {"verifier": False})
    judge = load_judge(args.model, threads=args.threads)
    args.out.parent.mkdir(parents=True, exist_ok=True)
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
