"""Stand-ins the ragas parity tests share: ragas' LLM as a scripted judge (the claims it writes
and its NLI verdict on each), ragas' own cosine of two texts, and an embedding model of known
vectors. One copy each, so every metric's parity is checked against the same reading of ragas."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from localeval.metrics import recall
from localeval.testing import ScriptedJudge, prompt_fields

# The judge's verdict alone decides attribution (P(supported) = P(Yes)): ragas' LLM verdicts are certain.
CERTAIN = {"attribution": {"intercept": 0.0, "weights": {f: 1.0 if f == "judge" else 0.0 for f in recall.FEATURES}}}


def ragas_judge(claims: dict[str, list[str]], verdicts: dict[str, int]) -> ScriptedJudge:
    """ragas' LLM: the claims of each text, and a verdict for each claim (by its text)."""

    def answer(messages: list[dict[str, str]], schema: Any) -> dict[str, Any]:
        decomposed = messages[-1]["content"].split("Answer: ", 1)[1].split("\n\nBreak the answer", 1)[0]
        return {"claims": claims[decomposed]}

    def verdict(messages: list[dict[str, str]]) -> float:
        kind, fields = prompt_fields(messages)
        assert kind == "attribution"
        return float(verdicts[fields["statement"]])

    return ScriptedJudge(verdict, answer, calibration=CERTAIN)


def ragas_cosine(first: str, second: str) -> float:
    """ragas' SemanticSimilarity before its threshold: each text embedded alone (an empty one as
    " "), normalised, their dot product."""
    from localeval.models.embedding import load_embedder

    embedder = load_embedder()
    left = np.asarray(embedder.embed([first or " "])[0], dtype=np.float64)
    right = np.asarray(embedder.embed([second or " "])[0], dtype=np.float64)
    return float((left / np.linalg.norm(left)) @ (right / np.linalg.norm(right)))


def embed_as(monkeypatch: pytest.MonkeyPatch, vectors: dict[str, list[float]]) -> list[list[str]]:
    """The embedding model replaced by `vectors` (each text's vector, float32 as the model's are),
    for arithmetic pinned on known cosines; the list returned records each call's texts (a call
    of groups, `embed_groups`, as its texts group after group)."""
    calls: list[list[str]] = []

    class Known:
        def embed(self, texts: list[str]) -> np.ndarray:
            calls.append(list(texts))
            return np.array([vectors[text] for text in texts], dtype=np.float32)

        def embed_groups(self, groups: list[list[str]]) -> list[np.ndarray]:
            calls.append([text for texts in groups for text in texts])
            return [np.array([vectors[text] for text in texts], dtype=np.float32) for texts in groups]

        def is_cut(self, text: str) -> bool:  # the known texts are short
            return False

    monkeypatch.setattr("localeval.models.embedding.load_embedder", lambda: Known())
    return calls
