"""The judge's prompts, as named constants with the reasoning for their wording.

Every verdict is one token, "Yes" or "No", read from the logits: no sampled
prose, no JSON to parse, and the probability feeds a calibrated combination
(localeval.calibration.combination). Layout follows what works for small checkers (MiniCheck):
the document first and the question last, so the document is a prefix llama.cpp
evaluates once and every question about it costs only its own tokens.
"""

from __future__ import annotations

from localeval.judge import Message
from localeval.judge.rubric import Rubric

YES, NO = "Yes", "No"

# Claim attribution (context_recall): one short chunk of the context, then the
# statement. "Everything it says" matters: small judges otherwise accept a statement
# whose topic matches but whose details (a date, a cause) are not there.
ATTRIBUTION_SYSTEM = (
    "You check whether a claim is supported by a document. A claim is supported only if everything "
    "it says is stated in the document or follows directly from it. Answer Yes or No."
)
# The sample's question is never in the prompt: a statement is supported or not by the document
# alone, so its verdict is the same whatever question it answered, in context_recall and
# faithfulness alike (both ask this prompt). On claims no choice saw, the verdicts with a
# question line that restated the claim scored 0.606 balanced accuracy, and 0.699 with none
# (issue 44); docs/HISTORY.md has the earlier measurement (WiCE) that had kept the question.
# The worked examples below keep the topic line some of them carry: they are the same for
# every prompt, so they cannot make a verdict depend on the sample's question.
ATTRIBUTION_USER = "Document:\n{document}\n\n{topic}Claim: {statement}\n\nIs the claim supported by the document? Answer Yes or No."
ATTRIBUTION_TOPIC = "The claim comes from an answer to: {question}\n"

# Context relevance: each retrieved context ("paragraph") is judged on its own, as
# plain text, in a short prompt with the question first. Measured on the dev set
# (docs/metrics.md): a 1.5B judge reading all paragraphs at
# once, or the same paragraph with numbered sentences, ranks the needed paragraphs
# worse; and its per-sentence verdicts rank sentences worse than word overlap, so
# sentences are chosen by the evidence within the paragraphs the judge finds needed.
RELEVANCE_SYSTEM = "You decide whether a paragraph helps to answer a question. Use only the paragraph."
RELEVANCE_USER = (
    "Question: {question}\n\nParagraph: {paragraph}\n\n"
    "Does the paragraph contain information needed to answer the question? Answer Yes or No."
)

# One choice among a passage's sentences, read from the first answer token's distribution
# over the numbers (FIRST, arXiv 2406.15657): asked one sentence at a time, a 1.5B judge
# says Yes to most sentences of an on-topic paragraph; made to pick one, it puts its mass
# on the sentence that states the answer. "0" is a way out: no sentence answers.
CHOICE_OPTIONS = tuple(str(n) for n in range(10))  # "0" (none) and at most 9 sentences: one token each
RELEVANCE_CHOICE_USER = (
    "Question: {question}\n\nSentences:\n{numbered}\n\n"
    "Which sentence states the answer to the question? Answer with its number only, or 0 if none of them does."
)

# The judge's own short answer, copied from the passage it finds most needed: the sentence that
# holds it is the one that states the answer. The prompt opens exactly as the passage's Yes/No
# question does (same system message, question, paragraph), so when that passage was the last
# one judged only the last line is new. "none" is its way out where the passage does not answer.
RELEVANCE_ANSWER_USER = (
    "Question: {question}\n\nParagraph: {paragraph}\n\n"
    'Answer the question with the shortest phrase copied from the paragraph, or "none" if it does not say.'
)
NO_ANSWER = "none"

# Context precision: is one retrieved context useful for arriving at a given answer (the
# reference, or the response) to the question? ragas' LLMContextPrecisionWithReference asks
# this of each context; here it is one Yes/No token, read from the logits. The question and the
# answer come first: they are the same for every context of a sample, so each context after the
# first costs only its own tokens (llama.cpp's prefix cache).
USEFULNESS_SYSTEM = "You decide whether a paragraph is useful for arriving at a given answer to a question. Use only the paragraph."
USEFULNESS_USER = (
    "Question: {question}\n\nAnswer: {answer}\n\nParagraph: {paragraph}\n\n"
    "Is the paragraph useful for arriving at the answer? Answer Yes or No."
)

CLAIMS_SYSTEM = "You break an answer into short, self-contained factual claims. Reply with JSON only."
CLAIMS_USER = (
    "Question: {question}\n\n"
    "Answer: {reference}\n\n"
    "Break the answer into short, self-contained factual claims, each understandable "
    "without the others (replace pronouns by the names they stand for)."
)


