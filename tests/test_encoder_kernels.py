"""The numpy encoder's hand-written kernels (localeval.verifier.encoder): the float32 erf and both
GELU forms against float64 references, and a layer whose feed-forward block runs in row blocks
against the same layer computed in one piece. The verifier and the embedding model both run on
them, so a kernel that drifts moves every verdict and every cosine."""

from __future__ import annotations

import math

import numpy as np
import pytest

from localeval.verifier import encoder
from localeval.verifier.encoder import FEED_FORWARD_ROWS, Encoder


def test_erf_is_within_5e_7_of_math_erf_everywhere():
    grid = np.linspace(-8.0, 8.0, 400_001, dtype=np.float32)
    expected = np.array([math.erf(float(value)) for value in grid])
    assert np.abs(encoder._erf(grid).astype(np.float64) - expected).max() < 5e-7


@pytest.mark.parametrize("form", ["erf", "tanh"])
def test_gelu_matches_its_float64_formula(form):
    x = np.linspace(-10.0, 10.0, 20_001, dtype=np.float32)
    wide = x.astype(np.float64)
    if form == "erf":
        expected = 0.5 * wide * (1.0 + np.array([math.erf(v / math.sqrt(2.0)) for v in wide]))
    else:
        expected = 0.5 * wide * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (wide + 0.044715 * wide**3)))
    got = encoder.GELU[form](x.copy())
    assert got.dtype == np.float32
    assert np.abs(got - expected).max() < 2e-6


def _one_piece_layer(model: Encoder, x: np.ndarray, bias: np.ndarray, p: dict) -> np.ndarray:
    """The layer written plainly (every product at once), as the encoder computed it before it
    ran the feed-forward block in row blocks."""
    batch, length, width = x.shape
    size = width // model.heads
    qkv = (x @ p["qkv.weight"].T + p["qkv.bias"]).reshape(batch, length, 3, model.heads, size).transpose(2, 0, 3, 1, 4)
    scores = (qkv[0] @ qkv[1].transpose(0, 1, 3, 2)) / np.sqrt(size) + bias
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    context = ((scores / scores.sum(-1, keepdims=True)) @ qkv[2]).transpose(0, 2, 1, 3).reshape(batch, length, width)
    x = encoder._layer_norm(x + context @ p["attention_out.weight"].T + p["attention_out.bias"], p["attention_norm.weight"], p["attention_norm.bias"])
    hidden = model.gelu((x @ p["up.weight"].T + p["up.bias"]).astype(np.float32))
    return encoder._layer_norm(x + hidden @ p["down.weight"].T + p["down.bias"], p["output_norm.weight"], p["output_norm.bias"])


@pytest.mark.parametrize("gelu", ["erf", "tanh"])
def test_a_layer_in_row_blocks_equals_the_layer_in_one_piece(gelu):
    rng = np.random.default_rng(7)
    width, heads = 64, 4
    weights = {
        "embeddings.word": rng.normal(size=(50, width)),
        "embeddings.position": rng.normal(size=(64, width)),
        "embeddings.token_type": rng.normal(size=(2, width)),
        "embeddings.norm.weight": np.ones(width),
        "embeddings.norm.bias": np.zeros(width),
    }
    shapes = {"qkv": (3 * width, width), "attention_out": (width, width), "up": (4 * width, width), "down": (width, 4 * width)}
    for name, shape in shapes.items():
        weights[f"layers.0.{name}.weight"] = rng.normal(scale=0.2, size=shape)
        weights[f"layers.0.{name}.bias"] = rng.normal(scale=0.1, size=shape[0])
    for norm in ("attention_norm", "output_norm"):
        weights[f"layers.0.{norm}.weight"], weights[f"layers.0.{norm}.bias"] = np.ones(width), np.zeros(width)
    model = Encoder(weights, heads, gelu=gelu)
    batch = [list(rng.integers(1, 50, size=n)) for n in (40, 33, 7, 40, 25)]  # 200 padded tokens: more than one block
    assert 5 * 40 > FEED_FORWARD_ROWS
    got, mask = model.hidden_states(batch)
    ids = np.zeros((5, 40), dtype=np.int64)
    for row, tokens in enumerate(batch):
        ids[row, : len(tokens)] = tokens
    x = encoder._layer_norm(model.word[ids] + model.position[:40], *model.norm)
    bias = np.where(mask, 0.0, -1e9).astype(np.float32)[:, None, None, :]
    expected = _one_piece_layer(model, x, bias, model.layers[0])
    assert np.abs(got[mask] - expected[mask]).max() < 1e-4
