"""The context_relevance variants docs/HISTORY.md reports, from the cached judge answers (no model).

For HotpotQA questions in every shape (10, 3 and 1 contexts; distractors only) and SQuAD 2.0
single-paragraph questions (alone, among three, unanswerable), each feature set is fitted
and cross-validated by question (10 folds; each source weighing the same) with the
selection threshold chosen for F1 plus a weight on saying "insufficient information" where
nothing answers; per shape it prints F1 or the "insufficient" share.

With --unread-verdict N it prints the value context_relevance gives a passage the judge does not
read (judge_units.UNREAD_VERDICT): the median of the judge's log-odds on the paragraphs of N HotpotQA
questions ranked after the fourth by how much of the question they mention (the model is loaded
for the verdicts not cached yet).

With --verdict-caps it prints the shipped features with the passage verdict weighed up to each
cap in turn (judge_units.VERDICT_CAP; 1e9: in full), refitted and cross-validated, and the
hand-written cases right under each rule.

With --judged-contexts it prints the cost/accuracy curve instead: the shipped features with the
judge reading at most N contexts per question (those that mention most of the question; 0 = all),
each refitted and cross-validated, with the prompt tokens the judge evaluates per HotpotQA question.

    python benchmarks/accuracy.py --task relevance,squad --limit relevance=30,squad=40   # fills the judge cache once
    python lab/explore_relevance.py --limit relevance=30,squad=40
    for n in 0 5 4 3; do python benchmarks/accuracy.py --task relevance,squad --limit relevance=30,squad=40 --judged-contexts $n; done
    python lab/explore_relevance.py --limit relevance=30,squad=40 --judged-contexts 0,5,4,3,2
    python lab/explore_relevance.py --limit relevance=60,squad=80 --verdict-caps 1e9,3,2,1.5,1,0.75
    python lab/explore_relevance.py --unread-verdict 30
    python lab/explore_relevance.py --limit relevance=60,squad=80 --oracle-verdicts

With --answer-rules it prints the shipped selection (the first unit holding the judge's short
answer joins any non-empty selection) against no answer rule and three variants (the holder
joins always, even an empty selection; every holder joins; the likeliest holder joins), each
refitted and cross-validated, applied to the dev half (`--shift 1`, fitted on the dev rows),
with the hand-written cases it gets wrong:

    python lab/explore_relevance.py --limit relevance=60,squad=80 --answer-rules

With --oracle-verdicts it prints what stands in the way at 10 contexts: the judge's passage verdict
(capped) ranked against the gold paragraphs (AUC per shape, over the paragraphs it reads), how many
gold paragraphs a run leaves unread and where they rank (by overlap, by `bridge`), and the
shipped features refitted and cross-validated with that verdict replaced by a perfect one (+-1 by
whether the paragraph holds a gold sentence), on the paragraphs the judge reads and on all of them.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # the benchmarks' libraries: no package holds them
import accuracy  # noqa: E402
from judge_cache import CACHE, CachedJudge  # noqa: E402
from labelled_rows import parse_limits, same_sentence  # noqa: E402

from localeval.calibration.fitting import FOLDS, UNANSWERABLE_WEIGHT, fit_selection, folds_by_group, selection_f1  # noqa: E402
from localeval.data.samples import Sample  # noqa: E402
from localeval.graders import judge_units  # noqa: E402
from localeval.judge.reading import UsageTally  # noqa: E402
from localeval.metrics import relevance  # noqa: E402
from localeval.metrics.relevance import FEATURES  # noqa: E402
from localeval.models.store import resolve_model  # noqa: E402

CHOICE = ("judge_choice", "judge_none")
BASE = [f for f in FEATURES if f not in CHOICE and f != "judge_answer"]
VARIANTS = {
    "no sentence-level judge signal": BASE,
    "+ the judge's choice among the sentences": [f for f in FEATURES if f != "judge_answer"],
    "+ the judge's short answer instead of the choice": [f for f in FEATURES if f not in CHOICE],
    "+ the choice and the short answer, with the subject features": list(FEATURES),
    "+ the choice and the short answer (shipped: no subject features)": accuracy.RELEVANCE_FEATURES,
    "shipped, without 'none'": [f for f in accuracy.RELEVANCE_FEATURES if f != "judge_none"],
    "shipped, without opens_passage": [f for f in accuracy.RELEVANCE_FEATURES if f != "opens_passage"],
    "shipped, without answer_stands_alone and opens_long_question (the rule until 2026-11-25)": [
        f for f in accuracy.RELEVANCE_FEATURES if f not in ("answer_stands_alone", "opens_long_question")
    ],
    "shipped, without answer_stands_alone": [f for f in accuracy.RELEVANCE_FEATURES if f != "answer_stands_alone"],
    "shipped, without opens_long_question": [f for f in accuracy.RELEVANCE_FEATURES if f != "opens_long_question"],
    "the judge only within the passage (no unit overlap, opening or new facts)": [
        f for f in accuracy.RELEVANCE_FEATURES if f not in ("overlap", "overlap_vs_best", "opens_passage", "named_by_pronoun", "new_facts")
    ],
}


def _no_model() -> None:
    raise SystemExit("a judge answer is not cached: run benchmarks/accuracy.py --task relevance with the same --limit first")


def plain_right(records: list[dict], plain: list[dict], features: list[str], weight: float) -> int:
    """Hand-written cases (never fitted on) whose selection is exactly right, under the rule fitted on all `records`."""
    model = fit_selection([r["features"] for r in records], [set(r["gold"]) for r in records], features, judge_units.select_units, weight, accuracy.source_weights(records))
    return sum(set(judge_units.select_units(model.probabilities(r["features"]), r["features"], 0.5)) == set(r["gold"]) for r in plain)


def figures(records: list[dict], features: list[str], weight: float) -> str:
    folds = folds_by_group([r["group"] for r in records], FOLDS)
    selections: list[set[int]] = [set() for _ in records]
    for fold in range(FOLDS):
        train = [r for r, f in zip(records, folds) if f != fold]
        model = fit_selection([r["features"] for r in train], [set(r["gold"]) for r in train], features, judge_units.select_units, weight, accuracy.source_weights(train))
        for index, (r, f) in enumerate(zip(records, folds)):
            if f == fold:
                selections[index] = set(judge_units.select_units(model.probabilities(r["features"]), r["features"], 0.5))
    cells, values = [], []
    for shape in accuracy.RELEVANCE_SHAPES:
        picked = [(s, set(r["gold"])) for s, r in zip(selections, records) if r["shape"] == shape]
        if not picked:
            continue
        if "without" in shape:
            values.append(statistics.fmean(not s for s, _ in picked))
            cells.append(f"[{shape}] insufficient {values[-1]:.2f}")
        else:
            values.append(statistics.fmean(selection_f1(s, g)[2] for s, g in picked))
            cells.append(f"[{shape}] F1 {values[-1]:.3f}")
    return "   ".join(cells) + f"   mean over the shapes {statistics.fmean(values):.3f}"


UNREAD_RANK = 4  # the paragraphs ranked after this many are those a judge reading 3 leaves unread, less the near misses


def unread_verdict(judge: CachedJudge, questions: int) -> None:
    """The median and quartiles of the judge's log-odds on low-ranked paragraphs, split by whether
    a gold paragraph of the question is among them (on 30 dev questions, 18 of them)."""
    rows = accuracy.read("relevance_dev.jsonl", questions)
    values: dict[bool, list[float]] = {True: [], False: []}
    for row in rows:
        contexts = row["retrieved_contexts"]
        units = relevance._units(Sample(user_input=row["user_input"], retrieved_contexts=contexts), "sentence", "en")
        _, passage_overlap, _ = judge_units._question_overlap(row["user_input"], units, len(contexts), "en")
        ranked = sorted(range(len(contexts)), key=lambda p: (-passage_overlap[p], p))[UNREAD_RANK:]
        gold = {u.passage for u in units if any(same_sentence(u.text, g) for g in row["gold_sentences"])}
        low, _, _ = judge_units._judge_passages(judge, [contexts[p] for p in ranked], row["user_input"], "en", None, UsageTally())  # the passage prompts a run reads
        values[bool(gold & set(ranked))] += low
    for has_gold, found in values.items():
        if found:
            quartiles = statistics.quantiles(found, n=4)
            print(f"paragraphs ranked after {UNREAD_RANK}, {'with' if has_gold else 'without'} a gold one among them: n {len(found)}, median log-odds {statistics.median(found):.2f} (quartiles {quartiles[0]:.2f}, {quartiles[2]:.2f})")
    every = values[True] + values[False]
    print(f"all of them: n {len(every)}, median {statistics.median(every):.2f}: judge_units.UNREAD_VERDICT")


def _paragraphs(units: list[dict]) -> list[range]:
    """The units of each context, from the opening-unit marks."""
    starts = [i for i, unit in enumerate(units) if unit["opens_passage"] == 1.0] + [len(units)]
    return [range(a, b) for a, b in zip(starts, starts[1:])]


def _auc(positive: list[float], negative: list[float]) -> float:
    return sum((p > n) + 0.5 * (p == n) for p in positive for n in negative) / (len(positive) * len(negative))


def oracle_verdicts(records: list[dict]) -> None:
    """The passage verdict's share of the error (see the module docstring)."""
    for shape in ("10", "3", "squad 3"):
        gold_values, other_values = [], []
        for record in (r for r in records if r["shape"] == shape):
            for paragraph in _paragraphs(record["features"]):
                value = record["features"][paragraph[0]]["judge_passage"]
                if value != judge_units.UNREAD_VERDICT:
                    (gold_values if set(paragraph) & set(record["gold"]) else other_values).append(value)
        print(f"[{shape}] the judge's verdict on the paragraphs it reads: AUC {_auc(gold_values, other_values):.3f} ({len(gold_values)} gold, {len(other_values)} others)")
    ten = [r for r in records if r["shape"] == "10"]
    gold_paragraphs = unread = third_gold = bridging_gold = gold_openings = 0
    for record in ten:
        units, gold = record["features"], set(record["gold"])
        paragraphs = _paragraphs(units)
        is_gold = [bool(set(paragraph) & gold) for paragraph in paragraphs]
        gold_paragraphs += sum(is_gold)
        unread += sum(g and units[paragraph[0]]["judge_passage"] == judge_units.UNREAD_VERDICT for g, paragraph in zip(is_gold, paragraphs))
        gold_openings += sum(units[i]["opens_passage"] == 1.0 for i in gold)
        ranked = sorted(range(len(paragraphs)), key=lambda k: (-units[paragraphs[k][0]]["passage_overlap"], k))
        rest = sorted(ranked[2:], key=lambda k: (-units[paragraphs[k][0]]["bridge"], -units[paragraphs[k][0]]["passage_overlap"], k))
        third_gold += len(ranked) > 2 and is_gold[ranked[2]]
        bridging_gold += bool(rest) and is_gold[rest[0]]
    print(f"[10] {unread} of the {gold_paragraphs} gold paragraphs are not read; of the paragraphs after the 2 that mention most of the question, "
          f"the third by that measure is gold in {third_gold} questions, the one that bridges best from the best in {bridging_gold}; "
          f"{gold_openings} of the {sum(len(r['gold']) for r in ten)} gold sentences open their paragraph")
    print(f"{'shipped features':<36} {figures(records, accuracy.RELEVANCE_FEATURES, UNANSWERABLE_WEIGHT)}")
    for unread_too in (False, True):
        perfect = copy.deepcopy(records)
        for record in perfect:
            for paragraph in _paragraphs(record["features"]):
                for i in paragraph:
                    if unread_too or record["features"][i]["judge_passage"] != judge_units.UNREAD_VERDICT:
                        record["features"][i]["judge_passage"] = 1.0 if set(paragraph) & set(record["gold"]) else -1.0
        name = "perfect verdicts, every paragraph" if unread_too else "perfect verdicts, paragraphs read"
        print(f"{name:<36} {figures(perfect, accuracy.RELEVANCE_FEATURES, UNANSWERABLE_WEIGHT)}", flush=True)


