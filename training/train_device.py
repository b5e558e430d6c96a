"""Fine-tune the shipped verifier on the packed rows: one command on a lent GPU, or a few resumable steps on the CPU.

Reads only what travels: the shipped weights (localeval/verifier/verifier.safetensors, whose
float16 tensors are the starting point: train_verifier.py's model, loaded under the names it
exports) and pack_rows.py's archive of train and validation rows. Never a path inside the sealed
test folder (splits.py). Trains every weight on the train rows (bfloat16 autocast on a GPU),
stops within --minutes of wall time (on a GPU the learning-rate schedule is fitted to the steps
that fit, measured on the first steps; on the CPU there is no budget unless one is given), then
scores the validation rows with the starting weights and the new ones, sets each task's cut and
slope on them (calibration.calibrate) and writes to --out:

- verifier.safetensors.partNN: the new file cut into parts of at most --part-mib MiB (what comes
  back from a device is at most 8 files of 16 MiB), with parts.json (sizes and SHA-256 of the
  parts and of the whole); join_parts.py puts it together and checks it;
- train_log.json: the settings, the loss curve, and per source the validation figures of the
  starting and the new weights.

With --epoch-towers TASK it writes instead, at the end of every epoch, TASK's tower of the weights
as they are then (task_tower.epoch_tower: int8 differences from --start's shared weights, about
11 MB): a relevance-only run's epochs are then judged on whole samples on the CPU (task_tower.py,
recalibrate.py --task, tune_cut.py), not by pair AUC, which is how the kept epoch is chosen here.

On a device (torch installed there, no network; carry training/.cache/packed):

    python training/train_device.py --out $OUT

On the CPU, resumable from --work's checkpoint (a rerun continues where the last one stopped):

    python training/train_device.py --device cpu --max-steps 20 --batch 8 --validation-limit 200 --out training/.cache/cpu_out
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "training")]  # the device machine has no installed localeval: this checkout's, beside the script
from calibration import calibrate, evaluate, mean_auc  # noqa: E402
from candidate_files import SHIPPED  # noqa: E402
from replay import continue_rows, selection_id  # noqa: E402
from splits import refuse_sealed  # noqa: E402
from task_tower import epoch_tower  # noqa: E402
from train_verifier import SEED, Verifier  # noqa: E402

from localeval.verifier.pairs import TASKS  # noqa: E402
from localeval.verifier.tensors import read_tensors, write_tensors  # noqa: E402
from localeval.verifier.towers import PREFIX as TOWER_PREFIX  # noqa: E402
from localeval.verifier.towers import expand  # noqa: E402

LAYER_NAMES = {"attention_out": "attention.output.dense", "attention_norm": "attention.output.LayerNorm", "up": "intermediate.dense", "down": "output.dense",
               "output_norm": "output.LayerNorm"}


def base_names(exported: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The shipped (exported) tensors under the base encoder's names, which Verifier() reads."""
    out = {"embeddings.word_embeddings.weight": exported["embeddings.word"], "embeddings.position_embeddings.weight": exported["embeddings.position"],
           "embeddings.token_type_embeddings.weight": exported["embeddings.token_type"], "embeddings.LayerNorm.weight": exported["embeddings.norm.weight"],
           "embeddings.LayerNorm.bias": exported["embeddings.norm.bias"], "pooler.dense.weight": exported["head.dense.weight"], "pooler.dense.bias": exported["head.dense.bias"]}
    index = 0
    while f"layers.{index}.qkv.weight" in exported:
        mine, theirs = f"layers.{index}.", f"encoder.layer.{index}."
        for kind in ("weight", "bias"):
            for name, part in zip(("query", "key", "value"), np.split(exported[mine + f"qkv.{kind}"], 3)):
                out[theirs + f"attention.self.{name}.{kind}"] = part
            for short, long in LAYER_NAMES.items():
                out[theirs + f"{long}.{kind}"] = exported[mine + f"{short}.{kind}"]
        index += 1
    return out


