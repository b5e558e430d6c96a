"""The verifier's forward pass in numpy: a BERT encoder and a two-logit head, no torch.

The architecture is the one training/train_verifier.py trains, written twice on purpose (torch
there, numpy here) and checked against each other by tests/test_verifier.py within 1e-3: word
and position embeddings (token type 0 is folded into them), post-norm transformer layers with
GELU (tanh form, the one both sides compute), and a head `out(tanh(dense(h_CLS)))` with one
logit per task. Weights are stored in float16 and computed in float32.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from localeval.verifier.pairs import TASKS

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


class Encoder:
    """Logits for padded batches of token ids. `weights` maps the tensor names train_verifier.py writes.

    The same encoder runs the embedding model (localeval.models.embedding): its weights carry no head,
    it reads the hidden states (`hidden_states`), and it computes GELU with erf, as it was trained."""

    def __init__(self, weights: Mapping[str, np.ndarray], heads: int, gelu: str = "tanh") -> None:
        w = {name: np.asarray(value, dtype=np.float32) for name, value in weights.items()}
        self.word = w["embeddings.word"]
        self.position = w["embeddings.position"] + w["embeddings.token_type"][0]
        self.norm = (w["embeddings.norm.weight"], w["embeddings.norm.bias"])
        self.layers = []
        index = 0
        while f"layers.{index}.qkv.weight" in w:
            p = f"layers.{index}."
            self.layers.append({k[len(p):]: v for k, v in w.items() if k.startswith(p)})
            index += 1
        self.heads = heads
        self.gelu = GELU[gelu]
        self.head = (w["head.dense.weight"], w["head.dense.bias"], w["head.out.weight"], w["head.out.bias"]) if "head.dense.weight" in w else None
        self.max_tokens = self.position.shape[0]

    def logits(self, batch: Sequence[Sequence[int]]) -> Array:
        """One row of task logits per input (inputs of any lengths up to max_tokens; padded here)."""
        if self.head is None:
            raise ValueError("these weights have no head: read hidden_states instead")
        x, _ = self.hidden_states(batch)
        dense_w, dense_b, out_w, out_b = self.head
        pooled = np.tanh(x[:, 0] @ dense_w.T + dense_b)
        logits: Array = (pooled @ out_w.T + out_b).astype(np.float32)
        return logits

    def hidden_states(self, batch: Sequence[Sequence[int]]) -> tuple[Array, NDArray[np.bool_]]:
        """The last layer's hidden states of each input (padded to the longest) and the mask of
        its real tokens."""
        length = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), length), dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=bool)
        for row, tokens in enumerate(batch):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = True
        x = _layer_norm(self.word[ids] + self.position[:length], *self.norm)
        bias = np.where(mask, 0.0, -1e9).astype(np.float32)[:, None, None, :]
        for layer in self.layers:
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
