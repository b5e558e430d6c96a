"""The judge's prompts, as named constants with the reasoning for their wording.

Every verdict is one token, "Yes" or "No", read from the logits: no sampled
prose, no JSON to parse, and the probability feeds a calibrated combination
(localeval.calibration). Layout follows what works for small checkers (MiniCheck):
the document first and the question last, so the document is a prefix llama.cpp
evaluates once and every question about it costs only its own tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

from localeval.judge import Message

YES, NO = "Yes", "No"

# Claim attribution (context_recall): one short chunk of the context, then the
# statement. "Everything it says" matters: small judges otherwise accept a statement
# whose topic matches but whose details (a date, a cause) are not there.
ATTRIBUTION_SYSTEM = (
    "You check whether a claim is supported by a document. A claim is supported only if everything "
    "it says is stated in the document or follows directly from it. Answer Yes or No."
)
# The question the reference answers resolves what a statement refers to ("He
# made his debut in 1930"): without it, balanced accuracy on WiCE's Wikipedia
# sentences drops to chance (benchmarks/accuracy.py, README).
ATTRIBUTION_USER = "Document:\n{document}\n\n{topic}Claim: {statement}\n\nIs the claim supported by the document? Answer Yes or No."
ATTRIBUTION_TOPIC = "The claim comes from an answer to: {question}\n"

# Context relevance: the retrieved passages with numbered sentences and the
# question form the shared prefix; then one short Yes/No question per passage and
# per sentence. The judge sees every passage when it answers, so it can follow a
# question from the passage that names an entity to the passage about it.
RELEVANCE_SYSTEM = (
    "You read retrieved passages, split into numbered sentences, and decide which of them are needed "
    "to answer a question. Use only the passages."
)
RELEVANCE_CONTEXT = "{passages}\n\nQuestion: {question}\n\n"
PASSAGE_HEADER = "Passage {number}:"
PASSAGE_QUESTION = "Is passage {number} needed to answer the question? Answer Yes or No."
SENTENCE_QUESTION = "Is sentence [{number}] needed to answer the question? Answer Yes or No."

CLAIMS_SYSTEM = "You break an answer into short, self-contained factual claims. Reply with JSON only."
CLAIMS_USER = (
    "Question: {question}\n\n"
    "Answer: {reference}\n\n"
    "Break the answer into short, self-contained factual claims, each understandable "
    "without the others (replace pronouns by the names they stand for)."
)


def attribution_messages(document: str, statement: str, question: str | None) -> list[Message]:
    topic = ATTRIBUTION_TOPIC.format(question=question.strip()) if question and question.strip() else ""
    return [
        {"role": "system", "content": ATTRIBUTION_SYSTEM},
        {"role": "user", "content": ATTRIBUTION_USER.format(document=document, topic=topic, statement=statement)},
    ]


def passages_block(passages: Sequence[Sequence[tuple[int, str]]]) -> str:
    """Passages as the judge sees them: a header, then `[n] sentence` lines (n from 1, across passages)."""
    blocks = []
    for number, sentences in enumerate(passages, start=1):
        lines = "\n".join(f"[{n}] {sentence}" for n, sentence in sentences)
        blocks.append(f"{PASSAGE_HEADER.format(number=number)}\n{lines}")
    return "\n\n".join(blocks)


def relevance_messages(block: str, question: str, ask: str) -> list[Message]:
    return [
        {"role": "system", "content": RELEVANCE_SYSTEM},
        {"role": "user", "content": RELEVANCE_CONTEXT.format(passages=block, question=question) + ask},
    ]


def claims_messages(question: str, reference: str) -> list[Message]:
    return [
        {"role": "system", "content": CLAIMS_SYSTEM},
        {"role": "user", "content": CLAIMS_USER.format(question=question, reference=reference)},
    ]