def held_out(records: list[dict], held: list[dict], features: list[str]) -> str:
    """The rule fitted on all dev `records`, applied to the `held` rows: F1 or "insufficient" per shape."""
    model = fit_selection([r["features"] for r in records], [set(r["gold"]) for r in records], features, judge_units.select_units, UNANSWERABLE_WEIGHT, accuracy.source_weights(records))
    selections = [set(judge_units.select_units(model.probabilities(r["features"]), r["features"], 0.5)) for r in held]
    shapes = accuracy.shape_figures(held, selections)
    values = {shape: figure["insufficient"] if "without" in shape else figure["f1"] for shape, figure in shapes.items()}
    return "   ".join(f"[{shape}] {value:.3f}" for shape, value in values.items()) + f"   mean {statistics.fmean(values.values()):.3f}"


def _answer_rule(rule: str) -> Callable[[Sequence[float], Sequence[Mapping[str, float]], float], list[int]]:
    """context_relevance's selection with the judge's answer joined another way (see ANSWER_RULES)."""

    def select(probabilities: Sequence[float], features: Sequence[Mapping[str, float]], threshold: float) -> list[int]:
        selected = set(judge_units.above_threshold(probabilities, features, threshold))
        holders = [i for i, f in enumerate(features) if f["judge_answer"] > 0]
        if holders and (selected or rule == "first holder, always"):
            if rule == "every holder joins a selection":
                selected.update(holders)
            elif rule == "the likeliest holder joins a selection":
                selected.add(max(holders, key=lambda i: (probabilities[i], -i)))
            elif rule != "none":
                selected.add(holders[0])
        return sorted(selected)

    return select


