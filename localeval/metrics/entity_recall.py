"""Context entity recall: how many of the reference's entities the retrieved contexts name.

ragas' ContextEntityRecall (`context_entity_recall`; fields reference and retrieved_contexts): the
entities of the reference and of the contexts are extracted, and

    score = |reference entities found among the contexts' entities| / (|reference entities| + 1e-8)

as ragas 0.4.3's `_compute_score`: the numerator counts distinct entities, the denominator the
reference's list, and a reference without entities scores 0 (ragas' 1e-8), never NaN. The lists are
the judge's, kept where the text holds the entity (normalised, or rapidfuzz's partial ratio at
`match_threshold`) and each once: ragas trusts its LLM's list, where a small local judge repeats
an entity or names one the text does not (ragas' denominator would count each). On ragas' own cases
the lists are the same.

- Extraction (`extractor`): `judge` (the default) asks the judge for the entities under a grammar
  (localeval.judge.prompts.ENTITIES_SYSTEM: a JSON list of short strings), one request for the
  reference and one per chunk of the contexts (about CHUNK_TOKENS tokens of their sentences, so a
  long retrieval never outgrows the window nor the list's length); an empty text costs no call.
  `capitalised_spans` needs no model: runs of capitalised words (a leading function word dropped)
  and numbers, in text order, each once. It is what it says, not named-entity recognition: a
  capitalised sentence opener counts too.
- Matching: a reference entity is found when one of the contexts' entities is the same text once
  both are normalised (NFKC, case folded, punctuation read as spaces, whitespace collapsed), or,
  failing that, rapidfuzz's ratio of the two normalised texts reaches `match_threshold` (1 for
  equality only). ragas compares the strings as they are; where the lists are written alike the
  two agree. The details list the entities found and missing.

The trained verifier reads pairs of texts and writes none: it cannot extract entities, so
`--grader verifier` stops a run that names this metric with the judge's extraction before its
first sample (`refuses_verifier`), naming `extractor=capitalised_spans` as the way without a judge.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from localeval.data.samples import Sample
from localeval.data.text import check_language, split_sentences
from localeval.errors import JudgeError
from localeval.graders.evidence import STOP_WORDS
from localeval.judge import Judge
from localeval.judge.prompts import entities_messages
from localeval.judge.reading import UsageTally, chunk_sentences
from localeval.metrics.base import MAX_ITEMS, Metric, Score, ShareOption, shorten

EPSILON = 1e-8  # ragas' guard in the denominator
# The grammar's bounds: entities one answer may list, characters of one. Every bound is a nest of
# optional rules in llama.cpp's grammar, whose cost is paid at each token written: 16 x 60 wrote
# about as fast as 12 x 40 and 1.6x faster than 24 unbounded strings (smollm2-135m, 2026-11-28).
MAX_ENTITIES = 16
ENTITY_CHARS = 60
CHUNK_TOKENS = 200  # tokens of context sentences per request: a list of MAX_ENTITIES holds what they name
PROMPT_OVERHEAD = 40  # chat markers and wording around the text (generous)

# A run of capitalised words (a hyphen or apostrophe inside a word), or a number with its separators.
_SPAN_OR_NUMBER = re.compile(r"(?P<span>[A-Z][\w'’-]*(?:[ \t]+[A-Z][\w'’-]*)*)|(?P<number>\d+(?:[.,]\d+)*)")


class Entities(BaseModel):
    entities: list[str] = Field(max_length=MAX_ENTITIES, json_schema_extra={"items": {"type": "string", "maxLength": ENTITY_CHARS}})


def answer_tokens(context_size: int) -> int:
    """A ceiling on the answer's tokens the grammar's bounds cannot reach (a character is at most 4
    tokens' bytes, plus quotes and commas), held to half the judge's window."""
    return min(32 + MAX_ENTITIES * (4 * ENTITY_CHARS + 4), context_size // 2)


class EntityRecallParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    extractor: Literal["judge", "capitalised_spans"] = Field(
        "judge", description="judge: the judge lists the entities under a grammar; capitalised_spans: runs of capitalised words and numbers, no model (not named-entity recognition)"
    )
    match_threshold: ShareOption = Field(
        0.9, description="a reference entity is found when a context entity equals it once normalised (case, whitespace, punctuation), else when rapidfuzz's ratio of the two reaches this (1: equality only)"
    )
    language: Annotated[str, AfterValidator(check_language)] = Field("en", description="language of the texts, for sentence splitting of the contexts into the judge's chunks (any pysbd language)")


class EntityRecallDetails(BaseModel):
    reference_entities: list[str] = Field(default_factory=list)
    found: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    context_entities: list[str] = Field(default_factory=list)
    requests: int = 0  # judge requests for the sample


def normalised(entity: str) -> str:
    """An entity as matching reads it: NFKC, case folded, punctuation as spaces, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", entity).casefold()
    return " ".join("".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text).split())


def capitalised_spans(text: str) -> list[str]:
    """Runs of capitalised words (a leading function word dropped: "The Eiffel Tower" is "Eiffel
    Tower", a lone "It" nothing) and numbers, in text order, each once."""
    spans: list[str] = []
    for match in _SPAN_OR_NUMBER.finditer(text):
        words = match.group().split()
        while words and words[0].lower() in STOP_WORDS:
            words.pop(0)
        if words and " ".join(words) not in spans:
            spans.append(" ".join(words))
    return spans


