"""Faithfulness: the share of the response's statements that the retrieved contexts support.

ragas' Faithfulness (the hallucination check): the response is split into statements and each
is attributed to the retrieved contexts or not; score = supported / statements. The statements
and their verdicts come from the engine context_recall uses (localeval.metrics.recall:
evidence, the judge's Yes/No on the best chunks, the calibrated rule, `--verifier`, rubric,
evidence sentences and a reason per statement), so a statement the reference and the response
share gets one verdict, asked once when both metrics run (localeval.judge.shared). The
calibration is context_recall's ("attribution"): it is the same question, asked in the same
prompt, about the same kind of text (a sentence that should follow from the contexts).

A response without statements (empty, or only blanks) scores NaN, as ragas 0.4.3 does
(`Faithfulness._ascore` returns np.nan when no statement is generated): no statement is
unsupported, and none is supported either.
"""

from __future__ import annotations

from localeval.metrics.recall import AttributedStatements


class Faithfulness(AttributedStatements):
    name = "faithfulness"
    description = "Share of the response's statements that the judge finds supported by the retrieved contexts (hallucination check)."
    required_fields = ("user_input", "retrieved_contexts", "response")
    statements_field = "response"