ANSWER_RULES = ("shipped", "none", "first holder, always", "every holder joins a selection", "the likeliest holder joins a selection")


def answer_rules(judge: CachedJudge, limit: Any) -> None:
    """The shipped rule (the first unit holding the judge's short answer joins a non-empty
    selection) against its variants: cross-validated, on the dev half (the fit applied to the
    `--shift 1` rows) and the hand-written cases wrong."""
    records, plain = dev_records(judge, limit), accuracy.plain_relevance_records(judge)
    held = accuracy.relevance_rows(judge, limit("relevance", limit("*")), 1) + accuracy.squad_rows(judge, limit("squad", limit("*")), 1)
    shipped = judge_units.select_units
    features = accuracy.RELEVANCE_FEATURES
    for rule in ANSWER_RULES:
        judge_units.select_units = shipped if rule == "shipped" else _answer_rule(rule)
        model = fit_selection([r["features"] for r in records], [set(r["gold"]) for r in records], features, judge_units.select_units, UNANSWERABLE_WEIGHT, accuracy.source_weights(records))
        wrong = [r["group"] for r in plain if set(judge_units.select_units(model.probabilities(r["features"]), r["features"], 0.5)) != set(r["gold"])]
        print(f"{rule}\n  cross-validated {figures(records, features, UNANSWERABLE_WEIGHT)}\n  dev half        {held_out(records, held, features)}\n"
              f"  plain cases wrong: {', '.join(wrong) or 'none'}", flush=True)
    judge_units.select_units = shipped


