"""The rank-aware retrieval metrics: nDCG@k, reciprocal rank, average precision, precision@k,
recall@k, hit rate@k and R-precision, each per sample, with trec_eval's numbers.

The ID metrics say whether the gold contexts were retrieved; these say where in the ranking they
came, which is what a retriever or reranker change moves. The ranking is `retrieved_context_ids`
in rank order, the relevant ids `reference_context_ids` (graded by `reference_context_grades`
when given). Every metric's details name the ranks where relevant ids were found, the relevant
ids never retrieved, and (nDCG) the DCG and ideal DCG, so a low score explains itself, and
`localeval compare` can say which relevant ids moved (localeval.comparison.rank_movers).
The figures are rank_core's; this module only wraps them as metrics.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from localeval.data.samples import Sample
from localeval.judge import Judge
from localeval.metrics.base import Metric, NoParams, Score, shorten
from localeval.metrics.id_recall import listed_ids
from localeval.metrics.rank_core import (
    NO_RELEVANT,
    Judged,
    average_precision,
    dcg,
    hit_at,
    ideal_dcg,
    judge_ranking,
    precision_at,
    r_precision,
    recall_at,
    reciprocal_rank,
)

RANK_FIELDS = ("retrieved_context_ids", "reference_context_ids")
MAX_RANKS = 10  # ranks an explanation lists


class AtK(BaseModel):
    """Options of a metric read at a cut-off k."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    k: int = Field(10, ge=1, strict=False, description="read the first k ranks")


class OptionalCutoff(BaseModel):
    """Options of a metric read over the whole ranking unless a cut-off is given."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    k: int | None = Field(None, ge=1, strict=False, description="read only the first k ranks (none: the whole ranking, as trec_eval's recip_rank and map; average_precision with k is map_cut_k)")


class RankDetails(BaseModel):
    """What every rank metric records: `ranks`, each relevant id found with its rank (the whole
    ranking, not only the first k, best first), `missing`, the relevant ids never retrieved, how
    many distinct ids were `retrieved`, the cut-off `k` read, the ids ranked more than once (when
    any), nDCG's DCG and ideal DCG, and why a score is undefined."""

    model_config = ConfigDict(extra="forbid")

    k: int | None
    ranks: dict[str, int]
    missing: list[str]
    retrieved: int
    duplicates: list[str] = []
    dcg: float | None = None
    ideal_dcg: float | None = None
    reason: str | None = None


class Reading:
    """A ranking read once for all seven metrics: the Judged figures and the evidence every
    metric's details share (built once, not once per metric): the ranks of the relevant ids
    found, those never retrieved, and the `notes` (repeated ids, why the figures are undefined).
    `source`: what it was read from, held so that a cached reading's key (its id()) is not reused
    while it is cached."""

    __slots__ = ("source", "judged", "ranks", "missing", "notes")

    def __init__(self, judged: Judged, source: object = None) -> None:
        self.source = source
        self.judged = judged
        self.ranks = {doc: rank for rank, doc in judged.hits}
        self.missing = list(judged.missing)
        self.notes: dict[str, Any] = {}
        if judged.duplicates:
            self.notes["duplicates"] = list(judged.duplicates)
        if not judged.relevant:
            self.notes["reason"] = NO_RELEVANT


READ_KEPT = 4096  # samples whose reading is kept: more than a batch, so the seven metrics of a run read each sample once
_READ: dict[int, Reading] = {}


def read_sample(sample: Sample, keep: int = READ_KEPT) -> Reading:
    """The sample's ranking as read, from the cache when another rank metric read it already (a
    Sample cannot change: frozen, its lists FrozenLists, so its identity is its content). `keep`:
    how many readings the cache holds, at least a batch (the metrics score a batch one after another)."""
    found = _READ.get(id(sample))
    if found is not None and found.source is sample:
        return found
    found = Reading(judge_ranking(sample.retrieved_context_ids or (), sample.reference_context_ids or (), sample.reference_context_grades), sample)
    while len(_READ) >= keep:
        del _READ[next(iter(_READ))]
    _READ[id(sample)] = found
    return found


def _details(read: Reading, k: int | None, **extra: Any) -> dict[str, Any]:
    details: dict[str, Any] = {"k": k, "ranks": read.ranks, "missing": read.missing, "retrieved": read.judged.retrieved}
    if extra:
        details.update(extra)
    if read.notes:
        details.update(read.notes)
    return details


