"""The judge rule's answer to "is this unit needed to answer the question?" (context_relevance).

Every unit is scored, then a rule selects:

1. The judge reads each retrieved context (a passage) on its own, as plain text
   after the question, and answers whether it contains information needed to
   answer: one token, read from the logits. (A passage too long for the window is
   judged in pieces and counts by its best piece.) With more than `judged_contexts`
   passages, only those that mention most of the question are read; the others count
   as the judge's typical verdict on a retrieved passage (UNREAD_VERDICT): measured on
   the dev shapes, reading 3 of 10 HotpotQA paragraphs selects as well as reading all
   10, for a third of the prompt tokens (docs/HISTORY.md).
2. Then, on the passage it finds most needed, the judge answers the question with the
   shortest phrase copied from it (a few generated tokens, in a prompt that opens as the
   passage's Yes/No question did, so a model reuses the cached passage); a unit that holds
   every word of that answer is marked. And it is made to pick, among the passage's
   numbered units, the one that states the answer, or "0" for none: one prompt, and the
   first answer token's distribution over the numbers. Asked one sentence at a time,
   a 1.5B judge says Yes to most sentences of an on-topic passage; made to choose, it
   puts its mass on the answering one, and "0" says when none does.
3. Evidence: how much of the question each unit and each passage mentions, each
   word weighted by how rare it is in English and how few passages share it (the
   same meaning for one context as for ten), and how much of what the question asks
   beyond the passages' subjects each unit mentions; whether the unit opens its
   passage (the sentence that names what the others refer to), whether the question
   names that subject itself, and whether a later sentence starts with a pronoun; a
   bridge: how strongly the best-matching passage mentions what another passage's
   opening unit names (a two-hop question's second passage); the names and
   numbers the unit brings that the question does not mention; and two signs of
   whether an opening unit is needed: the question is long (it describes what it asks
   about, and the opening names it), or the question names the subject and the unit the
   judge points to as the answer names it too (the answer stands alone).
4. A logistic model over those RELEVANCE_FEATURES (fitted per judge on HotpotQA in five shapes,
   with 10, 3 and 1 contexts and with the supporting paragraphs removed, and on SQuAD 2.0
   single paragraphs, alone, among three and with questions they cannot answer, each
   source weighing the same; models/catalog.toml, or a user's file from `localeval
   calibrate`) gives each unit P(required), the passage verdict weighed up to VERDICT_CAP;
   units at or above `threshold` are selected.
   When none reaches it, nothing is selected and the score is 0, unless the judge's choice
   said with odds of at least e^ANSWER_ODDS that one of the units answers: then its most
   probable unit is selected.

Measured (docs/HISTORY.md): the choice replaced a Yes/No verdict per sentence
of the same passage, for fewer prompt tokens and higher F1 on single paragraphs.

The metric (localeval.metrics.relevance) cuts the units and counts the selection; this module is
the judge rule's half of `Grader.needed` (localeval.graders.judge_rule).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from localeval.calibration.combination import LogisticModel
from localeval.data.text import split_sentences
from localeval.graders import Needs, Unit
from localeval.graders.evidence import content_words, names, numbers, weighted_words
from localeval.judge import Judge
from localeval.judge.prompts import (
    CHOICE_OPTIONS,
    NO_ANSWER,
    relevance_answer_messages,
    relevance_choice_messages,
    relevance_messages,
)
from localeval.judge.reading import PROBABILITY_FLOOR, UsageTally, check_probabilities, chunk_sentences, rubric_tokens, yes_log_odds
from localeval.judge.rubric import Rubric

RELEVANCE_KEY = "relevance"
PROMPT_OVERHEAD = 120  # tokens of instructions and question wording around a passage
CHOICE_GATE = 0.0  # the judge picks among a passage's units when it says the passage is needed (P(Yes) >= 0.5)...
CHOICE_PASSAGES = 1  # ...and it is the one it finds most needed: one more read of that passage, whatever the number of contexts
# The features every unit gets, in this order; a calibration must weigh each of them.
RELEVANCE_FEATURES = ("judge_passage", "judge_choice", "judge_none", "judge_answer", "overlap", "overlap_vs_best", "focus_vs_best", "passage_overlap", "bridge", "opens_passage", "subject_asked", "named_by_pronoun", "new_facts", "answer_stands_alone", "opens_long_question")
# For a judge without a fitted rule (a GGUF file not in the catalog): round numbers of the
# default judge's fitted weights.
RELEVANCE_CALIBRATION = LogisticModel(
    intercept=-4.3,
    weights={"judge_passage": 2.1, "judge_choice": 0.2, "judge_none": 0.3, "judge_answer": 1.0, "overlap": 1.3, "overlap_vs_best": 2.7, "focus_vs_best": 0.0, "passage_overlap": -0.6, "bridge": -0.4, "opens_passage": -0.4, "subject_asked": 0.0, "named_by_pronoun": 0.1, "new_facts": 0.4, "answer_stands_alone": -1.6, "opens_long_question": 1.0},
)
# The rule weighs a passage verdict's log-odds up to this size either way: beyond it, a surer
# verdict says no more about which of the passage's sentences are required, and weighed in full it
# lifted the sentence naming a single context's subject over the threshold beside the one that
# answers. Measured (docs/HISTORY.md): cross-validated F1 and "insufficient"
# as before on the dev shapes, H3 up, hand-written cases 19 -> 21 of 24. Which passage is asked
# about still goes by the full value.
VERDICT_CAP = 1.0
CHOICE_FLOOR = 1e-3  # a sentence's share of the choice below this says nothing more
# A passage the judge did not read (beyond `judged_contexts`) gets the judge's typical verdict on one: the median log-odds of
# the default judge on the HotpotQA paragraphs ranked after the fourth by overlap, 0.44 on 30
# dev questions (0.48 where a gold paragraph is among them, 0.40 where none is; measured by
# `lab/explore_relevance.py --unread-verdict 30`).
UNREAD_VERDICT = 0.4
# When no unit reaches the threshold but the judge, made to choose among a passage's units, gave
# "none of them" odds of at most e^-ANSWER_ODDS (73%+ of its mass on the units), the most probable
# unit is selected: "insufficient information" would contradict what the judge just said. On the
# dev rows this never fires (wherever nothing reaches the threshold the choice is unsure);
# on hand-written single-context cases it keeps the answering sentence (docs/HISTORY.md).
ANSWER_ODDS = 1.0
ANSWER_CHARS = 120  # the judge's short answer: a phrase, not a sentence (the grammar bounds it)
ANSWER_TOKENS = 64  # a ceiling: ANSWER_CHARS of ordinary text is 30-40 tokens, plus the JSON around it


class ShortAnswer(BaseModel):
    answer: str = Field(max_length=ANSWER_CHARS)


def _question_overlap(question: str, units: Sequence[Unit], passage_count: int, language: str) -> tuple[list[float], list[float], list[float]]:
    """Share of the question's words in each unit and each passage, and each passage's bridge
    score (see the module docstring). A word weighs how rare it is in the language
    (localeval.graders.evidence.rarity), times 1 + log((n + 1) / (1 + the number of the n passages that
    have it)): with one passage the second factor is 1 for every word, so a feature keeps its
    meaning for one context (the retrieved-set IDF alone made every weight 0 there), and with
    ten it lifts the words that tell the passages apart (at 10 contexts, rarity alone selected
    worse than with this factor). Linear in the units and passages."""
    unit_words = [set(content_words(u.text, language)) for u in units]
    passage_words: list[set[str]] = [set() for _ in range(passage_count)]
    for u, words in zip(units, unit_words):
        passage_words[u.passage] |= words
    asked = weighted_words(question, language)
    for word in asked:  # a word few of the retrieved contexts share says more about which one answers
        shared_by = sum(1 for words in passage_words if word in words)
        asked[word] *= 1.0 + math.log((passage_count + 1) / (1 + shared_by))
    mass = sum(asked.values()) or 1.0
    unit_overlap = [sum(w for word, w in asked.items() if word in words) / mass for words in unit_words]
    passage_overlap = [sum(w for word, w in asked.items() if word in words) / mass for words in passage_words]
    best = max(range(passage_count), key=lambda p: (passage_overlap[p], -p)) if passage_count else 0
    bridge = [0.0] * passage_count
    for u in units:
        if u.opens_passage and u.passage != best:
            named = weighted_words(u.text, language)
            weight = sum(named.values()) or 1.0
            bridge[u.passage] = sum(w for word, w in named.items() if word in passage_words[best]) / weight
    return unit_overlap, passage_overlap, bridge


# Words that open a sentence whose subject another sentence names ("It was founded in 1945").
PRONOUNS = frozenset("it its he his she her they their them this these those".split())


def _starts_with_pronoun(text: str) -> bool:
    first = text.split(maxsplit=1)[0].lower() if text.strip() else ""
    return first.strip("\"'(") in PRONOUNS


SUBJECT_WORDS = 8  # the subject a passage opens with is named within its first words
_CONNECTORS = frozenset("of the and de von van del la".split())


def _subject_words(opening: str, language: str) -> tuple[str, ...]:
    """The content words of the name an opening sentence starts with: its first run of
    capitalised words, within SUBJECT_WORDS words ("Mount Everest", "The Eiffel Tower")."""
    run: list[str] = []
    for word in opening.split()[:SUBJECT_WORDS]:
        bare = word.strip("\"'(),.;:")
        if bare[:1].isupper() or (run and bare in _CONNECTORS):
            run.append(bare)
        elif run and content_words(" ".join(run), language):
            break
        else:
            run = []
    return content_words(" ".join(run), language)


def _subject_asked(asked_words: set[str], named: Sequence[str]) -> float:
    """Share of a subject's words (`_subject_words`) that the question mentions. A question
    that names the subject itself ("How tall is Mount Everest?") does not need the sentence that
    introduces it; a two-hop question describes the subject instead of naming it, and needs
    that sentence to identify it (HotpotQA's labels)."""
    return sum(1 for word in named if word in asked_words) / len(named) if named else 0.0


def _focus_overlap(question: str, units: Sequence[Unit], subjects: set[str], language: str) -> list[float]:
    """Share of the question's words other than the passages' `subjects` (what it asks about the
    subject: "tall", "completed") found in each unit, words weighted by rarity: the unit that
    names the subject matches the question's subject words without answering it."""
    focus = {word: weight for word, weight in weighted_words(question, language).items() if word not in subjects}
    mass = sum(focus.values())
    if not mass:
        return [0.0] * len(units)
    return [sum(w for word, w in focus.items() if word in content_words(u.text, language)) / mass for u in units]


# A question of this many content words or more describes what it asks about ("this Basham brother
# who appeared with WWE between 2002 and 2007"), and the sentence that names it is needed to
# identify it; a short one ("How tall is Mount Everest?") names its subject. The opening unit's
# feature opens_long_question is the question's content words over this, capped at 1.
LONG_QUESTION_WORDS = 12
NEW_FACTS_CAP = 4  # names and numbers beyond this many say nothing more


def _new_facts(asked: str, unit: str) -> float:
    """How many names and numbers the unit brings that the question (`asked`, lower-cased)
    does not mention, capped and scaled to [0, 1]: a sentence that answers usually carries
    something the question does not (a date, a place, a person), where one that only
    restates its topic does not."""
    new = {n.lower() for n in names(unit)} | set(numbers(unit))
    return min(sum(1 for fact in new if fact not in asked), NEW_FACTS_CAP) / NEW_FACTS_CAP


def _answering_unit(members: Sequence[int], judge_answer: Sequence[float], judge_choice: Sequence[float]) -> int | None:
    """The unit of a passage the judge points to as answering: the first that holds its short
    answer, else the one its choice favours most (None when neither says anything)."""
    holders = [i for i in members if judge_answer[i] > 0]
    if holders:
        return holders[0]
    favoured = max(members, key=lambda i: (judge_choice[i], -i))
    return favoured if judge_choice[favoured] > 0 else None


def _answer_stands_alone(units: Sequence[Unit], judge_answer: Sequence[float], judge_choice: Sequence[float], subjects: Mapping[int, Sequence[str]], subject_named: Mapping[int, float], language: str) -> list[float]:
    """1 for a passage's opening unit when the question names the passage's subject, and the unit
    the judge points to as the answer is another one that names the subject too ("The summit of
    Everest is 8,849 metres" for "How tall is Mount Everest?"): the answer stands on its own and
    the opening only introduces what the question already named. 0 for every other unit, and
    where the answer leans on the opening for its subject ("It was completed in 1889", "The new
    season's judge panel..."), which HotpotQA's labels count as required."""
    alone = [0.0] * len(units)
    members: dict[int, list[int]] = {}
    for i, u in enumerate(units):
        members.setdefault(u.passage, []).append(i)
    for indices in members.values():
        opening = indices[0]
        answering = _answering_unit(indices, judge_answer, judge_choice)
        if answering is None or answering == opening or not units[opening].opens_passage or subject_named.get(opening, 0.0) < 0.5:
            continue
        if _subject_asked(set(content_words(units[answering].text, language)), subjects[opening]) >= 0.5:
            alone[opening] = 1.0
    return alone


def select_units(probabilities: Sequence[float], features: Sequence[Mapping[str, float]], threshold: float) -> list[int]:
    """The units the rule selects: those at or above `threshold` (`above_threshold`), and when
    anything is selected, the first unit holding the judge's short answer too: the question is
    answerable, and the sentence that states the answer is required whatever its other features
    say ("It was completed on 31 March 1889" scored below the threshold beside the introductory
    sentences of its context). Only a selection is extended: a wrong answer must not turn
    "insufficient information" into a selection."""
    selected = above_threshold(probabilities, features, threshold)
    holder = next((i for i, f in enumerate(features) if f["judge_answer"] > 0), None)
    if selected and holder is not None and holder not in selected:
        selected = sorted([*selected, holder])
    return selected


def above_threshold(probabilities: Sequence[float], features: Sequence[Mapping[str, float]], threshold: float) -> list[int]:
    """The units at or above `threshold`; when there are none and the judge's choice said a unit
    answers (the sample's `judge_none` feature <= -ANSWER_ODDS), the most probable one (the
    first of equals)."""
    selected = [i for i, p in enumerate(probabilities) if p >= threshold]
    if selected or not features or features[0]["judge_none"] > -ANSWER_ODDS:
        return selected
    return [max(range(len(probabilities)), key=lambda i: (probabilities[i], -i))]


def _holds_answer(answer: str, unit: str) -> bool:
    """Whether the unit holds every word of the judge's short answer ("Peru, Colombia, Brazil"
    is in "The river flows through Peru, Colombia and Brazil."). All of them, not a share: on
    the dev shapes the share selected worse (docs/HISTORY.md)."""
    words = set(re.findall(r"\w+", answer.lower()))
    return bool(words) and words <= set(re.findall(r"\w+", unit.lower()))


def _capped(verdict: float) -> float:
    """The passage verdict's log-odds within +-VERDICT_CAP, as the rule weighs it."""
    return max(-VERDICT_CAP, min(VERDICT_CAP, verdict))


def _relative(values: Sequence[float]) -> list[float]:
    top = max(values, default=0.0)
    return [v / top if top > 0 else 0.0 for v in values]


def _judge_passages(judge: Judge, passages: Sequence[str], question: str, language: str, rubric: Rubric | None, tally: UsageTally) -> tuple[list[float], list[str | None], int]:
    """The judge's log-odds that each passage is needed; each passage's text as the judge read
    it when it fit in one prompt (None when it was read in pieces); how many prompts that took."""
    budget = judge.context_size - PROMPT_OVERHEAD - rubric_tokens(judge, rubric) - judge.count_tokens(question)
    verdicts, texts, prompts = [], [], 0
    for passage in passages:
        sentences = split_sentences(passage, language) or [passage]
        pieces = chunk_sentences(sentences, judge.count_tokens, budget, budget)
        best = -math.inf
        for piece in pieces:
            value, usage = yes_log_odds(judge, relevance_messages(" ".join(sentences[i] for i in piece), question, rubric))
            tally.add(usage)
            best, prompts = max(best, value), prompts + 1
        verdicts.append(best)
        texts.append(" ".join(sentences) if len(pieces) == 1 else None)
    return verdicts, texts, prompts


def _passages_read(units: Sequence[Unit], passage_overlap: Sequence[float], limit: int) -> list[int]:
    """The passages the judge reads, in order: all that have units, or the `limit` (the metric's
    `judged_contexts`) of them that mention most of the question (ties: the earlier passage).
    Reading fewer costs less, and the evidence already ranks the needed passages near the top."""
    present = sorted({u.passage for u in units})
    if not limit or len(present) <= limit:
        return present
    return sorted(sorted(present, key=lambda p: (-passage_overlap[p], p))[:limit])


def _asked_passages(judge_passage: Mapping[int, float], texts: Mapping[int, str | None], whole_contexts: bool, rubric: Rubric | None) -> set[int]:
    """The CHOICE_PASSAGES passage(s) the judge finds most needed (log-odds >= CHOICE_GATE)
    that fit in one prompt: their units are asked about. Whole contexts as units have no parts
    to ask about, and a user's rubric replaces the task with its own words, which say nothing
    about sentences: then no unit is asked about."""
    if whole_contexts or rubric is not None:
        return set()
    asked = sorted((p for p, v in judge_passage.items() if v >= CHOICE_GATE and texts[p] is not None), key=lambda p: (-judge_passage[p], p))
    return set(asked[:CHOICE_PASSAGES])


def _judge_answer(judge: Judge, units: Sequence[Unit], chosen: set[int], texts: Mapping[int, str | None], question: str, tally: UsageTally) -> tuple[list[float], str | None]:
    """The judge's short answer from the `chosen` passage (the one asked about), and for each
    unit 1 where it holds the answer (0 for every other unit, and every unit of another passage)."""
    values = [0.0] * len(units)
    answer = None
    for passage in sorted(chosen):
        reply, usage = judge.ask(relevance_answer_messages(texts[passage] or "", question), ShortAnswer, ANSWER_TOKENS)
        tally.add(usage)
        answer = reply.answer.strip()
        if answer.strip(' ."').lower() == NO_ANSWER:
            continue
        for i, u in enumerate(units):
            if u.passage == passage:
                values[i] = float(_holds_answer(answer, u.text))
    return values, answer


def _judge_choice(judge: Judge, units: Sequence[Unit], chosen: set[int], question: str, tally: UsageTally) -> tuple[list[float], float]:
    """The judge made to pick the sentence that states the answer, among the units of the
    `chosen` passages (in windows of at most 9, one prompt each, "0" for none): each unit's
    log of its share of the sentences' probability times their number (0 = no preference,
    and for every unit not asked about), and the log-odds that none answers (the least
    over the windows; 0 when nothing was asked)."""
    values = [0.0] * len(units)
    none = math.inf
    window = len(CHOICE_OPTIONS) - 1
    for passage in sorted(chosen):
        members = [i for i, u in enumerate(units) if u.passage == passage]
        for start in range(0, len(members), window):
            part = members[start : start + window]
            options = CHOICE_OPTIONS[: len(part) + 1]
            probabilities, usage = judge.choose(relevance_choice_messages([units[i].text for i in part], question), "", options)
            tally.add(usage)
            check_probabilities(probabilities)
            answering = sum(probabilities[1:])
            for i, p in zip(part, probabilities[1:]):
                values[i] = math.log(max(p / answering if answering > 0 else 0.0, CHOICE_FLOOR) * len(part))
            none = min(none, math.log(max(probabilities[0], PROBABILITY_FLOOR) / max(answering, PROBABILITY_FLOOR)))
    return values, (none if math.isfinite(none) else 0.0)


def judge_needs(
    judge: Judge, calibration: LogisticModel, question: str, units: Sequence[Unit], passages: Sequence[str], tally: UsageTally,
    language: str, rubric: Rubric | None, judged_contexts: int, whole_contexts: bool,
) -> Needs:
    """Each unit's P(needed) by the judge rule (the module docstring), its features, the rule that
    selects (`select_units`), and the judge's short answer, windows and unread contexts."""
    overlap, passage_overlap, bridge = _question_overlap(question, units, len(passages), language)
    read = _passages_read(units, passage_overlap, judged_contexts)
    verdicts, texts, prompts = _judge_passages(judge, [passages[p] for p in read], question, language, rubric, tally)
    judge_passage = dict(zip(read, verdicts))
    read_texts = dict(zip(read, texts))
    chosen = _asked_passages(judge_passage, read_texts, whole_contexts, rubric)
    # The answer before the choice: when the chosen passage was the last one judged (always
    # with one context), its prompt reuses that passage's cached prefix.
    judge_answer, answer = _judge_answer(judge, units, chosen, read_texts, question, tally)
    judge_choice, judge_none = _judge_choice(judge, units, chosen, question, tally)
    overlap_vs_best = _relative(overlap)
    subject = {i: _subject_words(u.text, language) for i, u in enumerate(units) if u.opens_passage}
    focus_vs_best = _relative(_focus_overlap(question, units, {word for words in subject.values() for word in words}, language))
    referred = {u.passage for u in units if not u.opens_passage and _starts_with_pronoun(u.text)}
    asked = question.lower()
    asked_words = set(content_words(question, language))
    subject_named = {i: _subject_asked(asked_words, words) for i, words in subject.items()}
    long_question = min(len(asked_words), LONG_QUESTION_WORDS) / LONG_QUESTION_WORDS
    alone = _answer_stands_alone(units, judge_answer, judge_choice, subject, subject_named, language)
    features = [
        {
            "judge_passage": _capped(judge_passage.get(u.passage, UNREAD_VERDICT)),
            "judge_choice": judge_choice[i],
            "judge_none": judge_none,
            "judge_answer": judge_answer[i],
            "overlap": overlap[i],
            "overlap_vs_best": overlap_vs_best[i],
            "focus_vs_best": focus_vs_best[i],
            "passage_overlap": passage_overlap[u.passage],
            "bridge": bridge[u.passage],
            "opens_passage": float(u.opens_passage),
            "subject_asked": subject_named.get(i, 0.0),
            "named_by_pronoun": float(u.opens_passage and u.passage in referred),
            "new_facts": _new_facts(asked, u.text),
            "answer_stands_alone": alone[i],
            "opens_long_question": float(u.opens_passage) * long_question,
        }
        for i, u in enumerate(units)
    ]
    notes: dict[str, Any] = {}
    if answer is not None:
        notes["answer"] = answer
    if prompts > len(read):
        notes["windows"] = prompts
    unread = sorted({u.passage for u in units} - set(read))
    if unread:
        notes["unread_contexts"] = unread
    return Needs([calibration.probability(f) for f in features], features, select_units, notes)
