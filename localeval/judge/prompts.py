"""The judge's prompts, as named constants with the reasoning for their wording.

Layout, for llama.cpp's prefix reuse: the system message (identical for every call
of every metric) comes first, then the context as numbered sentences (identical
for every call about one sample, whichever metric makes it), and only then the
part that changes (the question and the task, the statement). Each extra call on
a sample then evaluates just its last few dozen tokens.
"""

from __future__ import annotations

from typing import Sequence

from localeval.judge import Message

# One system prompt for all tasks, so the cached prefix spans metrics.
SYSTEM = (
    "You are a meticulous annotator who checks retrieved context for a question-answering system. "
    "The user shows you a context split into numbered sentences, then gives one task about it. "
    "Judge only from what the context states; never use outside knowledge. Reply with JSON only."
)

# "absolutely required" is the ragas / promptfoo definition; the parenthesis about
# linking sentences matters for multi-hop questions, where the bridge sentence is
# required but does not mention the answer.
RELEVANCE_TASK = (
    "Question: {question}\n\n"
    "Task: list the numbers of the sentences that are absolutely required to answer the question: "
    "the sentences that state the facts the answer depends on, including a sentence needed to link "
    "them (for example, the one that identifies a person or thing the question names). Leave out "
    "sentences that are merely on the same topic. If the context cannot answer the question, "
    "return an empty list."
)

# promptfoo's variant: a verdict for every sentence instead of a selection.
CLASSIFY_TASK = (
    "Question: {question}\n\n"
    "Task: for every numbered sentence, in order, answer 1 if it is relevant to answering the "
    "question and 0 if it is not."
)

# The statement comes last, after the instructions, so that every statement of a
# sample shares everything before it and only the statement itself is new. The
# wording asks for every part of the statement: small judges otherwise accept a
# statement whose topic matches but whose details (a date, a cause) are not there.
RECALL_TASK = (
    "Question: {question}\n\n"
    "Task: decide whether the statement below can be attributed to the context, that is, whether "
    "the context states or directly implies everything it says. attributed is 1 if so, 0 if any "
    "part of it is missing from or contradicted by the context. Then give a short reason.\n\n"
    "Statement: {statement}"
)

CLAIMS_TASK = (
    "Question: {question}\n\n"
    "Answer: {reference}\n\n"
    "Task: break the answer into short, self-contained factual claims, each understandable "
    "without the others (replace pronouns by the names they stand for)."
)


def context_block(numbered: Sequence[tuple[int, str]]) -> str:
    """Sentences as the judge sees them: `[n] sentence`, one a line, numbered from 1."""
    return "\n".join(f"[{number}] {sentence}" for number, sentence in numbered)


def messages(block: str, task: str) -> list[Message]:
    """System prompt, then the context, then the task: the shared part first."""
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Context:\n{block}\n\n{task}"},
    ]