def found_entities(reference: Sequence[str], context: Sequence[str], threshold: float) -> list[bool]:
    """Whether each reference entity is among the context's: equal once normalised, else
    rapidfuzz's ratio of the normalised texts at least `threshold`."""
    from rapidfuzz import fuzz, process

    choices = sorted({normalised(entity) for entity in context} - {""})
    exact = set(choices)
    found = []
    for entity in reference:
        key = normalised(entity)
        hit = key in exact or (threshold < 1.0 and bool(key) and process.extractOne(key, choices, scorer=fuzz.ratio, score_cutoff=threshold * 100) is not None)
        found.append(hit)
    return found


def grounded(entities: Sequence[str], text: str, threshold: float) -> list[str]:
    """The entities the text holds (normalised, as a substring, else rapidfuzz's partial ratio at
    least `threshold`), each once (by its normalised form), in order: a judge's entity the text
    never names (a small judge invents dates and repeats itself) is dropped."""
    from rapidfuzz import fuzz

    haystack = normalised(text)
    kept: dict[str, str] = {}
    for entity in entities:
        key = normalised(entity)
        if key and key not in kept and (key in haystack or fuzz.partial_ratio(key, haystack) >= threshold * 100):
            kept[key] = entity.strip()
    return list(kept.values())


def entity_recall(reference: Sequence[str], found: Sequence[bool]) -> float:
    """ragas' `_compute_score`: distinct reference entities found over the reference's list (+1e-8)."""
    return len({entity for entity, hit in zip(reference, found) if hit}) / (len(reference) + EPSILON)


class ContextEntityRecall(Metric[EntityRecallParams]):
    name = "context_entity_recall"
    description = "Share of the reference's entities (the judge lists them) that the retrieved contexts name too (normalised, fuzzy matching)."
    required_fields = ("reference", "retrieved_contexts")
    needs_judge = True
    by_default = False  # named to run: localeval.metrics.DEFAULT_METRICS says why
    Params = EntityRecallParams
    Details = EntityRecallDetails

    def uses_judge(self) -> bool:
        return self.params.extractor == "judge"

    def refuses_verifier(self) -> str | None:
        if not self.uses_judge():
            return None
        return (f"{self.name} needs the judge: the judge writes its entities, and the verifier writes no text; "
                f"for a run without a judge use --option {self.name}.extractor=capitalised_spans (no model), or leave {self.name} out")

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        return [self._score(sample, judge) for sample in samples]

    def _score(self, sample: Sample, judge: Judge | None) -> Score:
        tally = UsageTally()
        requests = [0]
        reference = self._entities([sample.reference or ""], judge, tally, requests, "the reference")
        # ragas extracts the reference's entities and the contexts', whatever the first gave.
        context = list(dict.fromkeys(self._entities(sample.retrieved_contexts or [], judge, tally, requests, "the retrieved contexts")))
        hits = found_entities(reference, context, self.params.match_threshold)
        found = list(dict.fromkeys(e for e, hit in zip(reference, hits) if hit))
        missing = list(dict.fromkeys(e for e, hit in zip(reference, hits) if not hit))
        details = {"reference_entities": reference, "found": found, "missing": missing, "context_entities": context, "requests": requests[0]}
        usage = tally.as_dict() if self.uses_judge() else None
        return Score(value=entity_recall(reference, hits), details=details, usage=usage)

    def _entities(self, texts: Sequence[str], judge: Judge | None, tally: UsageTally, requests: list[int], called: str) -> list[str]:
        """The entities of `texts` (the reference alone, or the retrieved contexts, as an error
        calls them): by the extractor, the judge reading their sentences in chunks of about CHUNK_TOKENS."""
        if self.params.extractor == "capitalised_spans":
            return capitalised_spans("\n".join(texts))
        sentences = split_sentences("\n".join(texts), self.params.language)
        if not sentences:
            return []
        if judge is None:
            raise JudgeError("context_entity_recall's extractor=judge needs a judge, and none is loaded")
        ceiling = answer_tokens(judge.context_size)
        room = judge.context_size - ceiling - PROMPT_OVERHEAD - sum(judge.count_tokens(m["content"]) for m in entities_messages(""))
        entities: list[str] = []
        for chunk in chunk_sentences(sentences, judge.count_tokens, CHUNK_TOKENS, room, called):
            text = " ".join(sentences[i] for i in chunk)
            answer, usage = judge.ask(entities_messages(text), Entities, max_tokens=ceiling)
            tally.add(usage)
            requests[0] += 1
            entities.extend(grounded(answer.entities, text, self.params.match_threshold))
        return entities

    @classmethod
    def explain(cls, details: EntityRecallDetails) -> str:
        if not details.reference_entities:
            return "the reference names no entity (ragas scores that 0)"
        said = f"{len(details.found)} of {len(details.reference_entities)} reference entities named by the contexts"
        if not details.missing:
            return said
        shown = ", ".join(f"'{shorten(e, 60)}'" for e in details.missing[:MAX_ITEMS])
        more = f" and {len(details.missing) - MAX_ITEMS} more" if len(details.missing) > MAX_ITEMS else ""
        return f"{said}; missing {shown}{more}"
