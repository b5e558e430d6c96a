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
FEED_FORWARD_ROWS = 128  # tokens per feed-forward step: 128 x 1536 float32 activations fit a core's L2 cache
__all__ = ["LAYER_NORM_EPS", "TASKS", "Encoder"]

Array = NDArray[np.floating[Any]]


def _layer_norm(x: Array, weight: Array, bias: Array) -> Array:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    normed: Array = ((x - mean) / np.sqrt(var + LAYER_NORM_EPS)) * weight + bias
    return normed


def _gelu(x: Array) -> Array:
    """GELU's tanh form, overwriting `x` (a fresh product the caller no longer needs): in place,
    so the feed-forward block's activations are not copied a dozen times."""
    inner = x * x
    inner *= np.float32(0.044715)
    inner += np.float32(1.0)
    inner *= x
    inner *= np.float32(0.7978845608028654)
    np.tanh(inner, out=inner)
    inner += np.float32(1.0)
    x *= inner
    x *= np.float32(0.5)
    return x


# erf(z) = z * P(z^2) / Q(z^2) on [-4, 4] (outside it erf is +-1 in float32): the rational fit
# XLA and Eigen use for float32 erf, within 5e-7 of math.erf (tests/test_encoder_kernels.py). No
# exp: numpy's float32 exp runs unvectorised on many CPUs (6 ns an element here), and it made
# GELU cost as much as the matrix products around it.
ERF_NUMERATOR = tuple(np.float32(c) for c in (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
                                              -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02))
ERF_DENOMINATOR = tuple(np.float32(c) for c in (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
                                                -1.42647390514189e-02))


def _polynomial(square: Array, coefficients: Sequence[np.float32]) -> Array:
    """Horner's rule in `square`, highest power first."""
    out: Array = square * coefficients[0]
    out += coefficients[1]
    for coefficient in coefficients[2:]:
        out *= square
        out += coefficient
    return out


def _erf(x: Array) -> Array:
    """The error function in float32 (numpy has none, and scipy is not a dependency)."""
    z = np.clip(x, np.float32(-4.0), np.float32(4.0))
    square = z * z
    out = _polynomial(square, ERF_NUMERATOR)
    out *= z
    out /= _polynomial(square, ERF_DENOMINATOR)
    return out


def _gelu_erf(x: Array) -> Array:
    """GELU as BERT checkpoints compute it (x * Phi(x)), for models trained with it (the embedding
    model); overwrites `x`, as _gelu does."""
    phi = _erf(x * np.float32(0.7071067811865476))
    phi += np.float32(1.0)
    x *= phi
    x *= np.float32(0.5)
    return x


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
        """One post-norm transformer layer. The dense products run on the batch's tokens as one
        matrix (one BLAS call each, not one per input), and the feed-forward block runs FEED_FORWARD_ROWS
        tokens at a time, so its activations (four times the width) stay in cache between the
        products and GELU."""
        batch, length, width = x.shape
        size = width // self.heads
        flat = x.reshape(batch * length, width)
        qkv = (flat @ p["qkv.weight"].T + p["qkv.bias"]).reshape(batch, length, 3, self.heads, size).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = (q @ k.transpose(0, 1, 3, 2)) / np.float32(np.sqrt(size)) + bias
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attention = scores / scores.sum(-1, keepdims=True)
        context = (attention @ v).transpose(0, 2, 1, 3).reshape(batch * length, width)
        flat = _layer_norm(flat + context @ p["attention_out.weight"].T + p["attention_out.bias"], p["attention_norm.weight"], p["attention_norm.bias"])
        out = np.empty_like(flat)
        for start in range(0, len(flat), FEED_FORWARD_ROWS):
            rows = flat[start : start + FEED_FORWARD_ROWS]
            hidden = self.gelu(rows @ p["up.weight"].T + p["up.bias"])
            out[start : start + FEED_FORWARD_ROWS] = rows + hidden @ p["down.weight"].T + p["down.bias"]
        normed: Array = _layer_norm(out, p["output_norm.weight"], p["output_norm.bias"]).reshape(batch, length, width)
        return normed