def load_start(path: Path, tower: str | None = None) -> tuple[Verifier, dict[str, str], bytes]:
    """The model holding `path`'s shared weights exactly (checked: exporting it again gives the
    same float16 tensors), the file's metadata and its bytes. A task's own tower
    (localeval/verifier/towers.py) is left out: the run trains the shared weights, and
    training/task_tower.py gives a task a tower again afterwards. With `tower`, the run starts
    from that task's tower instead (its layers and head, in float16, over the shared embeddings):
    a relevance run continues the relevance weights, not the statements'."""
    data = path.read_bytes()
    stored, metadata = read_tensors(data)
    exported = {name: value for name, value in stored.items() if not name.startswith(TOWER_PREFIX)}
    if tower:
        own = {name[len(f"{TOWER_PREFIX}{tower}.") :]: value for name, value in expand(stored).items() if name.startswith(f"{TOWER_PREFIX}{tower}.")}
        if not own:
            raise SystemExit(f"{path}: no {tower} tower to start from")
        exported.update({name: value.astype(np.float16) for name, value in own.items()})
        print(f"{path}: starting from its {tower} tower ({len(own)} tensors)", flush=True)
    elif len(exported) < len(stored):
        print(f"{path}: its task towers are left out; this run trains the shared weights", flush=True)
    model = Verifier(base_names(exported))
    with torch.no_grad():
        model.out.weight.copy_(torch.from_numpy(exported["head.out.weight"].astype(np.float32)))
        model.out.bias.copy_(torch.from_numpy(exported["head.out.bias"].astype(np.float32)))
    again = model.export()
    if set(again) != set(exported) or any(not np.array_equal(again[k], exported[k]) for k in exported):
        raise SystemExit(f"{path}: the model does not reproduce the file's tensors; the loader and the exporter disagree")
    return model, metadata, data


