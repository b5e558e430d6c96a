"""The embedding model answer_relevancy reads (localeval.models.embedding): all-MiniLM-L6-v2 from the model
store, run on the verifier's numpy encoder. Checked against an independent implementation of
sentence-transformers' formula for this model (a BERT forward pass written here from the
checkpoint's own tensor names, exact erf GELU, float64, one text at a time; mean pooling over
the tokens; L2 normalisation), against the values sentence-transformers gives for the model
card's two example sentences, and for what a caller relies on: unit vectors, batches that
change nothing, one load per process, a clear error when the model is not pulled."""

from __future__ import annotations

import json
import math
import struct

import numpy as np
import pytest

from localeval.errors import ModelError
from localeval.models import embedding
from localeval.models import store as models

# The first eight values of sentence-transformers' embeddings of the model card's example
# sentences (SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2").encode([...])).
PUBLISHED = {
    "This is an example sentence": [0.0676569, 0.0634959, 0.0487131, 0.0793050, 0.0374481, 0.0026528, 0.0393749, -0.0070985],
    "Each sentence is converted": [0.0864386, 0.1027627, 0.0053946, 0.0020444, -0.0099634, 0.0253855, 0.0492876, -0.0306265],
}


@pytest.fixture(scope="module")
def embedder(embedding_model):
    return embedding.load_embedder()


def _checkpoint(path) -> dict[str, np.ndarray]:
    """The safetensors file read here in a few lines (not with localeval's reader), as float64."""
    data = path.read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    header.pop("__metadata__", None)
    body = data[8 + size :]
    kinds = {"F32": np.float32, "I64": np.int64}
    return {name: np.frombuffer(body[s:e], dtype=kinds[spec["dtype"]]).reshape(spec["shape"]).astype(np.float64)
            for name, spec in header.items() for s, e in [spec["data_offsets"]]}


def _norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-12) * weight + bias


def _reference(t: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    """BertModel's last hidden state for one text, mean-pooled and normalised (sentence-transformers'
    Transformer -> Pooling(mean) -> Normalize for this model)."""
    erf = np.vectorize(math.erf)
    n = len(ids)
    x = _norm(t["embeddings.word_embeddings.weight"][ids] + t["embeddings.position_embeddings.weight"][:n] + t["embeddings.token_type_embeddings.weight"][0],
              t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"])
    for layer in range(6):
        p = f"encoder.layer.{layer}."

        def dense(h: np.ndarray, name: str, prefix: str = p) -> np.ndarray:
            return h @ t[prefix + name + ".weight"].T + t[prefix + name + ".bias"]

        q, k, v = (dense(x, f"attention.self.{part}").reshape(n, 12, 32).transpose(1, 0, 2) for part in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(32)
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        context = (weights / weights.sum(-1, keepdims=True) @ v).transpose(1, 0, 2).reshape(n, 384)
        x = _norm(x + dense(context, "attention.output.dense"), t[p + "attention.output.LayerNorm.weight"], t[p + "attention.output.LayerNorm.bias"])
        hidden = dense(x, "intermediate.dense")
        hidden = 0.5 * hidden * (1 + erf(hidden / math.sqrt(2)))
        x = _norm(x + dense(hidden, "output.dense"), t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"])
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def test_the_numpy_embedding_is_sentence_transformers_formula_computed_independently(embedder, embedding_model):
    tensors = _checkpoint(embedding_model)
    texts = [
        "When was the first super bowl?",
        "Zoë's café, naïve résumé — and 3.5% of U.S. GDP (2023)!",
        " ".join(["The museum opened its doors to visitors in spring"] * 40),  # over 256 word pieces: cut as sentence-transformers cuts it
    ]
    ours = embedder.embed(texts)
    for text, vector in zip(texts, ours):
        ids = embedder.tokens(text)
        assert len(ids) <= embedding.MAX_TOKENS
        assert np.abs(vector - _reference(tensors, ids)).max() < 2e-5


def test_the_embeddings_are_the_published_ones(embedder):
    assert embedder.tokens("This is an example sentence") == [101, 2023, 2003, 2019, 2742, 6251, 102]  # BERT uncased ids
    vectors = embedder.embed(list(PUBLISHED))
    for vector, expected in zip(vectors, PUBLISHED.values()):
        assert np.abs(vector[:8] - np.array(expected)).max() < 2e-6
    assert float(vectors[0] @ vectors[1]) == pytest.approx(0.4046, abs=1e-3)


def test_vectors_are_unit_length_and_do_not_depend_on_the_batch(embedder):
    texts = ["Where does the Danube end?", "a", "", "Which countries does the Amazon river flow through, and where does it end?"]
    together = embedder.embed(texts)
    alone = np.stack([embedder.embed([text])[0] for text in texts])
    assert together.dtype == np.float32 and together.shape == (4, 384)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert np.abs(together - alone).max() < 1e-5  # padding changes nothing
    assert np.array_equal(embedder.embed(texts), together)  # same texts, same vectors


def test_the_model_loads_once_per_process(embedder):
    assert embedding.load_embedder() is embedder
    assert embedder.describe() == {"model": "all-minilm-l6-v2", "sha256": models.CATALOG["all-minilm-l6-v2"].sha256}


def test_a_model_not_pulled_says_how_to_pull_it(tmp_path, monkeypatch):
    monkeypatch.setenv(models.HOME_ENV, str(tmp_path))
    embedding.load_embedder.cache_clear()
    try:
        with pytest.raises(ModelError, match="localeval models pull all-minilm-l6-v2"):
            embedding.load_embedder()
    finally:
        embedding.load_embedder.cache_clear()


def test_the_embedding_model_is_no_judge():
    assert models.CATALOG["all-minilm-l6-v2"].kind == "embedding"
    with pytest.raises(ModelError, match="not a judge"):
        models.resolve_model("all-minilm-l6-v2")
