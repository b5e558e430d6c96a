"""localeval's trained verifier: a small cross-encoder that scores (question, sentence) and
(statement, evidence) pairs, the main evidence of context_relevance and context_recall.

It is this project's own artefact (training/train_verifier.py trains it; MODEL_CARD.md says on
what), shipped as package data in one file: float16 weights (and the relevance task's own tower,
stored as int8 differences: towers.py), the WordPiece vocabulary and its calibration, in
safetensors format. The file's SHA-256 is checked when it is loaded, so a
modified or truncated file is refused instead of giving other scores. It runs in numpy
(encoder.py): no torch, no model download, nothing read from the network.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from localeval.errors import ConfigError
from localeval.verifier.batches import forward_sorted
from localeval.verifier.pairs import TASKS, pack
from localeval.verifier.wordpiece import WordPiece

# numpy (encoder.py, tensors.py) is imported when a verifier is loaded, not with the metrics: a
# run of the string metrics alone does not pay for it, and a machine that cannot load numpy fails
# only where the verifier is needed.

FILE_NAME = "verifier.safetensors"
# The shipped file's SHA-256: a retrain changes both (training/train_verifier.py prints it).
SHIPPED_SHA256 = "2815fa88348d507f35222327e199e5bb3e66b68e964759a38c55c7c18d88e0cf"
FORMAT = "localeval-verifier"
BATCH = 32  # pairs per forward pass (sorted by length, so padding stays small)
MAX_FILE_BYTES = 200 << 20


@dataclass(frozen=True)
class TaskCalibration:
    """P(yes) = sigmoid(scale * (logit - cut)): `cut` is where the training script's validation
    rows were best decided (F1 for relevance, balanced accuracy for attribution), so 0.5 is the
    default threshold of both metrics; `scale` from a logistic fit on the same rows."""

    scale: float
    cut: float
    passage_weight: float = 0.0  # relevance: the share of the best logit in the unit's context added to its own

    def probability(self, logit: float) -> float:
        value = max(-30.0, min(30.0, self.scale * (logit - self.cut)))
        return 1.0 / (1.0 + math.exp(-value))


class Verifier:
    """Scores pairs for one task at a time; deterministic (same inputs, same scores)."""

    def __init__(self, path: str, data: bytes) -> None:
        from localeval.verifier.encoder import Encoder
        from localeval.verifier.tensors import TensorFileError, read_tensors
        from localeval.verifier.towers import expand

        try:
            tensors, metadata = read_tensors(data)
        except TensorFileError as exc:
            raise ConfigError(f"{path}: not a localeval verifier ({exc})") from None
        if metadata.get("format") != FORMAT:
            raise ConfigError(f"{path}: not a localeval verifier (no format {FORMAT!r} in its metadata)")
        try:
            self.tokenizer = WordPiece.from_lines(metadata["vocab"])
            self.max_tokens: dict[str, int] = {str(k): int(v) for k, v in json.loads(metadata["max_tokens"]).items()}
            calibration = json.loads(metadata["calibration"])
            self.calibration = {
                task: TaskCalibration(float(calibration[task]["scale"]), float(calibration[task]["cut"]), float(calibration[task].get("passage_weight", 0.0)))
                for task in TASKS
            }
            if not all(math.isfinite(v) and abs(v) <= 1000 for c in self.calibration.values() for v in (c.scale, c.cut, c.passage_weight)):
                raise ValueError("calibration numbers out of range")
            self.encoder = Encoder(expand(tensors), int(metadata["heads"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{path}: a verifier file with missing or malformed parts ({exc!r})") from None
        self.path = path
        self.sha256 = hashlib.sha256(data).hexdigest()

    def describe(self) -> dict[str, str]:
        """What a run's header records: a resume with another verifier is refused."""
        return {"file": Path(self.path).name, "sha256": self.sha256}

    def caching_encode(self) -> Callable[[str], list[int]]:
        """The tokenizer, remembering each text's ids: one per sample, shared by whatever reads
        its texts (cutting them into pieces that fit, then `logits`), so each is tokenized once."""
        tokenized: dict[str, list[int]] = {}

        def encode(text: str) -> list[int]:
            if text not in tokenized:
                tokenized[text] = self.tokenizer.encode(text)
            return tokenized[text]

        return encode

    def logits(self, task: str, pairs: Sequence[tuple[str, str, str]], encode: Callable[[str], list[int]] | None = None) -> list[float]:
        """The task's logit for each (a, b, c) pair (pairs.py says what each text is). A text that
        several pairs share (the question; the context every one of its units is read with) is
        tokenized once, so the cost grows with the input, not with units x context length."""
        column = TASKS.index(task)
        encode = encode or self.caching_encode()
        inputs = [pack(self.tokenizer, a, b, c, self.max_tokens[task], encode) for a, b, c in pairs]
        rows = forward_sorted(inputs, BATCH, lambda batch: self.encoder.logits(batch, task)[:, column])
        return [float(value) for value in rows]


def shipped_path() -> Path:
    return Path(str(resources.files("localeval.verifier").joinpath(FILE_NAME)))


@lru_cache(maxsize=1)
def load_verifier() -> Verifier:
    """The shipped verifier, its SHA-256 checked (once per process)."""
    path = shipped_path()
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ConfigError(f"{path}: {size} bytes, larger than a verifier can be")
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"the verifier file is missing from this installation ({path}: {exc.strerror}); reinstall localeval") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHIPPED_SHA256:
        raise ConfigError(f"{path}: SHA-256 {digest} is not the shipped verifier's ({SHIPPED_SHA256}); reinstall localeval")
    return Verifier(str(path), data)
