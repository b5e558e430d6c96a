"""Non-LLM context recall: is each reference context (nearly) among the retrieved ones?

Default semantics are ragas' NonLLMContextRecall: similarity = 1 - rapidfuzz's
normalised Levenshtein distance, a reference counts as recalled when its best
similarity over the retrieved contexts is strictly above 0.5. All pairs of a whole
batch go to rapidfuzz in one `cpdist` call instead of a Python double loop.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz import distance, fuzz

from localeval.data.samples import Sample
from localeval.judge import Judge
from localeval.metrics.base import MAX_ITEMS, Metric, Score, ShareOption

if TYPE_CHECKING:
    import numpy as np

# numpy (and rapidfuzz's numpy-based `process`) are imported when the metric scores, not with the
# registry: a run of other metrics never loads them (under tight memory, OpenBLAS's start-up can
# end the process with exit code 1, which reads as a failed threshold).

Measure = Literal["levenshtein", "hamming", "jaro", "jaro_winkler", "indel", "partial_ratio", "token_set_ratio"]

# name -> (rapidfuzz scorer, True when it returns a normalised distance in 0..1,
# False when it returns a similarity in 0..100). Distances become similarities as
# 1 - distance, exactly as ragas computes them, so scores agree to the last bit.
MEASURES: dict[str, tuple[Callable[..., float], bool]] = {
    "levenshtein": (distance.Levenshtein.normalized_distance, True),
    "hamming": (distance.Hamming.normalized_distance, True),
    "jaro": (distance.Jaro.normalized_distance, True),
    "jaro_winkler": (distance.JaroWinkler.normalized_distance, True),
    "indel": (distance.Indel.normalized_distance, True),
    # These two do not punish a long retrieved chunk that contains the reference
    # verbatim, which Levenshtein scores near 0.
    "partial_ratio": (fuzz.partial_ratio, False),
    "token_set_ratio": (fuzz.token_set_ratio, False),
}
# The kernel's cutoff is widened by this much (on the 0..1 scale): rapidfuzz turns a
# normalised cutoff into an integer one with its own rounding (Hamming 14/20 = 0.7 is
# dropped at a cutoff of 0.7 + 1e-9), and a pair exactly at the threshold must come
# back exact. Values returned are always exact; the margin only costs a little speed.
CUTOFF_MARGIN = 1e-3

RAGAS_THRESHOLD = 0.5  # ragas NonLLMContextRecall's default
# partial_ratio aligns the shorter string with every window of the longer: when both are long
# its time grows with the cube of the shorter's length (2,000 characters: about 1 s per pair on
# one core, 4,000: 4 s, 10,000: 39 s). A pair whose shorter text is longer than this, and not
# contained verbatim in the other, is refused rather than left to run for minutes.
PARTIAL_RATIO_MAX_CHARS = 2_000


class StringRecallParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    measure: Measure = Field("levenshtein", description="string similarity measure")
    threshold: ShareOption = Field(
        RAGAS_THRESHOLD, description="a reference is recalled when its best similarity is > this"
    )
    partial_ratio_max_chars: int = Field(
        PARTIAL_RATIO_MAX_CHARS, ge=1, le=1_000_000,
        description="with measure=partial_ratio, a pair whose texts are both longer than this many characters makes the sample an error (its time grows with the cube of the length)",
    )
    exact_similarity: bool = Field(
        False,
        description="also report the exact best similarity of references that were not recalled "
        "(slower: the kernel cannot stop early at the threshold)",
    )


def _settled(retrieved: str, reference: str, measure: str) -> bool:
    """Pairs whose similarity is 1.0 without running the kernel: identical strings for every
    measure but token_set_ratio's blank ones, and for partial_ratio a shorter string contained
    verbatim in the longer one (partial_ratio's slowest case on long chunks, and a common one).
    token_set_ratio scores two texts without a word 0, identical or not: a blank pair goes to
    the kernel (rapidfuzz's whitespace is a subset of Python's, so a text that `strip` leaves
    non-empty has a word, and its identical twin scores 1.0)."""
    if retrieved == reference:
        return measure != "token_set_ratio" or bool(retrieved.strip())
    if measure == "partial_ratio" and retrieved and reference:
        shorter, longer = sorted((retrieved, reference), key=len)
        return shorter in longer
    return False


# Measures whose similarity is 1.0 only for identical strings: an identical retrieved
# context decides its reference outright (the most any pair can score, at the lowest
# index), so no other pair of that reference is computed.
EQUALITY_DECIDES = frozenset({"levenshtein", "hamming", "jaro", "jaro_winkler", "indel"})
# Measures whose distance is at least the difference in length, over this normaliser:
# when 1 - |a - b| / normaliser is already at most the threshold, no kernel call is needed.
LENGTH_BOUND: dict[str, Callable[[int, int], int]] = {
    "levenshtein": max,
    "hamming": max,
    "indel": lambda a, b: a + b,
}


def _length_decided(retrieved: list[str], references: list[str], measure: str, threshold: float, inclusive: bool = False) -> np.ndarray:
    """Mask of the pairs whose lengths alone keep the similarity at most the threshold (below
    it when `inclusive`: a pair exactly at an inclusive threshold reaches it). The
    bound is computed with the operations rapidfuzz uses (a distance over its normaliser,
    then 1 - it, in float64), so it never disagrees with the kernel on which side of the
    threshold a pair falls. Vectorised: one Python pass to read the lengths."""
    import numpy as np

    left = np.fromiter(map(len, retrieved), dtype=np.int64, count=len(retrieved))
    right = np.fromiter(map(len, references), dtype=np.int64, count=len(references))
    normaliser = np.maximum(left, right) if LENGTH_BOUND[measure] is max else left + right
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = 1.0 - np.abs(left - right) / normaliser
    decided: np.ndarray = (normaliser > 0) & ((bound < threshold) if inclusive else (bound <= threshold))
    return decided


def pair_similarities(
    retrieved: list[str], references: list[str], measure: str, threshold: float | None = None, inclusive: bool = False
) -> np.ndarray:
    """Similarity of every (retrieved[i], references[i]) pair, in one vectorised call.

    With a `threshold`, pairs that cannot exceed it come back as NaN, meaning "at most
    the threshold" (with `inclusive`, "below it": pairs that cannot reach it): those whose
    lengths alone decide it, and those on which rapidfuzz stops early (its `score_cutoff`,
    several times faster; its margin keeps a pair at the threshold exact). Every value that
    is returned is the exact similarity.
    """
    import numpy as np
    from rapidfuzz import process

    scorer, is_distance = MEASURES[measure]
    similarities = np.ones(len(retrieved), dtype=np.float64)
    pending = np.ones(len(retrieved), dtype=bool)
    if measure not in EQUALITY_DECIDES:  # where the kernel is slow on what is settled without it
        pending &= np.fromiter((not _settled(a, b, measure) for a, b in zip(retrieved, references)), dtype=bool, count=len(retrieved))
    if threshold is not None and measure in LENGTH_BOUND:
        decided = pending & _length_decided(retrieved, references, measure, threshold, inclusive)
        similarities[decided] = np.nan
        pending &= ~decided
    todo = np.flatnonzero(pending)
    if not len(todo):
        return similarities
    kwargs: dict[str, Any] = {}
    if threshold is not None:
        kwargs["score_cutoff"] = min(1.0, 1.0 - threshold + CUTOFF_MARGIN) if is_distance else max(0.0, 100.0 * (threshold - CUTOFF_MARGIN))
    raw = np.asarray(
        process.cpdist(
            [retrieved[i] for i in todo], [references[i] for i in todo], scorer=scorer, processor=None, dtype=np.float64, workers=-1, **kwargs
        ),
        dtype=np.float64,
    )
    values = 1.0 - raw if is_distance else raw / 100.0
    if threshold is not None:
        cut = raw > kwargs["score_cutoff"] if is_distance else raw < kwargs["score_cutoff"]
        values[cut] = np.nan
    similarities[todo] = values
    return similarities


# Stage two's cutoffs are rounded down to this grid, so a batch needs at most this many kernel calls.
CUTOFF_STEPS = 20


def best_first_similarities(
    left: list[str], right: list[str], spans: Sequence[tuple[int, int]], measure: str, threshold: float | None, inclusive: bool = False
) -> np.ndarray:
    """pair_similarities for pairs grouped by reference (`spans`: start and count of each
    reference's pairs), computing each reference's likeliest match first (for precision the
    groups are retrieved contexts, each seeking its best reference: the same search).

    Stage one computes, for each reference, the pair whose lengths are closest (where a
    near-duplicate usually is) with the cutoff at the threshold. Stage two computes the
    reference's other pairs with the cutoff raised to what stage one found, rounded down:
    a pair below it cannot be the best, and rapidfuzz stops much earlier on a high
    cutoff. The result is the same as one call at the threshold: every pair that could be
    the best is exact, and a reference's pairs reported as NaN are below its best (or, if
    it is not recalled, at most the threshold)."""
    import numpy as np

    if threshold is None:
        return pair_similarities(left, right, measure, None)
    # Vectorised over the batch (a Python pass per pair or per group cost as much as the kernel):
    # the groups are contiguous and in order, so sorting the pairs by group, then length gap,
    # then position puts each group's first-closest pair at the group's own start.
    starts = np.fromiter((start for start, _ in spans), dtype=np.int64, count=len(spans))
    counts = np.fromiter((count for _, count in spans), dtype=np.int64, count=len(spans))
    gaps = np.abs(np.fromiter(map(len, left), dtype=np.int64, count=len(left)) - np.fromiter(map(len, right), dtype=np.int64, count=len(right)))
    group = np.repeat(np.arange(len(spans)), counts)
    firsts = np.lexsort((np.arange(len(left)), gaps, group))[starts]
    similarities = np.full(len(left), np.nan)
    first_list = firsts.tolist()
    similarities[firsts] = pair_similarities([left[i] for i in first_list], [right[i] for i in first_list], measure, threshold, inclusive)
    found = similarities[firsts]
    with np.errstate(invalid="ignore"):  # NaN (at most the threshold) compares False: the cutoff stays the threshold
        raised = np.maximum(threshold, np.floor((found - CUTOFF_MARGIN) * CUTOFF_STEPS) / CUTOFF_STEPS)
        cutoffs = np.where(found > threshold, raised, threshold)
    others = np.ones(len(left), dtype=bool)
    others[firsts] = False
    pair_cutoffs = np.repeat(cutoffs, counts)
    for cutoff in np.unique(pair_cutoffs[others]).tolist():
        positions = np.flatnonzero(others & (pair_cutoffs == cutoff)).tolist()
        similarities[positions] = pair_similarities([left[i] for i in positions], [right[i] for i in positions], measure, cutoff, inclusive)
    return similarities


class ReferenceMatch(BaseModel):
    """The best retrieved context for one reference context. `similarity` (and `best_index`)
    is None when nothing was retrieved, or when the reference is not recalled and some pair
    is known only to be at most the threshold (its lengths decided it, or the kernel
    stopped early): then the best similarity is not known exactly, only that it is too low."""

    model_config = ConfigDict(extra="forbid")

    best_index: int | None
    similarity: float | None
    recalled: bool


class StringRecallDetails(BaseModel):
    model_config = ConfigDict(extra="forbid")

    references: list[ReferenceMatch]


class StringMatchMetric(Metric[StringRecallParams]):
    """What the two string metrics share: every text of one side seeks its best match among the
    other side's, all pairs of a batch in a few vectorised kernel calls. Recall's references each
    seek a retrieved context; precision's retrieved contexts each seek a reference."""

    required_fields = ("retrieved_contexts", "reference_contexts")
    Params = StringRecallParams
    # True: each retrieved context seeks its best reference (precision); False: each reference
    # seeks its best retrieved context (recall).
    per_retrieved: ClassVar[bool] = False
    # Whether a similarity equal to the threshold counts (ragas' precision: >=; its recall: >).
    inclusive: ClassVar[bool] = False

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        """Every sample's score; with partial_ratio, a sample with a pair too long to compare gets
        an error (`_too_long`) and the others are scored as usual."""
        refused = [self._too_long(sample) for sample in samples]
        valid = iter(self._score_all([sample for sample, error in zip(samples, refused) if error is None]))
        return [Score(value=None, error=error) if error is not None else next(valid) for error in refused]

    def _too_long(self, sample: Sample) -> str | None:
        """Why partial_ratio will not compare this sample's pairs, if it will not."""
        limit = self.params.partial_ratio_max_chars
        if self.params.measure != "partial_ratio":
            return None
        for r, reference in enumerate(sample.reference_contexts or []):
            for c, context in enumerate(sample.retrieved_contexts or []):
                if min(len(reference), len(context)) > limit and not _settled(context, reference, "partial_ratio"):
                    return (
                        f"partial_ratio compares texts of at most {limit:,} characters, and reference context #{r} ({len(reference):,}) "
                        f"and retrieved context #{c} ({len(context):,}) are both longer: its time grows with the cube of the length "
                        "(10,000 characters: about 40 s per pair). Use measure=token_set_ratio or levenshtein for long texts, "
                        f"or raise {self.name}.partial_ratio_max_chars"
                    )
        return None

    def _score_all(self, samples: Sequence[Sample]) -> list[Score]:
        return [self._score_block(block, unknown) for block, unknown in self._similarity_blocks(samples)]

    def _score_block(self, block: np.ndarray, unknown: np.ndarray) -> Score:
        """One sample's score from its matrix (`_similarity_blocks`)."""
        raise NotImplementedError

    def _similarity_blocks(self, samples: Sequence[Sample]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each sample's matrix, a row per text that seeks its best match and a column per
        candidate (-inf: not the best, or only known to be on the wrong side of the threshold),
        and the mask of the pairs only known to be on the wrong side (NaN from the kernel)."""
        import numpy as np

        params = self.params
        decides_by_equality = params.measure in EQUALITY_DECIDES
        left: list[str] = []  # the kernel reads (retrieved, reference), the order ragas calls it in
        right: list[str] = []
        computed: list[int] = []  # positions, in the batch's flat rows x candidates layout, of the pairs to compute
        spans: list[tuple[int, int]] = []  # each computed row's pairs in left/right
        identical: list[int] = []  # positions of pairs decided by identity (similarity 1.0)
        shapes: list[tuple[int, int]] = []
        offset = 0
        for sample in samples:
            retrieved, references = sample.retrieved_contexts or [], sample.reference_contexts or []
            rows, candidates = (retrieved, references) if self.per_retrieved else (references, retrieved)
            shapes.append((len(rows), len(candidates)))
            for text in rows:
                first_equal = candidates.index(text) if decides_by_equality and text in candidates else None
                if first_equal is not None:
                    identical.append(offset + first_equal)
                elif candidates:
                    spans.append((len(left), len(candidates)))
                    left.extend([text] * len(candidates) if self.per_retrieved else candidates)
                    right.extend(candidates if self.per_retrieved else [text] * len(candidates))
                    computed.extend(range(offset, offset + len(candidates)))
                offset += len(candidates)
        threshold = None if params.exact_similarity else params.threshold
        similarities = best_first_similarities(left, right, spans, params.measure, threshold, self.inclusive)
        # -inf for pairs never computed (an identical one decided their row), and for NaN
        # (on the wrong side of the threshold): both rank below every known similarity.
        # `unknown` marks the NaN ones: a row that does not reach the threshold reports its
        # best similarity only when none of its pairs is unknown.
        ranked = np.full(offset, -np.inf)
        unknown = np.zeros(offset, dtype=bool)
        unknown[computed] = np.isnan(similarities)
        ranked[computed] = np.where(unknown[computed], -np.inf, similarities)
        ranked[identical] = 1.0
        blocks = []
        offset = 0
        for n_rows, n_candidates in shapes:
            span = slice(offset, offset + n_rows * n_candidates)
            offset += n_rows * n_candidates
            blocks.append((ranked[span].reshape(n_rows, n_candidates), unknown[span].reshape(n_rows, n_candidates)))
        return blocks


def best_matches(block: np.ndarray, unknown: np.ndarray, threshold: float, inclusive: bool) -> list[tuple[int | None, float | None, bool]]:
    """Per row of a sample's matrix: its best candidate's index (the first of equals), that
    similarity, and whether it reaches the threshold (> it, or >= it when `inclusive`). Index
    and similarity are None when there is no candidate, or when the row does not reach the
    threshold and some pair is only known to be on the wrong side of it: then the best
    similarity is not known exactly, only that it is too low."""
    n_rows, n_candidates = block.shape
    if n_candidates == 0:
        return [(None, None, False)] * n_rows
    # a few vectorised calls per sample, not several per row; the max of booleans is "any"
    best, values, partial = block.argmax(axis=1).tolist(), block.max(axis=1).tolist(), unknown.max(axis=1).tolist()
    matches: list[tuple[int | None, float | None, bool]] = []
    for index, similarity, some_unknown in zip(best, values, partial):
        reached = similarity >= threshold if inclusive else similarity > threshold
        if similarity == -math.inf or (not reached and some_unknown):
            matches.append((None, None, False))
        else:
            matches.append((index, similarity, reached))
    return matches


class NonLlmContextRecall(StringMatchMetric):
    name = "nonllm_context_recall"
    description = (
        "Share of reference contexts whose best string similarity with a retrieved context "
        "is above the threshold (ragas NonLLMContextRecall by default)."
    )
    Details = StringRecallDetails

    def _score_block(self, block: np.ndarray, unknown: np.ndarray) -> Score:
        """Score one sample from its references x retrieved matrix."""
        if block.shape[0] == 0:
            return Score(value=float("nan"), details={"references": []})
        references = [
            {"best_index": index, "similarity": similarity, "recalled": recalled}
            for index, similarity, recalled in best_matches(block, unknown, self.params.threshold, inclusive=False)
        ]
        recalled_count = sum(1 for r in references if r["recalled"])
        return Score(value=recalled_count / len(references), details={"references": references})

    @classmethod
    def explain(cls, details: StringRecallDetails) -> str:
        references = details.references
        if not references:
            return "no reference contexts"
        missed = [(i, r) for i, r in enumerate(references) if not r.recalled]
        listed = ", ".join(f"#{i} ({similarity_text(r.similarity)})" for i, r in missed[:MAX_ITEMS])
        more = f" and {len(missed) - MAX_ITEMS} more" if len(missed) > MAX_ITEMS else ""
        return f"{len(missed)} of {len(references)} reference contexts not recalled" + (f": {listed}{more}" if listed else "")


def similarity_text(similarity: float | None) -> str:
    return "no close match" if similarity is None else f"best similarity {similarity:.2f}"
