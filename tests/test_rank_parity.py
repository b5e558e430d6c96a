"""The rank metrics give trec_eval's numbers: 0 per-query differences above 1e-9 from pytrec_eval.

1,000 generated queries cover what trips hand-written versions: graded relevance (0 to 3),
rankings shorter than k and empty ones, relevant ids never retrieved, ids that are numbers, a
query whose judged ids are all 0, and tied scores in the run (ordered as trec_eval orders them,
by localeval.data.trec). The queries are scored through the metrics as a run scores them
(`localeval.evaluate`). ranx is checked on the same queries where it is installed: it agrees
once the ties are broken trec_eval's way (docs/metrics.md lists where it differs).
"""

from __future__ import annotations

import math
import random
import warnings

import pytest

import localeval
from localeval.data.trec import Judgements, retrieval_samples, trec_order

pytrec_eval = pytest.importorskip("pytrec_eval")

QUERIES = 1000
CUTS = (5, 10)
# trec_eval measure -> (localeval metric, its options)
MEASURES = {
    **{f"ndcg_cut_{k}": ("ndcg_at_k", {"k": k}) for k in CUTS},
    **{f"P_{k}": ("precision_at_k", {"k": k}) for k in CUTS},
    **{f"recall_{k}": ("recall_at_k", {"k": k}) for k in CUTS},
    **{f"success_{k}": ("hit_rate_at_k", {"k": k}) for k in CUTS},
    **{f"map_cut_{k}": ("average_precision", {"k": k}) for k in CUTS},
    "recip_rank": ("reciprocal_rank", {}),
    "map": ("average_precision", {}),
    "Rprec": ("r_precision", {}),
}
TREC_NAMES = {"ndcg_cut", "P", "recall", "success", "map_cut", "recip_rank", "map", "Rprec"}


def generated(n: int = QUERIES, seed: int = 78) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    """A run ({qid: {docid: score}}, scores to one decimal: many ties) and graded qrels."""
    rng = random.Random(seed)
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(n):
        qid = f"q{q}" if q % 3 else str(q)
        pool = list(dict.fromkeys(str(rng.randrange(1, 500)) if q % 2 == 0 else f"d{rng.randrange(1, 500)}" for _ in range(60)))
        judged = rng.sample(pool, rng.randint(1, 12))
        qrels[qid] = {d: 0 if q % 50 == 0 else rng.choice([0, 1, 1, 2, 3]) for d in judged}
        length = rng.choice([0, 1, 3, 5, 8, 10, 15, 30]) if q % 7 else rng.randint(0, 4)
        run[qid] = {d: round(rng.random(), 1) for d in rng.sample(pool, length)}
    return run, qrels


def ours(run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]]) -> dict[str, dict[str, float | None]]:
    """Every measure of MEASURES per query, as localeval scores the run and qrels."""
    rankings = {q: trec_order(list(scores.items())) for q, scores in run.items()}
    samples = list(retrieval_samples(rankings, Judgements({q: {d: float(r) for d, r in j.items()} for q, j in qrels.items()})))
    found: dict[str, dict[str, float | None]] = {str(s["id"]): {} for s in samples}
    for measure, (metric, options) in MEASURES.items():
        scored = localeval.evaluate(samples, [localeval.create_metric(metric, options)])
        for row in scored.results:
            found[str(row["id"])][measure] = row["scores"][metric]
    return found


@pytest.fixture(scope="module")
def generated_scores():
    run, qrels = generated()
    expected = pytrec_eval.RelevanceEvaluator(qrels, TREC_NAMES).evaluate(run)
    return run, qrels, expected, ours(run, qrels)


def test_no_query_differs_from_trec_eval_by_more_than_1e_9(generated_scores):
    run, qrels, expected, got = generated_scores
    assert len(expected) == QUERIES
    differences = []
    for query, figures in expected.items():
        if not any(grade > 0 for grade in qrels[query].values()):
            continue
        for measure in MEASURES:
            value = got[query][measure]
            if value is None or abs(value - figures[measure]) > 1e-9:
                differences.append((query, measure, value, figures[measure]))
    assert differences == []
    ties = sum(len(set(scores.values())) < len(scores) for scores in run.values())
    short = sum(0 < len(scores) < 10 for scores in run.values())
    assert ties > 300 and short > 200  # what the queries were generated to hold, held


def test_a_query_without_a_relevant_id_is_undefined_where_trec_eval_says_0(generated_scores):
    _, qrels, expected, got = generated_scores
    none_relevant = [q for q, judged in qrels.items() if not any(grade > 0 for grade in judged.values())]
    assert len(none_relevant) >= QUERIES // 50  # every 50th, and some whose grades all came out 0
    for query in none_relevant:
        assert all(value is None for value in got[query].values())  # NaN in the results: None here
        assert expected[query]["map"] == 0


def test_ties_are_ordered_as_trec_eval_orders_them():
    """Score descending, then docid descending as strings: '9' before '10', 'a' before 'Z'."""
    run = {"q": {"10": 1.0, "9": 1.0, "a": 1.0, "Z": 1.0, "b": 2.0}}
    for relevant in ("10", "9", "a", "Z", "b"):
        trec = pytrec_eval.RelevanceEvaluator({"q": {relevant: 1}}, {"recip_rank"}).evaluate(run)["q"]["recip_rank"]
        ranking = trec_order(list(run["q"].items()))
        assert 1 / (ranking.index(relevant) + 1) == trec
    assert trec_order(list(run["q"].items())) == ["b", "a", "Z", "9", "10"]


def test_ranx_agrees_once_ties_are_broken_trec_eval_s_way(generated_scores):
    """ranx orders tied scores its own way (not by docid); with the ties broken as trec_eval
    breaks them, its seven figures are trec_eval's."""
    ranx = pytest.importorskip("ranx")
    run, qrels, expected, _ = generated_scores
    untied = {q: {d: float(len(s) - i) for i, d in enumerate(trec_order(list(s.items())))} for q, s in run.items() if s}
    names = {"ndcg_cut_10": "ndcg@10", "recip_rank": "mrr", "map": "map", "P_10": "precision@10", "recall_10": "recall@10", "success_10": "hit_rate@10", "Rprec": "r-precision"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranked = ranx.Run(untied)
        ranx.evaluate(ranx.Qrels(qrels), ranked, list(names.values()), make_comparable=True)
    differences = [(q, m) for q in untied for m, r in names.items() if not math.isclose(ranked.scores[r][q], expected[q][m], abs_tol=1e-9)]
    assert differences == []
