"""The verifier's forward pass in numpy: a BERT encoder and a two-logit head, no torch.

The architecture is the one training/train_verifier.py trains, written twice on purpose (torch
there, numpy here) and checked against each other by tests/test_verifier.py within 1e-3: word
and position embeddings (token type 0 is folded into them), post-norm transformer layers with
GELU (tanh form, the one both sides compute), and a head `out(tanh(dense(h_CLS)))` with one
logit per task. Weights are stored in float16 and computed in float32. A task may read its own
tower of layers and head over the shared embeddings (towers.py says why).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from localeval.verifier.pairs import TASKS
from localeval.verifier.towers import PREFIX as TOWER_PREFIX

LAYER_NORM_EPS = 1e-12
__all__ = ["LAYER_NORM_EPS", "TASKS", "Encoder"]

Array = NDArray[np.floating[Any]]


def _layer_norm(x: Array, weight: Array, bias: Array) -> Array:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    normed: Array = ((x - mean) / np.sqrt(var + LAYER_NORM_EPS)) * weight + bias
    return normed


def _gelu(x: Array) -> Array:
    out: Array = 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
    return out


def _erf(x: Array) -> Array:
    """The error function to within 1.5e-7 (Abramowitz and Stegun 7.1.26), below float32's
    resolution of GELU's output: numpy has no erf, and scipy is not a dependency."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    out: Array = sign * (1.0 - poly * np.exp(-a * a))
    return out


def _gelu_erf(x: Array) -> Array:
    """GELU as BERT checkpoints compute it (x * Phi(x)), for models trained with it (the embedding model)."""
    out: Array = (0.5 * x * (1.0 + _erf(x * np.float32(0.7071067811865476)))).astype(np.float32)
    return out


GELU = {"tanh": _gelu, "erf": _gelu_erf}
HEAD_NAMES = ("head.dense.weight", "head.dense.bias", "head.out.weight", "head.out.bias")


def _layers(w: Mapping[str, Array], prefix: str) -> list[dict[str, Array]]:
    """The layers under `prefix` ("" for the shared ones), in order; a tower may hold only the top
    ones, so a missing index is an empty dict (the shared layer is used there)."""
    indices = {int(name[len(prefix) :].split(".")[1]) for name in w if name.startswith(prefix + "layers.")}
    out: list[dict[str, Array]] = [{} for _ in range(max(indices) + 1)] if indices else []
    for index in indices:
        p = f"{prefix}layers.{index}."
        out[index] = {k[len(p) :]: v for k, v in w.items() if k.startswith(p)}
    return out


def _head(w: Mapping[str, Array], prefix: str) -> tuple[Array, ...] | None:
    return tuple(w[prefix + n] for n in HEAD_NAMES) if prefix + HEAD_NAMES[0] in w else None


class Encoder:
    """Logits for padded batches of token ids. `weights` maps the tensor names train_verifier.py writes.

    The same encoder runs the embedding model (localeval.models.embedding): its weights carry no head,
    it reads the hidden states (`hidden_states`), and it computes GELU with erf, as it was trained."""

    def __init__(self, weights: Mapping[str, np.ndarray], heads: int, gelu: str = "tanh") -> None:
        w = {name: np.asarray(value, dtype=np.float32) for name, value in weights.items()}
        self.word = w["embeddings.word"]
        self.position = w["embeddings.position"] + w["embeddings.token_type"][0]
        self.norm = (w["embeddings.norm.weight"], w["embeddings.norm.bias"])
        self.layers = _layers(w, "")
        self.heads = heads
        self.gelu = GELU[gelu]
        self.head = _head(w, "")
        self.max_tokens = self.position.shape[0]
        # A task's own tower (towers.py, already expanded to float32): any of the layers' and the
        # head's tensors, each in place of its shared one for that task alone.
        self.towers: dict[str, tuple[list[dict[str, Array]], tuple[Array, ...]]] = {}
        for task in sorted({name.split(".")[1] for name in w if name.startswith(TOWER_PREFIX)}):
            prefix = f"{TOWER_PREFIX}{task}."
            own = _layers(w, prefix)
            if task not in TASKS or len(own) > len(self.layers) or self.head is None:
                raise ValueError(f"a tower for {task!r} that these weights cannot hold")
            layers = [{**shared, **(own[i] if i < len(own) else {})} for i, shared in enumerate(self.layers)]
            head = tuple(w.get(prefix + name, shared) for name, shared in zip(HEAD_NAMES, self.head))
            self.towers[task] = (layers, head)

    def logits(self, batch: Sequence[Sequence[int]], task: str | None = None) -> Array:
        """One row of task logits per input (inputs of any lengths up to max_tokens; padded here),
        through `task`'s own tower when the weights give it one."""
        layers, head = self.towers.get(task or "", (self.layers, self.head))
        if head is None:
            raise ValueError("these weights have no head: read hidden_states instead")
        x, _ = self.hidden_states(batch, layers)
        dense_w, dense_b, out_w, out_b = head
        pooled = np.tanh(x[:, 0] @ dense_w.T + dense_b)
        logits: Array = (pooled @ out_w.T + out_b).astype(np.float32)
        return logits

    def hidden_states(self, batch: Sequence[Sequence[int]], layers: Sequence[Mapping[str, Array]] | None = None) -> tuple[Array, NDArray[np.bool_]]:
        """The last layer's hidden states of each input (padded to the longest) and the mask of
        its real tokens; through `layers` (a tower's) instead of the shared layers when given."""
        length = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), length), dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=bool)
        for row, tokens in enumerate(batch):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = True
        x = _layer_norm(self.word[ids] + self.position[:length], *self.norm)
        bias = np.where(mask, 0.0, -1e9).astype(np.float32)[:, None, None, :]
        for layer in self.layers if layers is None else layers:
            x = self._layer(x, bias, layer)
        return x, mask

    def _layer(self, x: Array, bias: Array, p: Mapping[str, Array]) -> Array:
        batch, length, width = x.shape
        size = width // self.heads
        qkv = (x @ p["qkv.weight"].T + p["qkv.bias"]).reshape(batch, length, 3, self.heads, size).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = (q @ k.transpose(0, 1, 3, 2)) / np.float32(np.sqrt(size)) + bias
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attention = scores / scores.sum(-1, keepdims=True)
        context = (attention @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)
        x = _layer_norm(x + context @ p["attention_out.weight"].T + p["attention_out.bias"], p["attention_norm.weight"], p["attention_norm.bias"])
        hidden = self.gelu(x @ p["up.weight"].T + p["up.bias"])
        out: Array = _layer_norm(x + hidden @ p["down.weight"].T + p["down.bias"], p["output_norm.weight"], p["output_norm.bias"])
        return out