def _explain(details: RankDetails) -> str:
    if details.reason:
        return details.reason
    parts = []
    if details.ranks:
        ranks = ", ".join(f"{shorten(doc, 40)} at {rank}" for doc, rank in list(details.ranks.items())[:MAX_RANKS])
        more = f" and {len(details.ranks) - MAX_RANKS} more" if len(details.ranks) > MAX_RANKS else ""
        parts.append(f"relevant ids found at ranks: {ranks}{more}")
    if details.missing:
        parts.append(f"{len(details.missing)} of {len(details.ranks) + len(details.missing)} relevant ids never retrieved: {listed_ids(details.missing)}")
    if details.ideal_dcg is not None and details.dcg is not None:
        parts.append(f"DCG@{details.k} {details.dcg:.3f} of an ideal {details.ideal_dcg:.3f}")
    if details.duplicates:
        parts.append(f"warning: ids ranked more than once (counted at their first rank): {listed_ids(details.duplicates)}")
    return "; ".join(parts) or "nothing retrieved"


class RankMetric(Metric[Any]):
    """What the seven share: fields, details, explanation, no judge, and the loop over samples;
    a subclass computes its figure (`value`, over a Judged and the option k)."""

    required_fields = RANK_FIELDS
    by_default = False  # a default run keeps its columns; a retrieval run names these (-m)
    Details = RankDetails

    def __init__(self, params: Any = None) -> None:
        super().__init__(params)
        self.cutoff: int | None = getattr(self.params, "k", None)  # read once: a metric without k would raise and catch per sample

    def score_batch(self, samples: Sequence[Sample], judge: Judge | None) -> list[Score]:
        keep = max(READ_KEPT, len(samples))
        return [Score(*self.figure_of(read_sample(s, keep))) for s in samples]

    def figure_of(self, read: Reading) -> tuple[float, dict[str, Any]]:
        """The metric's value and details for one ranking as read (a sample's, or a line's read
        without a Sample: localeval.run.rank_lines); NaN, with the reason, when nothing is relevant.
        A pair, not a Score: a retrieval run makes seven per query."""
        k = self.cutoff
        if not read.judged.relevant:
            return math.nan, _details(read, k)
        return self.value(read.judged, k), _details(read, k)

    def value(self, judged: Judged, k: int | None) -> float:
        """The figure of a ranking with at least one relevant id."""
        raise NotImplementedError

    @classmethod
    def explain(cls, details: RankDetails) -> str:
        return _explain(details)


class NdcgAtK(RankMetric):
    name = "ndcg_at_k"
    description = "nDCG@k of the retrieved ids' ranking: gain = grade (1 without reference_context_grades), discount log2(rank + 1), over the ideal ranking of every relevant id (trec_eval's ndcg_cut_k)."
    Params = AtK

    def figure_of(self, read: Reading) -> tuple[float, dict[str, Any]]:
        k = self.params.k
        judged = read.judged
        if not judged.relevant:
            return math.nan, _details(read, k)
        found, ideal = dcg(judged, k), ideal_dcg(judged, k)
        return found / ideal, _details(read, k, dcg=found, ideal_dcg=ideal)


class ReciprocalRank(RankMetric):
    name = "reciprocal_rank"
    description = "1 / the rank of the first relevant retrieved id, 0 when none was retrieved (within k when set); its mean is MRR (trec_eval's recip_rank)."
    Params = OptionalCutoff
    mean_is = "MRR (mean reciprocal rank)"

    def value(self, judged: Judged, k: int | None) -> float:
        return reciprocal_rank(judged, k)


class AveragePrecision(RankMetric):
    name = "average_precision"
    description = "Precision at each relevant id's rank, summed over every relevant id (within k when set); its mean is MAP (trec_eval's map, map_cut_k)."
    Params = OptionalCutoff
    mean_is = "MAP (mean average precision)"

    def value(self, judged: Judged, k: int | None) -> float:
        return average_precision(judged, k)


class PrecisionAtK(RankMetric):
    name = "precision_at_k"
    description = "Relevant ids among the first k retrieved, divided by k even when fewer were retrieved (trec_eval's P_k)."
    Params = AtK

    def value(self, judged: Judged, k: int | None) -> float:
        return precision_at(judged, self.params.k)


class RecallAtK(RankMetric):
    name = "recall_at_k"
    description = "Share of the relevant ids retrieved in the first k ranks (trec_eval's recall_k)."
    Params = AtK

    def value(self, judged: Judged, k: int | None) -> float:
        return recall_at(judged, self.params.k)


class HitRateAtK(RankMetric):
    name = "hit_rate_at_k"
    description = "1 when a relevant id is among the first k retrieved, else 0; its mean is the hit rate (trec_eval's success_k)."
    Params = AtK

    def value(self, judged: Judged, k: int | None) -> float:
        return hit_at(judged, self.params.k)


class RPrecision(RankMetric):
    name = "r_precision"
    description = "Precision at rank R, R the number of relevant ids (trec_eval's Rprec)."
    Params = NoParams

    def value(self, judged: Judged, k: int | None) -> float:
        return r_precision(judged)


RANK_METRICS: tuple[type[RankMetric], ...] = (NdcgAtK, ReciprocalRank, AveragePrecision, PrecisionAtK, RecallAtK, HitRateAtK, RPrecision)
