"""What the judge is asked to write: a question and its reference answer, under a grammar.

The answer is an object of `Written`, decoded under its JSON schema's grammar (Judge.ask), so it
always parses and every field is a bounded string: a small model cannot write a malformed row,
the failure ragas' and DeepEval's generators hit with local models. The instructions say what
the checks will refuse (a question about "the passage", a copied sentence, a pronoun with
nothing before it), because a 1.5B model follows an instruction more often than it does not,
and each refused candidate costs a generation.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from localeval.judge import Judge, Message

QUESTION_CHARS = 160
ANSWER_CHARS = 240
WRITE_TOKENS = 160  # ceiling for both fields (the schema bounds each in characters)

SYSTEM = (
    "You write test questions for a search system over a company's documents. "
    "Each question is one a real user could type and asks about one specific fact (a name, a date, a number, a cause, a place), "
    "not for a definition or a summary; it names what it is about "
    "(people, products, places, dates) so that it makes sense on its own. Never write 'the passage', 'the text', "
    "'the document', 'the study' or 'the author'. Never start with a pronoun. Ask in your own words: do not copy a sentence. "
    "The answer is one or two short, complete sentences that state the fact, using only what the passages say."
)
SINGLE_USER = "Passage:\n{passage}\n\nWrite one question that this passage answers, and the answer."
TWO_USER = (
    "Passage 1:\n{first}\n\nPassage 2:\n{second}\n\n"
    "Both passages mention {entity}. Write one question about {entity} whose answer needs a fact from passage 1 "
    "and a fact from passage 2 (neither passage alone answers it), and the answer, stating both facts."
)


REWRITE_USER = (
    "Passage:\n{passage}\n\nQuestion: {question}\n\n"
    "This question copies the passage's wording. Rewrite it as a user who has not read the passage would ask it: "
    "the same fact, other words (synonyms, another order), the names kept, no run of more than three words from the passage."
)


class Rewritten(BaseModel):
    """The judge's question asked again in its own words."""

    question: str = Field(min_length=8, max_length=QUESTION_CHARS)


def rewrite_messages(passages: list[str], question: str) -> list[Message]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": REWRITE_USER.format(passage="\n\n".join(passages), question=question)}]


def rewrite(judge: Judge, passages: list[str], question: str) -> str:
    """A near-copy asked again in other words (the answer stays: it is the same fact)."""
    written, _ = judge.ask(rewrite_messages(passages, question), Rewritten, WRITE_TOKENS)
    return " ".join(written.question.split())


class Written(BaseModel):
    """The judge's candidate: the question first (the answer is written knowing it)."""

    question: str = Field(min_length=8, max_length=QUESTION_CHARS)
    answer: str = Field(min_length=2, max_length=ANSWER_CHARS)


def single_messages(passage: str) -> list[Message]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": SINGLE_USER.format(passage=passage)}]


def two_messages(first: str, second: str, entity: str) -> list[Message]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TWO_USER.format(first=first, second=second, entity=entity)}]


def write(judge: Judge, messages: list[Message]) -> Written:
    """The judge's question and answer, whitespace tidied (a newline the grammar let through)."""
    written, _ = judge.ask(messages, Written, WRITE_TOKENS)
    return Written.model_construct(question=" ".join(written.question.split()), answer=" ".join(written.answer.split()))