# The placeholders a user's rubric file may use instead of the user messages above
# (localeval.judge.rubric); the required ones are what the verdict is about.
ATTRIBUTION_PLACEHOLDERS = frozenset({"document", "statement"})  # no {question}: see ATTRIBUTION_USER
ATTRIBUTION_REQUIRED = frozenset({"document", "statement"})
RELEVANCE_PLACEHOLDERS = frozenset({"question", "paragraph"})
RELEVANCE_REQUIRED = RELEVANCE_PLACEHOLDERS
USEFULNESS_PLACEHOLDERS = frozenset({"question", "answer", "paragraph"})
USEFULNESS_REQUIRED = frozenset({"answer", "paragraph"})


# Worked examples shown before every attribution prompt, as earlier turns of the chat
# (document, question or "", claim, verdict). Written for localeval on topics of their own,
# they show the judge what "everything it says" means: a changed number, a swapped name and a
# true-but-unstated detail are No; a paraphrase and a direct consequence are Yes. Measured
# (docs/HISTORY.md): balanced accuracy up on QAGS, VitaminC and FEVER, on the dev halves too,
# and the hand-written attribution cases 18 -> 20 of 20; claims within 0.01. They are the same
# for every prompt, so llama.cpp evaluates them once per run (LlamaJudge keeps a snapshot).
ATTRIBUTION_EXAMPLES: tuple[tuple[str, str, str, str], ...] = (
    (
        "The Danube rises in the Black Forest and flows for about 2,850 kilometres through ten countries before it empties into the Black Sea.",
        "Where does the Danube end?",
        "The Danube flows into the Black Sea.",
        YES,
    ),
    (
        "The suspension bridge opened to traffic in May 1937. Its main span is 1,280 metres long.",
        "",
        "The bridge opened to traffic in 1973.",
        NO,
    ),
    (
        "Marie Curie shared the 1903 Nobel Prize in Physics with Pierre Curie and Henri Becquerel.",
        "What did Marie Curie win?",
        "Marie Curie won the 1903 Nobel Prize in Physics for discovering polonium.",
        NO,
    ),
    (
        "All 40,000 tickets for the concert were sold within two hours of going on sale.",
        "",
        "The concert sold out on the day tickets went on sale.",
        YES,
    ),
    (
        "The bakery was founded by Ana Ruiz in 1962. Her brother Luis joined later and ran the shop until 1990.",
        "Who founded the bakery?",
        "Luis Ruiz founded the bakery.",
        NO,
    ),
    (
        "Mercury is the planet closest to the Sun. It has no moons, and a year there lasts 88 Earth days.",
        "",
        "Mercury, the innermost planet, has no moons.",
        YES,
    ),
)


def _attribution_user(document: str, statement: str, question: str = "") -> str:
    topic = ATTRIBUTION_TOPIC.format(question=question.strip()) if question.strip() else ""
    return ATTRIBUTION_USER.format(document=document, topic=topic, statement=statement)


def attribution_messages(document: str, statement: str, rubric: Rubric | None = None) -> list[Message]:
    """The system message, the worked examples, then the question about `document`: the same
    prompt whatever question the statement answers. A user's rubric replaces the wording, and
    the examples with it: they are in localeval's wording."""
    messages: list[Message] = [{"role": "system", "content": ATTRIBUTION_SYSTEM}]
    if rubric is not None:
        return [*messages, {"role": "user", "content": rubric.fill(document=document, statement=statement)}]
    for example_document, example_question, example_statement, verdict in ATTRIBUTION_EXAMPLES:
        messages.append({"role": "user", "content": _attribution_user(example_document, example_statement, example_question)})
        messages.append({"role": "assistant", "content": verdict})
    return [*messages, {"role": "user", "content": _attribution_user(document, statement)}]


def relevance_messages(paragraph: str, question: str, rubric: Rubric | None = None) -> list[Message]:
    user = rubric.fill(question=question, paragraph=paragraph) if rubric is not None else RELEVANCE_USER.format(question=question, paragraph=paragraph)
    return [{"role": "system", "content": RELEVANCE_SYSTEM}, {"role": "user", "content": user}]


def relevance_choice_messages(sentences: list[str], question: str) -> list[Message]:
    """At most len(CHOICE_OPTIONS) - 1 sentences, numbered from 1."""
    numbered = "\n".join(f"{number}. {sentence}" for number, sentence in enumerate(sentences, start=1))
    return [{"role": "system", "content": RELEVANCE_SYSTEM}, {"role": "user", "content": RELEVANCE_CHOICE_USER.format(question=question, numbered=numbered)}]


def relevance_answer_messages(paragraph: str, question: str) -> list[Message]:
    return [{"role": "system", "content": RELEVANCE_SYSTEM}, {"role": "user", "content": RELEVANCE_ANSWER_USER.format(question=question, paragraph=paragraph)}]


