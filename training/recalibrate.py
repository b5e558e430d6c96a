"""Refit a finished verifier file's calibration on the validation split, on the CPU.

A device run fits each task's cut and slope at the end of training (calibration.calibrate, on
torch logits). When that fit is wrong (the GPU run of issue 48 wrote a relevance scale of 1.56e9,
which the runtime refuses), the weights are still good: this script scores the validation rows
with localeval's own numpy encoder (the logits users get), refits with calibration.calibrate,
and writes a copy of the file with the new calibration and nothing else changed (the weights'
bytes are copied as they are). It never writes over the input, and never reads the sealed split.

`--task relevance` refits one task and copies the other's calibration as it is: a relevance tower
(towers.py) changes what the relevance logits are, and refitting every task would move the
statements' probabilities, which read weights the tower did not touch.

    python training/recalibrate.py --file ../shared/verifier-gpu/verifier.safetensors \
        --rows training/.cache/split/rows.jsonl --out training/.cache/recalibrated/verifier.safetensors
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from calibration import MAX_SCALE, MIN_SCALE, calibrate, evaluate
from splits import refuse_sealed

from localeval.verifier import Verifier
from localeval.verifier.pairs import TASKS
from localeval.verifier.tensors import read_tensors, write_tensors

ROOT = Path(__file__).resolve().parents[1]


def loadable(data: bytes) -> bytes:
    """The same file with each task's slope clipped into [MIN_SCALE, MAX_SCALE], so that the
    runtime loads it: logits do not depend on the slope, only probabilities do."""
    tensors, metadata = read_tensors(data)
    calibration = json.loads(metadata["calibration"])
    for values in calibration.values():
        values["scale"] = min(MAX_SCALE, max(MIN_SCALE, float(values["scale"])))
    return write_tensors(tensors, {**metadata, "calibration": json.dumps(calibration)})


def validation_logits(verifier: Verifier, rows: list[dict[str, Any]]) -> list[float]:
    """Each row's logit for its own task, as the runtime computes it."""
    logits = [0.0] * len(rows)
    for task in TASKS:
        chosen = [i for i, r in enumerate(rows) if r["task"] == task]
        for i, value in zip(chosen, verifier.logits(task, [(rows[i]["a"], rows[i]["b"], rows[i]["c"]) for i in chosen])):
            logits[i] = value
    return logits


SEED = 20261126


def capped(rows: list[dict[str, Any]], per_source: int) -> list[dict[str, Any]]:
    """At most `per_source` rows of each source, a seeded sample, in the rows' order."""
    by_source: dict[str, list[int]] = defaultdict(list)
    for index, row in enumerate(rows):
        by_source[row["source"]].append(index)
    rng = random.Random(SEED)
    kept = {i for source in sorted(by_source) for i in rng.sample(by_source[source], min(per_source, len(by_source[source])))}
    return [row for index, row in enumerate(rows) if index in kept]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, required=True, help="the verifier file to recalibrate (not changed)")
    parser.add_argument("--rows", type=Path, default=ROOT / "training" / ".cache" / "split" / "rows.jsonl", help="prepare_split_data.py's rows: their validation split is read")
    parser.add_argument("--out", type=Path, required=True, help="where the recalibrated copy goes")
    parser.add_argument("--per-source", type=int, default=0, help="at most this many validation rows per source, seeded (0: all; the CPU's forward pass is the cost)")
    parser.add_argument("--logits", type=Path, help="a JSON cache of the validation logits (written when absent, read when present)")
    parser.add_argument("--task", choices=TASKS, action="append", help="refit this task only (repeatable; default: every task); the others keep their calibration")
    args = parser.parse_args()
    refuse_sealed(args.rows)
    if args.out.resolve() == args.file.resolve():
        parser.error("--out must differ from --file")
    data = args.file.read_bytes()
    tasks = tuple(t for t in TASKS if t in (args.task or TASKS))
    rows = [r for r in map(json.loads, args.rows.read_text(encoding="utf-8").splitlines()) if r["split"] == "validation" and r["task"] in tasks]
    if args.per_source:
        rows = capped(rows, args.per_source)
    verifier = Verifier(str(args.file), loadable(data))
    if args.logits and args.logits.is_file():
        cached = json.loads(args.logits.read_text(encoding="utf-8"))
        if cached["sha256"] != hashlib.sha256(data).hexdigest() or len(cached["logits"]) != len(rows):
            parser.error(f"{args.logits} holds logits of another file or other rows")
        logits = cached["logits"]
    else:
        started = time.perf_counter()
        logits = validation_logits(verifier, rows)
        print(f"{len(rows)} validation rows scored in {time.perf_counter() - started:.0f} s", flush=True)
        if args.logits:
            args.logits.parent.mkdir(parents=True, exist_ok=True)
            args.logits.write_text(json.dumps({"sha256": hashlib.sha256(data).hexdigest(), "logits": logits}), encoding="utf-8")
    try:
        fitted = calibrate(rows, logits, tasks)
    except ValueError as error:
        parser.error(f"{args.rows}: {error}")
    tensors, metadata = read_tensors(data)
    calibration = json.loads(metadata["calibration"])
    calibration.update({task: {**values, "fitted_on": f"{sum(r['task'] == task for r in rows)} validation rows{f' (at most {args.per_source} a source)' if args.per_source else ''}, numpy runtime logits (training/recalibrate.py)"}
                        for task, values in fitted.items()})
    validation = evaluate(rows, logits, fitted)
    if tasks != TASKS:  # the other task's sources keep their figures (a source belongs to one task)
        validation = {**json.loads(metadata.get("validation", "{}")), **validation}
    written = write_tensors(tensors, {**metadata, "calibration": json.dumps(calibration), "validation": json.dumps(validation)})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(written)
    Verifier(str(args.out), written)  # the runtime loads what was written
    print(json.dumps({"calibration": fitted, "validation": evaluate(rows, logits, fitted)}, indent=1))
    print(f"wrote {args.out} (SHA-256 {hashlib.sha256(written).hexdigest()})")


if __name__ == "__main__":
    main()