def cached_judge() -> CachedJudge:
    """The default judge's cached answers, never the model: a missing answer stops with a hint."""
    path, _ = resolve_model(None)
    return CachedJudge(CACHE / path.name / "answers.jsonl", _no_model, {})


def dev_records(judge: CachedJudge, limit: Any) -> list[dict]:
    records = accuracy.relevance_rows(judge, limit("relevance", limit("*")), 0) if limit("relevance", limit("*")) != 0 else []
    return records + (accuracy.squad_rows(judge, limit("squad", limit("*")), 0) if limit("squad", limit("*")) != 0 else [])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=parse_limits, default={"relevance": 30, "squad": 40}, help="as accuracy.py's: relevance=N,squad=N (0 leaves a source out)")
    parser.add_argument("--weights", default="0.1,0.25", help="weights of 'insufficient' where nothing answers, comma-separated")
    parser.add_argument("--unread-verdict", type=int, help="measure judge_units.UNREAD_VERDICT on this many HotpotQA questions (loads the model for verdicts not cached)")
    parser.add_argument("--verdict-caps", help="comma-separated caps on the passage verdict's log-odds to compare (judge_units.VERDICT_CAP)")
    parser.add_argument("--oracle-verdicts", action="store_true", help="what a perfect passage verdict would give (see above)")
    parser.add_argument("--answer-rules", action="store_true", help="the sentence holding the judge's answer: the shipped rule against its variants")
    parser.add_argument("--judged-contexts", help="comma-separated: the cost/accuracy curve over context_relevance's judged_contexts (0 = all)")
    args = parser.parse_args()
    path, _ = resolve_model(None)
    if args.unread_verdict:
        unread_verdict(CachedJudge(CACHE / path.name / "answers.jsonl", lambda: accuracy.load_judge(str(path)), {}), args.unread_verdict)
        return
    judge = cached_judge()
    if args.oracle_verdicts:
        oracle_verdicts(dev_records(judge, args.limit.get))
        return
    if args.answer_rules:
        answer_rules(judge, args.limit.get)
        return
    if args.verdict_caps:
        for cap in (float(c) for c in args.verdict_caps.split(",")):
            judge_units.VERDICT_CAP = cap
            records, plain = dev_records(judge, args.limit.get), accuracy.plain_relevance_records(judge)
            for weight in (float(w) for w in args.weights.split(",")):
                print(f"verdict cap {cap:<6g} weight {weight:<5} {figures(records, accuracy.RELEVANCE_FEATURES, weight)}   "
                      f"plain {plain_right(records, plain, accuracy.RELEVANCE_FEATURES, weight)} of {len(plain)}", flush=True)
        return
    if args.judged_contexts:
        for judged in (int(n) for n in args.judged_contexts.split(",")):
            accuracy.RELEVANCE_OPTIONS["judged_contexts"] = judged
            records, plain = dev_records(judge, args.limit.get), accuracy.plain_relevance_records(judge)
            cost = accuracy.judge_cost(r for r in records if r["source"] == "hotpotqa")
            print(f"judged_contexts {judged or 'all':<4} {cost['prompt_evaluated']:6.0f} prompt tokens and {cost['calls']:4.1f} calls per HotpotQA question   "
                  f"{figures(records, accuracy.RELEVANCE_FEATURES, UNANSWERABLE_WEIGHT)}   plain {plain_right(records, plain, accuracy.RELEVANCE_FEATURES, UNANSWERABLE_WEIGHT)} of {len(plain)}", flush=True)
        return
    records, plain = dev_records(judge, args.limit.get), accuracy.plain_relevance_records(judge)
    for weight in (float(w) for w in args.weights.split(",")):
        for name, features in VARIANTS.items():
            right = plain_right(records, plain, features, weight)
            print(f"weight {weight:<5} {name:<56} {figures(records, features, weight)}   plain {right} of {len(plain)}", flush=True)


if __name__ == "__main__":
    main()