def usefulness_messages(paragraph: str, question: str, answer: str, rubric: Rubric | None = None) -> list[Message]:
    values = {"question": question, "answer": answer, "paragraph": paragraph}
    user = rubric.fill(**values) if rubric is not None else USEFULNESS_USER.format(**values)
    return [{"role": "system", "content": USEFULNESS_SYSTEM}, {"role": "user", "content": user}]


def claims_messages(question: str, reference: str) -> list[Message]:
    return [
        {"role": "system", "content": CLAIMS_SYSTEM},
        {"role": "user", "content": CLAIMS_USER.format(question=question, reference=reference)},
    ]


# Answer relevancy (ragas' ResponseRelevancy): the judge reads the response alone (never the
# question: it must not copy it) and writes, in one JSON answer under a grammar, whether the
# response is noncommittal (evasive, vague, or declining to answer), then the questions it
# answers, then, for a noncommittal response only, a short reason. ragas asks its LLM
# `strictness` times for one question each; one answer with all of them costs one prompt.
# Cost is the judge's writing, a forward pass per token (forced ones too), and the last message,
# the only part of the prompt not cached: the instructions are in the system message, which with
# the worked examples (localeval's own) is the same for every prompt and evaluated once per run,
# so a prompt's new tokens are the response's; and a committal answer has no reason (the verdict's
# reason is built from the questions and their similarity, localeval.metrics.answer_relevancy).
# Measured on the README example (docs/HISTORY.md, issue 51): 7.8 s a call against 12.8 s with the
# instructions after the response and a reason in every answer, the flag of every hand-written
# case unchanged. The flag is written first, as it was then: LlamaJudge's grammar orders an
# object's keys alphabetically (it sorts the schema's keys), and the answer's fields are in that
# order for every backend.
QUESTIONS_SYSTEM = (
    "You read an answer and write {count} different short questions that it answers, each understandable on its own. "
    "First set noncommittal to 1 if the answer is noncommittal (evasive, vague, or declining to answer, such as "
    "\"I don't know\" or \"I cannot say\"), else 0; for a noncommittal answer, also give a short reason. Reply with JSON only."
)
QUESTIONS_USER = "Answer: {response}"
QUESTIONS_EXAMPLES: tuple[tuple[str, tuple[str, ...], str | None], ...] = (  # response, questions, reason if noncommittal
    (
        "The Danube flows for about 2,850 kilometres and empties into the Black Sea.",
        ("Where does the Danube empty?", "Into which sea does the Danube flow?", "How long is the Danube?"),
        None,
    ),
    (
        "I'm not sure when the bridge opened; I could not find that information.",
        ("When did the bridge open?", "What year did the bridge open to traffic?", "When was the bridge opened?"),
        "It says it does not know when the bridge opened.",
    ),
)


def questions_messages(response: str, count: int) -> list[Message]:
    """The system message, the worked examples as earlier turns, then the response: the same
    prompt whatever question the sample asked."""
    import json

    messages: list[Message] = [{"role": "system", "content": QUESTIONS_SYSTEM.format(count=count)}]
    for example, questions, reason in QUESTIONS_EXAMPLES:
        shown = list(questions[:count])  # all three where more are asked: the grammar holds the count
        answer = {"noncommittal": 0, "questions": shown} if reason is None else {"noncommittal": 1, "questions": shown, "reason": reason}
        messages.append({"role": "user", "content": QUESTIONS_USER.format(response=example)})
        messages.append({"role": "assistant", "content": json.dumps(answer)})
    return [*messages, {"role": "user", "content": QUESTIONS_USER.format(response=response)}]


# Entity extraction (context_entity_recall): the judge lists a text's named entities, dates and
# quantities under a grammar (a JSON list of short strings). The worked example shows the
# granularity wanted (a full name, a date with its day, a quantity with its unit) and that a
# common noun is no entity; the same prompt for the reference and for each chunk of the
# contexts, so the two lists are written alike.
ENTITIES_SYSTEM = (
    "You list the named entities of a text: people, places, organisations, works, events, dates and quantities, "
    "each once, written as in the text. Leave out common nouns. Reply with JSON only."
)
ENTITIES_USER = "Text: {text}"
ENTITIES_EXAMPLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "The Golden Gate Bridge in San Francisco opened on May 27, 1937, after four years of work led by Joseph Strauss. It is 2,737 metres long.",
        ("Golden Gate Bridge", "San Francisco", "May 27, 1937", "four years", "Joseph Strauss", "2,737 metres"),
    ),
)


def entities_messages(text: str) -> list[Message]:
    """The system message, the worked example as earlier turns, then the text."""
    import json

    messages: list[Message] = [{"role": "system", "content": ENTITIES_SYSTEM}]
    for example, entities in ENTITIES_EXAMPLES:
        messages.append({"role": "user", "content": ENTITIES_USER.format(text=example)})
        messages.append({"role": "assistant", "content": json.dumps({"entities": list(entities)})})
    return [*messages, {"role": "user", "content": ENTITIES_USER.format(text=text)}]