class Packed:
    """pack_rows.py's archive: rows as token-id slices of one array."""

    def __init__(self, path: Path) -> None:
        with np.load(path) as archive:
            self.tokens = archive["tokens"].astype(np.int64)
            self.offsets = archive["offsets"]
            self.task = archive["task"].astype(np.int64)
            self.label = archive["label"].astype(np.float32)
            self.split = archive["split"]
            self.source = archive["source"]
            self.sources = [str(s) for s in archive["sources"]]
            self.tasks = tuple(str(t) for t in archive["tasks"])
            self.max_tokens = [int(n) for n in archive["max_tokens"]]
            self.verifier_sha256 = str(archive["verifier_sha256"])
            self.rows_sha256 = str(archive["rows_sha256"])
        self.lengths = np.diff(self.offsets)

    def batch(self, rows: np.ndarray, device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        length = int(self.lengths[rows].max())
        ids = np.zeros((len(rows), length), dtype=np.int64)
        mask = np.zeros((len(rows), length), dtype=bool)
        for i, r in enumerate(rows):
            ids[i, : self.lengths[r]] = self.tokens[self.offsets[r] : self.offsets[r + 1]]
            mask[i, : self.lengths[r]] = True
        to = lambda a: torch.from_numpy(a).to(device, non_blocking=True)  # noqa: E731
        return to(ids), to(mask), to(self.task[rows]), to(self.label[rows])


def plan(packed: Packed, rows: np.ndarray, size: int, rng: random.Random) -> list[np.ndarray]:
    """Shuffled batches of similar lengths: shuffle, sort within pools of 50 batches, shuffle the batches."""
    order = list(rows)
    rng.shuffle(order)
    out = []
    for start in range(0, len(order), size * 50):
        pool = sorted(order[start : start + size * 50], key=lambda r: packed.lengths[r])
        out += [np.array(pool[i : i + size]) for i in range(0, len(pool), size)]
    rng.shuffle(out)
    return out


def predict(model: Verifier, packed: Packed, rows: np.ndarray, device: torch.device, autocast: bool) -> list[float]:
    """Each row's logit for its own task."""
    model.eval()
    order = rows[np.argsort(packed.lengths[rows], kind="stable")]
    values: dict[int, float] = {}
    with torch.no_grad(), torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
        for start in range(0, len(order), 256):
            part = order[start : start + 256]
            ids, mask, task, _ = packed.batch(part, device)
            out = model(ids, mask).float().gather(1, task[:, None])[:, 0]
            values.update(zip(part.tolist(), out.tolist()))
    model.train()
    return [values[int(r)] for r in rows]


def figures(model: Verifier, packed: Packed, rows: np.ndarray, device: torch.device, autocast: bool) -> dict[str, Any]:
    """Per task the cut and slope set on these rows, and per source AUC and balanced accuracy."""
    logits = predict(model, packed, rows, device, autocast)
    described = [{"task": packed.tasks[packed.task[r]], "label": int(packed.label[r]), "source": packed.sources[packed.source[r]]} for r in rows]
    calibration = calibrate(described, logits)
    return {"calibration": calibration, "validation": evaluate(described, logits, calibration)}


def write_parts(data: bytes, out: Path, part_bytes: int) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    parts = []
    for number, start in enumerate(range(0, len(data), part_bytes)):
        chunk = data[start : start + part_bytes]
        name = f"verifier.safetensors.part{number:02d}"
        (out / name).write_bytes(chunk)
        parts.append({"name": name, "bytes": len(chunk), "sha256": hashlib.sha256(chunk).hexdigest()})
    manifest = {"file": "verifier.safetensors", "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "parts": parts}
    (out / "parts.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--packed", type=Path, default=ROOT / "training" / ".cache" / "packed" / "rows.npz")
    parser.add_argument("--start", type=Path, default=SHIPPED, help="the weights to start from (default: the shipped verifier)")
    parser.add_argument("--out", type=Path, default=Path(os.environ["OUT"]) if os.environ.get("OUT") else ROOT / "training" / ".cache" / "device_out")
    parser.add_argument("--work", type=Path, default=ROOT / "training" / ".cache" / "work", help="the checkpoint for a resumable (CPU) run")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--minutes", type=float, help="wall-clock budget for the training steps; validation and writing come after (default: 6 on a GPU; none on the CPU, where a stop loses nothing but leaves the learning rate undecayed)")
    parser.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: epochs and --minutes decide)")
    parser.add_argument("--checkpoint-steps", type=int, default=0, help="save a resumable checkpoint every this many steps (0: only at the end, on the CPU)")
    parser.add_argument("--validation-limit", type=int, default=0, help="score this many validation rows only (a smoke test)")
    parser.add_argument("--part-mib", type=float, default=15.0)
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: torch's default)")
    parser.add_argument("--focus", default="", help="comma-separated sources: train on their rows plus a --replay sample of the others (replay.py)")
    parser.add_argument("--replay", type=float, default=1.0, help="with --focus: rows of the other sources per focus row")
    parser.add_argument("--start-tower", choices=TASKS, help="start from this task's tower of --start (its layers and head) instead of the shared weights")
    parser.add_argument("--epoch-towers", choices=TASKS, help="write this task's tower at the end of every epoch (TASK_tower_stepNNNNNN.safetensors) instead of the kept weights' parts")
    args = parser.parse_args()
    if args.epoch_towers and math.ceil(args.epochs) > 7:
        parser.error("--epoch-towers: at most 7 epochs (a tower a file, with the log at most 8 files come back from a device)")
    for path in (args.packed, args.start, args.out, args.work):
        refuse_sealed(path)
    started = time.perf_counter()
    torch.manual_seed(SEED)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    autocast = device.type == "cuda"
    if args.minutes is None:
        args.minutes = 6.0 if autocast else math.inf
    packed = Packed(args.packed)
    model, metadata, start_bytes = load_start(args.start, args.start_tower)
    start_sha = hashlib.sha256(start_bytes).hexdigest()
    if packed.tasks != TASKS or packed.max_tokens != [json.loads(metadata["max_tokens"])[t] for t in TASKS]:
        raise SystemExit(f"{args.packed}: packed for tasks {packed.tasks} and budgets {packed.max_tokens}, not this verifier's")
    if packed.verifier_sha256 != start_sha:
        print(f"note: rows packed with verifier {packed.verifier_sha256[:12]}, starting from {start_sha[:12]} (same vocabulary required)", flush=True)
    model.to(device)
    rng = random.Random(SEED)
    train = np.flatnonzero(packed.split == 0)
    focus = [name for name in args.focus.split(",") if name]
    if focus:
        try:
            train = continue_rows(packed.source, packed.sources, train, focus, args.replay, SEED)
        except ValueError as error:
            raise SystemExit(f"--focus/--replay: {error}") from None
    rows_id = selection_id(packed.rows_sha256, train, focus)
    validation = np.flatnonzero(packed.split == 1)
    if args.validation_limit:
        validation = np.array(sorted(random.Random(SEED).sample(list(validation), min(args.validation_limit, len(validation)))))
    batches = plan(packed, train, args.batch, rng)
    while len(batches) < int(len(train) / args.batch * args.epochs):
        batches += plan(packed, train, args.batch, rng)
    total = int(len(train) / args.batch * args.epochs)
    if args.max_steps:
        total = min(total, args.max_steps)
    log: dict[str, Any] = {"start_sha256": start_sha, "rows_sha256": packed.rows_sha256, "device": torch.cuda.get_device_name(device) if autocast else "cpu",
                           "train_rows": len(train), "focus": focus, "replay": args.replay if focus else None, "validation_rows": len(validation), "batch": args.batch, "lr": args.lr, "epochs": args.epochs, "loss": []}
    print(f"{len(train)} training rows, {len(validation)} validation rows, {total} steps planned on {log['device']}", flush=True)
    positive_weight = torch.ones(len(TASKS), device=device)
    for t in range(len(TASKS)):
        labels = packed.label[train][packed.task[train] == t]
        if labels.sum():
            positive_weight[t] = float((len(labels) - labels.sum()) / labels.sum())
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01, fused=autocast)
    schedule = {"total": total, "warmup": max(1, total // 10)}
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min((s + 1) / schedule["warmup"], max(0.0, (schedule["total"] - s) / max(1, schedule["total"] - schedule["warmup"]))))
    checkpoint = args.work / "device_checkpoint.pt"
    step = 0
    if checkpoint.is_file():
        state = torch.load(checkpoint, weights_only=False, map_location=device)
        if state["start_sha256"] != start_sha or state["rows_sha256"] != rows_id:
            raise SystemExit(f"{checkpoint}: a checkpoint of other weights or rows; remove it to start over")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        schedule.update(state["schedule"])
        if device.type == "cuda":
            total = schedule["total"]
        schedule["total"] = total  # on the CPU, a rerun with a larger --max-steps goes on to it
        log["loss"] = state["loss"]
        torch.set_rng_state(state["torch_rng"])
        step = state["step"]
        print(f"resumed at step {step} of {total}", flush=True)
    before = figures(model, packed, validation, device, autocast) if step == 0 else None
    epoch_steps = max(1, len(train) // args.batch)
    best: dict[str, Any] = {"score": -1.0}

    def keep(at: int, seen: dict[str, Any]) -> None:
        """Remember the weights at the end of an epoch (and at the end) when their validation
        score is the best so far: a second epoch has helped and has hurt before. The score is the
        mean AUC of every source; a continue-run's --focus sources' mean is logged beside it. Neither
        is the whole-sample figure a metric gives (the relevance run of 2026-11-27: the focus mean
        preferred the epoch whose figure was 0.037 worse), hence --epoch-towers."""
        score, focused = mean_auc(seen["validation"]), mean_auc(seen["validation"], focus)
        log.setdefault("epochs_seen", []).append({"step": at, "score": score, **({"focus_sources": focused} if focus else {})})
        print(f"validation score at step {at}: {score:.4f}{f' (focus sources: {focused:.4f})' if focus else ''}", flush=True)
        if score > best["score"]:
            best.update(score=score, step=at, figures=seen, state={k: v.detach().clone() for k, v in model.state_dict().items()})
        if args.epoch_towers:
            run = write_tensors(model.export(), {**metadata, "calibration": json.dumps(seen["calibration"]), "validation": json.dumps(seen["validation"])})
            tower = epoch_tower(start_bytes, run, args.epoch_towers, at)
            name = f"{args.epoch_towers}_tower_step{at:06d}.safetensors"
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / name).write_bytes(tower)
            log.setdefault("towers", []).append({"step": at, "file": name, "bytes": len(tower), "sha256": hashlib.sha256(tower).hexdigest()})

    model.train()
    budget = args.minutes * 60
    training_started, running, warm = time.perf_counter(), 0.0, 0.0
    index = step
    while index < total:
        ids, mask, task, label = packed.batch(batches[index], device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
            logit = model(ids, mask).float().gather(1, task[:, None])[:, 0]
        weight = torch.where(label > 0, positive_weight[task], 1.0)
        loss = (nn.functional.binary_cross_entropy_with_logits(logit, label, reduction="none") * weight).sum() / weight.sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        index += 1
        running = loss.item() if index == step + 1 else 0.98 * running + 0.02 * loss.item()
        elapsed = time.perf_counter() - training_started
        if index == 10:
            warm = elapsed
        if index == 40 and step == 0 and device.type == "cuda":
            # Fit the schedule to the steps the budget allows, measured on steps 11-40 (past the warm-up of the kernels).
            fitting = int((budget - warm) / ((elapsed - warm) / 30))
            if fitting < total:
                schedule["total"] = total = max(fitting, index + 1)
                schedule["warmup"] = min(schedule["warmup"], max(1, total // 10))
                print(f"the budget allows {total} steps: the schedule now ends there", flush=True)
        if index % epoch_steps == 0 and total - index > epoch_steps // 2:  # an epoch ending near the last step is scored there, once
            keep(index, figures(model, packed, validation, device, autocast))
        if index % 50 == 0 or index == total:
            log["loss"].append([index, round(running, 4)])
            print(f"step {index}/{total} loss {running:.4f} {(index - step) / elapsed:.1f} steps/s", flush=True)
        if args.checkpoint_steps and index % args.checkpoint_steps == 0 and index < total:
            save(checkpoint, model, optimizer, scheduler, schedule, log, index, start_sha, rows_id)
        if elapsed > budget * 1.05 and index < total:
            print(f"stopped at step {index}: past the {args.minutes} min budget", flush=True)
            break
    log["steps"] = index
    log["train_seconds"] = round(time.perf_counter() - training_started, 1)
    if device.type == "cpu":
        save(checkpoint, model, optimizer, scheduler, schedule, log, index, start_sha, rows_id)
    keep(index, figures(model, packed, validation, device, autocast))
    model.load_state_dict(best["state"])
    after = best["figures"]
    log["kept_step"] = best["step"]
    log["validation_before"], log["validation_after"] = before, after
    if before is not None:
        log["start_score"], log["kept_score"] = mean_auc(before["validation"]), best["score"]
        log["beats_start_on_validation"] = best["score"] > log["start_score"]
    model.cpu()
    if args.epoch_towers:
        print(f"wrote {len(log['towers'])} {args.epoch_towers} towers (steps {', '.join(str(t['step']) for t in log['towers'])}; kept by validation: {best['step']}) -> {args.out}")
    else:
        new_metadata = {**metadata, "parent_sha256": start_sha, "rows_sha256": packed.rows_sha256, "validation": json.dumps(after["validation"]), "calibration": json.dumps(after["calibration"]),
                        "training": json.dumps({"rows": len(train), "focus": focus, "replay": args.replay if focus else None, "steps": best["step"], "batch": args.batch, "lr": args.lr,
                                                "seed": SEED, "start": "shipped verifier", "device": log["device"]})}
        log["weights"] = write_parts(write_tensors(model.export(), new_metadata), args.out, int(args.part_mib * 2**20))
        print(f"wrote {len(log['weights']['parts'])} parts, SHA-256 {log['weights']['sha256']} -> {args.out}")
    log["seconds"] = round(time.perf_counter() - started, 1)
    (args.out / "train_log.json").write_text(json.dumps(log, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: log.get(k) for k in ("steps", "kept_step", "train_seconds", "seconds", "start_score", "kept_score", "beats_start_on_validation",
                                              "epochs_seen", "validation_before", "validation_after")}, indent=1))
    if not math.isfinite(running):
        raise SystemExit("the loss is not finite: do not use these weights")


def save(path: Path, model: Verifier, optimizer: Any, scheduler: Any, schedule: dict[str, int], log: dict[str, Any], step: int, start: str, rows: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(), "schedule": schedule, "loss": log["loss"],
                "torch_rng": torch.get_rng_state(), "step": step, "start_sha256": start, "rows_sha256": rows}, path)
    print(f"checkpoint at step {step} -> {path}", flush=True)


if __name__ == "__main__":
    main()
