"""Choose context_relevance's decision among the judge rule, the verifier, a stacked model and a cascade, on validation rows only.

Reads decision_rows.py's file (both graders' answers for every unit of the validation relevance
samples) and scores each candidate the way the metric is judged: per shape, the mean selection F1
where something answers and the share said "insufficient information" where nothing does, then
the mean over shapes (tune_cut.py's figure). Every fitted candidate is scored out of fold, folds
by question, so no candidate is scored on the questions it was fitted on:

- judge: the judge rule as shipped (its selection, unchanged);
- verifier: the verifier file's own rule (its tuned cut and passage weight);
- stacked: a per-unit logistic model of "required" on the judge rule's features plus the
  verifier's logit and its context's best logit (localeval.calibration.fitting.fit_selection, the
  metric's selection rule, its threshold fitted with it);
- cascade: the verifier decides a unit whose logit is outside a band; inside it, the judge rule
  does. The band is chosen on the training folds; a sample with no unit inside the band never
  asks the judge, which is what it saves.
- judge rule refitted: the judge rule's own features (no verifier reading) refitted the same way,
  a candidate for the default's table; `--write-calibration NAME FILE` writes it, fitted on all
  rows, as a calibration file, so the benchmarks measure it through the metric on the dev rows
  (`accuracy.py --calibration FILE`) before the catalog changes (Rule 23, docs/HISTORY.md).

`--task attribution` chooses the same way for the statements context_recall, faithfulness and
factual_correctness judge (decision_rows.py --task attribution): the judge rule (its shipped
calibration at 0.5, and refitted here on its own features: the refit of its calibration for
0.5.0's prompt, issue 48), the verifier (its file's cut), a stacked logistic model of the judge rule's
features and the verifier's logit (classes and sources weighed equally, folds by group), and a
cascade (the judge is asked only where the verifier's logit falls inside a band). The figure is
the mean over sources of the balanced accuracy.

    python training/choose_decision.py --file training/.cache/candidate/verifier.safetensors
    python training/choose_decision.py --task attribution --file localeval/verifier/verifier.safetensors

`--against ROWS` weighs each candidate against the same candidate on another verifier file's rows
of the same samples or claims (decision_rows.py --logits-from; `--against-file`, default the
shipped file): the difference of the figure with a 95% interval from a paired bootstrap over
questions (claim groups for attribution), so a rule for shipping a new file can ask for more than noise.

Every candidate's figure is also given as its difference from the judge rule on the same rows,
with the same paired interval: whether a candidate beats the default by more than noise.

`--ship NAME` stores the named stacked candidate, fitted on all the rows, in the default judge's
catalog table for the task (localeval/catalog.toml, `stacked` inside `calibration.<task>`, with
the verifier file's SHA-256), where localeval.graders.stacked reads it; `--task attribution
--ship cascade` stores the cascade's band chosen on all the rows (`cascade`). Only for the
shipped verifier file: a stacked model or a band reads one file's logits.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import tomllib
from splits import refuse_sealed

from localeval.calibration.fitting import Fit, Selector, balanced_accuracy, balancing_weights, fit_logistic, fit_selection, folds_by_group, selection_f1
from localeval.graders.judge_units import select_units
from localeval.graders.stacked import CASCADE, STACKED, STACKED_FEATURES, relevance_features
from localeval.graders.verifier import context_best
from localeval.models.store import CATALOG, DEFAULT_MODEL, replace_calibrations
from localeval.run.calibrate import calibration_document
from localeval.verifier import Verifier, shipped_path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "training" / ".cache"
CATALOG_FILE = ROOT / "localeval" / "catalog.toml"
FOLDS = 5
BAND_EDGES = [round(float(x), 2) for x in np.arange(-4.0, 8.01, 0.5)]
BANDS = [(low, high) for low in BAND_EDGES for high in BAND_EDGES if high >= low]  # the cascade bands tried: [low, high) of the verifier's logit
BOOTSTRAP_DRAWS = 2000  # paired resamples of the questions for --against's interval
SEED = 20261126

Selections = list[set[int]]
# The stacked relevance models tried: their features (empty: every judge rule feature and the
# verifier's three), and whether each sample weighs the same in the fit ("per sample") or each
# unit does (a ten-paragraph question has forty units, a plain window three: unit weights let
# HotpotQA decide the model, and it then selects a plain answer's neighbours too).
STACKED_CANDIDATES: dict[str, tuple[list[str], bool]] = {
    "stacked (judge features + verifier)": ([], False),
    "stacked (verifier + judge_passage, judge_choice)": (["verifier", "verifier_passage", "judge_passage", "judge_choice"], False),
    "stacked (the four + verifier_vs_best)": (["verifier", "verifier_passage", "verifier_vs_best", "judge_passage", "judge_choice"], False),
    "stacked (judge features + verifier), per sample": ([], True),
    "stacked (the four), per sample": (["verifier", "verifier_passage", "judge_passage", "judge_choice"], True),
    "stacked (the four + verifier_vs_best), per sample": (["verifier", "verifier_passage", "verifier_vs_best", "judge_passage", "judge_choice"], True),
}
# What `--verifier` could decide on without a judge: the verifier's three readings beside the judge
# rule's features that are facts about the text (how much of the question a unit and its context
# mention, whether it opens its context...), selected by the threshold alone (no judge's answer or
# "none" to extend or fall back on). Each unit weighing 1, or each sample the same.
QUESTION_EVIDENCE = ("overlap", "overlap_vs_best", "focus_vs_best", "passage_overlap", "bridge", "opens_passage", "subject_asked", "named_by_pronoun", "new_facts", "opens_long_question")
NO_JUDGE_FEATURES = ["verifier", "verifier_passage", "verifier_vs_best", *QUESTION_EVIDENCE]
NO_JUDGE_CANDIDATES: dict[str, bool] = {"verifier + question evidence (no judge)": False, "verifier + question evidence (no judge), per sample": True}
# The judge rule's own features refitted on the validation rows (its shipped table was fitted on HotpotQA
# dev and SQuAD only, never on the plain shapes): the default's decision with no verifier. Each: the
# features left out, and whether each sample weighs the same. SUBJECT_FEATURES are those the shipped table
# leaves at 0 since 2026-11-24 (docs/experiments.md); HotpotQA's labels, which count the sentence that
# introduces the entity, pull them up (Rule 23).
SUBJECT_FEATURES = ("focus_vs_best", "subject_asked")
JUDGE_REFIT_CANDIDATES: dict[str, tuple[tuple[str, ...], bool]] = {
    "judge rule refitted (its own features)": ((), False),
    "judge rule refitted (its own features), per sample": ((), True),
    "judge rule refitted (without the subject features)": (SUBJECT_FEATURES, False),
}


def sample_weights(rows: Sequence[dict[str, Any]], per_sample: bool) -> list[float] | None:
    """Unit weights that make each sample weigh the same (mean 1), or None: each unit weighs 1."""
    if not per_sample:
        return None
    weights = [1.0 / max(1, len(r["verifier_logits"])) for r in rows]
    mean = statistics.fmean(weights)
    return [w / mean for w in weights]


def shape_figures(rows: Sequence[dict[str, Any]], selections: Selections) -> dict[str, float]:
    """Per shape: mean F1 where something answers, the share left empty where nothing does."""
    by_shape: dict[str, list[float]] = {}
    for shape, value in sample_values(rows, selections):
        by_shape.setdefault(shape, []).append(value)
    return {shape: statistics.fmean(values) for shape, values in sorted(by_shape.items())}


def figure(rows: Sequence[dict[str, Any]], selections: Selections) -> float:
    """The one number candidates are chosen by: the mean of shape_figures."""
    return statistics.fmean(shape_figures(rows, selections).values())


def sample_values(rows: Sequence[dict[str, Any]], selections: Selections) -> list[tuple[str, float]]:
    """Each sample's shape and its part of shape_figures: its F1, or 1 when it is rightly left empty."""
    return [
        (f"F1 {r['shape']}", selection_f1(s, set(r["required"]))[2]) if r["required"] else (f"insufficient {r['shape']}", float(not s))
        for r, s in zip(rows, selections)
    ]


def mean_of_shapes(values: Sequence[tuple[str, float]]) -> Callable[[Sequence[int]], float]:
    """figure() over the samples at the given indices (repeats count again), from sample_values."""

    def of(chosen: Sequence[int]) -> float:
        by_shape: dict[str, list[float]] = {}
        for i in chosen:
            by_shape.setdefault(values[i][0], []).append(values[i][1])
        return statistics.fmean(statistics.fmean(v) for v in by_shape.values())

    return of


def paired_difference(groups: Sequence[str], new: Callable[[Sequence[int]], float], old: Callable[[Sequence[int]], float], draws: int = BOOTSTRAP_DRAWS) -> tuple[float, float, float]:
    """The figure's difference new - old on the same rows, with a 95% interval from a paired
    bootstrap over groups (the rows of one question or claim group move together): how much of a
    difference between two verifier files' decisions the validation rows can tell from noise.
    `new` and `old` give each side's figure on the rows at some indices."""
    members: dict[str, list[int]] = {}
    for i, group in enumerate(groups):
        members.setdefault(group, []).append(i)
    names = sorted(members)
    rng = np.random.default_rng(SEED)
    differences = []
    for _ in range(draws):
        chosen = [i for g in rng.choice(len(names), len(names)) for i in members[names[g]]]
        differences.append(new(chosen) - old(chosen))
    low, high = np.quantile(differences, [0.025, 0.975])
    everything = list(range(len(groups)))
    return new(everything) - old(everything), float(low), float(high)


def passage_best(row: dict[str, Any]) -> list[float]:
    """Each unit's context's best verifier logit."""
    return context_best(row["verifier_logits"], row["contexts_of_units"])


def verifier_selections(rows: Sequence[dict[str, Any]], cut: float, passage_weight: float) -> Selections:
    return [{i for i, (v, b) in enumerate(zip(r["verifier_logits"], passage_best(r))) if v + passage_weight * b >= cut} for r in rows]


def cascade_selections(rows: Sequence[dict[str, Any]], low: float, high: float) -> tuple[Selections, float]:
    """The verifier above `high` selects, below `low` leaves out, the judge rule decides between;
    with the share of samples that asked the judge at all."""
    selections, asked = [], 0
    for row in rows:
        judged = set(row["judge_selected"])
        band = [low <= v < high for v in row["verifier_logits"]]
        asked += any(band)
        selections.append({i for i, v in enumerate(row["verifier_logits"]) if v >= high or (band[i] and i in judged)})
    return selections, asked / len(rows)


def unit_features(row: dict[str, Any]) -> list[dict[str, float]]:
    """The judge rule's features of each unit beside the verifier's, as the stacked grader reads them."""
    return relevance_features(row["judge_features"], row["verifier_logits"], passage_best(row))


def out_of_fold(rows: Sequence[dict[str, Any]], choose: Callable[[list[dict[str, Any]]], Callable[[dict[str, Any]], set[int]]]) -> Selections:
    """Each row's selection by a rule chosen on the other folds (folds by question)."""
    fold_of = folds_by_group([r["group"] for r in rows], FOLDS)
    selections: Selections = [set() for _ in rows]
    for fold in range(FOLDS):
        train = [r for r, f in zip(rows, fold_of) if f != fold]
        rule = choose(train)
        for i, (row, f) in enumerate(zip(rows, fold_of)):
            if f == fold:
                selections[i] = rule(row)
    return selections


def threshold_only(probabilities: Sequence[float], features: Sequence[Mapping[str, float]], threshold: float) -> list[int]:
    """The units at or above `threshold`: a selection rule that asks nothing of the judge."""
    return [i for i, p in enumerate(probabilities) if p >= threshold]


def stacked_rule(features: Sequence[str], per_sample: bool, selector: Selector = select_units) -> Callable[[list[dict[str, Any]]], Callable[[dict[str, Any]], set[int]]]:
    def choose(train: list[dict[str, Any]]) -> Callable[[dict[str, Any]], set[int]]:
        fit = fit_stacked(train, features, per_sample, selector)

        def rule(row: dict[str, Any]) -> set[int]:
            units = unit_features(row)
            return set(selector(fit.probabilities(units).tolist(), units, 0.5))

        return rule

    return choose


def fit_stacked(rows: Sequence[dict[str, Any]], features: Sequence[str], per_sample: bool, selector: Selector = select_units) -> Fit:
    """The stacked selection model on `rows` (localeval.calibration.fitting.fit_selection: the metric's selection rule, its threshold fitted with it)."""
    return fit_selection([unit_features(r) for r in rows], [set(r["required"]) for r in rows], features, selector, row_weights=sample_weights(rows, per_sample))


def no_worse(cells: dict[str, float], judge: dict[str, float]) -> bool:
    """Whether a candidate is at least the judge rule's figure on every shape (the issue's bar for a default)."""
    return all(cells[shape] >= judge[shape] for shape in judge)


def best_band(rows: Sequence[dict[str, Any]]) -> tuple[float, float]:
    """The band with the best figure on `rows`, the cheaper (fewer samples asking the judge) on a tie."""

    def merit(band: tuple[float, float]) -> tuple[float, float]:
        selections, asked = cascade_selections(rows, *band)
        return figure(rows, selections), -asked

    return max(BANDS, key=merit)


def cascade_rule(train: list[dict[str, Any]]) -> Callable[[dict[str, Any]], set[int]]:
    low, high = best_band(train)
    return lambda row: cascade_selections([row], low, high)[0][0]


Verdicts = list[int]


def source_figures(rows: Sequence[dict[str, Any]], verdicts: Verdicts) -> dict[str, float]:
    """Balanced accuracy per source that has both labels."""
    by_source: dict[str, list[tuple[int, int]]] = {}
    for row, verdict in zip(rows, verdicts):
        by_source.setdefault(row["source"], []).append((row["label"], verdict))
    return {source: balanced_accuracy([y for y, _ in pairs], [v for _, v in pairs]) for source, pairs in sorted(by_source.items()) if len({y for y, _ in pairs}) == 2}


def attribution_features(row: dict[str, Any]) -> dict[str, float]:
    return {**row["judge_features"], "verifier": row["verifier_logit"]}


def stacked_attribution(features: Sequence[str]) -> Callable[[list[dict[str, Any]]], Callable[[dict[str, Any]], int]]:
    """A logistic model of the label on `features`, classes and sources weighed equally (0.5 decides)."""

    def choose(train: list[dict[str, Any]]) -> Callable[[dict[str, Any]], int]:
        weights = balancing_weights([r["label"] for r in train], [r["source"] for r in train])
        fit = fit_logistic([attribution_features(r) for r in train], [r["label"] for r in train], weights, features)
        return lambda row: int(fit.probabilities([attribution_features(row)])[0] >= 0.5)

    return choose


def cascade_attribution(rows: Sequence[dict[str, Any]], low: float, high: float) -> tuple[Verdicts, float]:
    """The verifier decides outside [low, high), the judge rule inside; with the share that asked the judge."""
    verdicts = [int(r["verifier_logit"] >= high or (low <= r["verifier_logit"] < high and r["judge_probability"] >= 0.5)) for r in rows]
    return verdicts, sum(low <= r["verifier_logit"] < high for r in rows) / len(rows)


def best_attribution_band(rows: Sequence[dict[str, Any]]) -> tuple[float, float]:
    """The band with the best attribution figure on `rows`, the cheaper (fewer claims asking the judge) on a tie."""

    def merit(band: tuple[float, float]) -> tuple[float, float]:
        verdicts, asked = cascade_attribution(rows, *band)
        return statistics.fmean(source_figures(rows, verdicts).values()), -asked

    return max(BANDS, key=merit)


def attribution_band(train: list[dict[str, Any]]) -> Callable[[dict[str, Any]], int]:
    low, high = best_attribution_band(train)
    return lambda row: cascade_attribution([row], low, high)[0][0]


def out_of_fold_verdicts(rows: Sequence[dict[str, Any]], choose: Callable[[list[dict[str, Any]]], Callable[[dict[str, Any]], int]]) -> Verdicts:
    fold_of = folds_by_group([r["group"] for r in rows], FOLDS)
    verdicts = [0] * len(rows)
    for fold in range(FOLDS):
        rule = choose([r for r, f in zip(rows, fold_of) if f != fold])
        for i, f in enumerate(fold_of):
            if f == fold:
                verdicts[i] = rule(rows[i])
    return verdicts


def attribution_fitted(rows: Sequence[dict[str, Any]]) -> dict[str, list[str]]:
    """The fitted attribution candidates and their features."""
    judge_features = sorted(rows[0]["judge_features"])
    return {"judge rule refitted (its own features)": judge_features, "stacked (judge features + verifier)": [*judge_features, "verifier"],
            "stacked (judge, best_coverage, verifier)": ["judge", "best_coverage", "verifier"]}


def attribution_candidates(rows: Sequence[dict[str, Any]], cut: float) -> dict[str, Verdicts]:
    """Each attribution candidate's verdicts, the fitted ones out of fold."""
    return {
        "judge": [int(r["judge_probability"] >= 0.5) for r in rows],
        "verifier": [int(r["verifier_logit"] >= cut) for r in rows],
        **{name: out_of_fold_verdicts(rows, stacked_attribution(features)) for name, features in attribution_fitted(rows).items()},
        "cascade": out_of_fold_verdicts(rows, attribution_band),
    }


def mean_of_sources(rows: Sequence[dict[str, Any]], verdicts: Verdicts) -> Callable[[Sequence[int]], float]:
    """The attribution figure (mean balanced accuracy over sources) on the rows at the given indices."""
    return lambda chosen: statistics.fmean(source_figures([rows[i] for i in chosen], [verdicts[i] for i in chosen]).values())


def choose_attribution(rows: list[dict[str, Any]], cut: float) -> tuple[dict[str, Any], dict[str, Verdicts]]:
    """Print and return each attribution candidate's figures and the stacked models fitted on all
    rows, with the candidates' verdicts."""
    fitted = attribution_fitted(rows)
    candidates = attribution_candidates(rows, cut)
    print(f"{len(rows)} validation claims, {len({r['source'] for r in rows})} sources, {FOLDS} folds by group")
    report: dict[str, Any] = {"claims": len(rows), "candidates": {}}
    for name, verdicts in candidates.items():
        cells = source_figures(rows, verdicts)
        mean = statistics.fmean(cells.values())
        report["candidates"][name] = {"figure": round(mean, 4), **{k: round(v, 4) for k, v in cells.items()}}
        print(f"{name:45s} {mean:.3f}  " + ", ".join(f"{k} {v:.2f}" for k, v in cells.items()))
    groups = [r["group"] for r in rows]
    versus_judge(report, {name: paired_difference(groups, mean_of_sources(rows, verdicts), mean_of_sources(rows, candidates["judge"])) for name, verdicts in candidates.items()}, "group")
    weights = balancing_weights([r["label"] for r in rows], [r["source"] for r in rows])
    for name, features in fitted.items():
        fit = fit_logistic([attribution_features(r) for r in rows], [r["label"] for r in rows], weights, features)
        report["candidates"][name]["fitted_on_all"] = fit.table()
        print(f"{name} fitted on all rows: {fit.table()}")
    low, high = best_attribution_band(rows)
    share = cascade_attribution(rows, low, high)[1]
    report["cascade_band"] = {"low": low, "high": high, "judge_share": round(share, 4)}
    print(f"cascade band on all rows: verifier logit in [{low:+.2f}, {high:+.2f}) asks the judge; {share:.0%} of claims ask it")
    return report, candidates


def versus_judge(report: dict[str, Any], differences: dict[str, tuple[float, float, float]], by: str) -> None:
    """Print and record each candidate's paired difference from the judge rule on the same rows."""
    print(f"difference from the judge rule, 95% interval by {by} ({BOOTSTRAP_DRAWS} paired draws)")
    for name, (difference, low, high) in differences.items():
        report["candidates"][name]["versus_judge"] = {"difference": round(difference, 4), "low": round(low, 4), "high": round(high, 4)}
        print(f"{name:55s} {difference:+.3f} [{low:+.3f}, {high:+.3f}]")


def ship(task: str, fitted: dict[str, Any], file: Path, catalog: Path = CATALOG_FILE) -> None:
    """Store a stacked model fitted on all rows inside the default judge's table for `task`."""
    weights = {name: fitted["weights"].get(name, 0.0) for name in STACKED_FEATURES[task]}
    store(task, STACKED, {"intercept": fitted["intercept"], "weights": weights}, file, catalog)


def ship_band(band: dict[str, Any], file: Path, catalog: Path = CATALOG_FILE) -> None:
    """Store the statements' cascade band chosen on all rows inside the default judge's attribution table."""
    store("attribution", CASCADE, {"low": band["low"], "high": band["high"]}, file, catalog)


def write_calibration(name: str, fit: Fit, features: Sequence[str], figures: dict[str, Any], path: Path) -> None:
    """A refitted judge-rule relevance table as a localeval calibration file for the default judge
    (what `localeval score --calibration` reads): a candidate for the default is measured by the
    metric itself on the dev rows (the benchmarks' --calibration) before the catalog changes. Every
    one of the judge rule's `features` gets a weight, 0 for those the candidate leaves out."""
    judge = {"backend": "gguf", "model": DEFAULT_MODEL, "sha256": CATALOG[DEFAULT_MODEL].sha256}
    table = Fit(fit.intercept, {feature: fit.weights.get(feature, 0.0) for feature in features})
    document = calibration_document({"relevance": table}, {"relevance": {"candidate": name, "validation, out of fold": figures}}, judge)
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}: {name}, fitted on all rows, as a calibration file for {DEFAULT_MODEL}")


def store(task: str, key: str, entry: dict[str, Any], file: Path, catalog: Path) -> None:
    """Write `entry`, tied to the verifier file's SHA-256, as `key` inside the default judge's
    catalog table for `task`, the table's other keys as they were."""
    if file.resolve() != shipped_path().resolve():
        raise SystemExit(f"--ship: {file} is not the shipped verifier file; what is fitted here reads one file's logits")
    text = catalog.read_text(encoding="utf-8")
    table = next(m for m in tomllib.loads(text)["model"] if m["name"] == DEFAULT_MODEL)["calibration"][task]
    tied = {**entry, "verifier_sha256": hashlib.sha256(file.read_bytes()).hexdigest()}
    catalog.write_text(replace_calibrations(text, DEFAULT_MODEL, {task: {**table, key: tied}}), encoding="utf-8")
    print(f"stored in {catalog}: {DEFAULT_MODEL}'s calibration.{task}.{key}")


def judge_features(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The judge rule's own relevance features, as the decision rows hold them."""
    return sorted(rows[0]["judge_features"][0]) if rows[0]["judge_features"] else []


def every_feature(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The judge rule's features beside the verifier's three: the "every feature" stacked model's inputs."""
    return [*judge_features(rows), "verifier", "verifier_passage", "verifier_vs_best"]


def fitted_relevance(rows: Sequence[dict[str, Any]]) -> dict[str, tuple[list[str], bool, Selector]]:
    """Every fitted relevance candidate: its features, whether each sample weighs the same, and its selection rule."""
    own, every = judge_features(rows), every_feature(rows)
    return {**{name: (features or every, per_sample, select_units) for name, (features, per_sample) in STACKED_CANDIDATES.items()},
            **{name: (NO_JUDGE_FEATURES, per_sample, threshold_only) for name, per_sample in NO_JUDGE_CANDIDATES.items()},
            **{name: ([f for f in own if f not in left_out], per_sample, select_units) for name, (left_out, per_sample) in JUDGE_REFIT_CANDIDATES.items()}}


def relevance_candidates(rows: Sequence[dict[str, Any]], verifier: Verifier) -> dict[str, Selections]:
    """Each relevance candidate's selections, the fitted ones out of fold."""
    calibration = verifier.calibration["relevance"]
    return {
        "judge": [set(r["judge_selected"]) for r in rows],
        "verifier": verifier_selections(rows, calibration.cut, calibration.passage_weight),
        **{name: out_of_fold(rows, stacked_rule(features, per_sample, selector)) for name, (features, per_sample, selector) in fitted_relevance(rows).items()},
        "cascade": out_of_fold(rows, cascade_rule),
    }


def compare(task: str, rows: list[dict[str, Any]], candidates: dict[str, Any], against: Path, against_file: Path, report: dict[str, Any]) -> None:
    """Each candidate's figure against the same candidate on another verifier file's rows of the
    same samples or claims (decision_rows.py --logits-from), with paired_difference's interval."""
    refuse_sealed(against)
    old_rows = [json.loads(line) for line in against.read_text(encoding="utf-8").splitlines() if line.strip()]
    if [r["key"] for r in old_rows] != [r["key"] for r in rows]:
        raise SystemExit(f"{against}: not the same rows in the same order as --rows: compare files made with decision_rows.py --logits-from")
    old_verifier = Verifier(str(against_file), against_file.read_bytes())
    if task == "attribution":
        old: dict[str, Any] = attribution_candidates(old_rows, old_verifier.calibration["attribution"].cut)
    else:
        old = relevance_candidates(old_rows, old_verifier)
    groups = [r["group"] for r in rows]
    print(f"against {against} ({against_file.name}): difference, 95% interval by {'group' if task == 'attribution' else 'question'} ({BOOTSTRAP_DRAWS} paired draws)")
    report["against"] = {"rows": str(against), "file": str(against_file), "differences": {}}
    for name, decided in candidates.items():
        if task == "attribution":
            difference, low, high = paired_difference(groups, mean_of_sources(rows, decided), mean_of_sources(old_rows, old[name]))
        else:
            difference, low, high = paired_difference(groups, mean_of_shapes(sample_values(rows, decided)), mean_of_shapes(sample_values(old_rows, old[name])))
        report["against"]["differences"][name] = {"difference": round(difference, 4), "low": round(low, 4), "high": round(high, 4)}
        print(f"{name:55s} {difference:+.3f} [{low:+.3f}, {high:+.3f}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=("relevance", "attribution"), default="relevance")
    parser.add_argument("--rows", type=Path, help="decision_rows.py's file (default: training/.cache/decision/<task>_rows.jsonl)")
    parser.add_argument("--file", type=Path, required=True, help="the verifier file decision_rows.py read (its tuned rules)")
    parser.add_argument("--json", type=Path, help="also write the figures and the rules fitted on all rows here")
    parser.add_argument("--against", type=Path, help="another file's decision rows of the same samples or claims: each candidate's difference with a paired bootstrap interval")
    parser.add_argument("--against-file", type=Path, default=shipped_path(), help="the verifier file --against's rows were made with (default: the shipped one)")
    parser.add_argument("--write-calibration", nargs=2, metavar=("NAME", "FILE"), help="relevance: write this refitted judge-rule candidate, fitted on all rows, as a calibration file (for the benchmarks' --calibration)")
    parser.add_argument("--ship", metavar="NAME", help="store this stacked candidate, fitted on all rows, in the default judge's catalog table (attribution: or 'cascade', the band)")
    args = parser.parse_args()
    args.rows = args.rows or CACHE / "decision" / f"{args.task}_rows.jsonl"
    refuse_sealed(args.rows)
    rows = [json.loads(line) for line in args.rows.read_text(encoding="utf-8").splitlines() if line.strip()]
    shippable = [*STACKED_CANDIDATES] if args.task == "relevance" else [*attribution_fitted(rows), "cascade"]
    if args.ship and args.ship not in shippable:
        parser.error(f"--ship {args.ship!r}: for --task {args.task} one of {', '.join(repr(n) for n in shippable)}")
    if args.write_calibration and (args.task != "relevance" or args.write_calibration[0] not in JUDGE_REFIT_CANDIDATES):
        parser.error(f"--write-calibration: --task relevance and one of {', '.join(repr(n) for n in JUDGE_REFIT_CANDIDATES)}")
    verifier = Verifier(str(args.file), args.file.read_bytes())
    if args.task == "attribution":
        report, verdicts = choose_attribution(rows, verifier.calibration["attribution"].cut)
        if args.against:
            compare("attribution", rows, verdicts, args.against, args.against_file, report)
        if args.json:
            args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        if args.ship == "cascade":
            ship_band(report["cascade_band"], args.file)
        elif args.ship:
            ship("attribution", report["candidates"][args.ship]["fitted_on_all"], args.file)
        return
    candidates = relevance_candidates(rows, verifier)
    print(f"{len(rows)} validation samples, {len({r['group'] for r in rows})} questions, {FOLDS} folds by question")
    report = {"samples": len(rows), "questions": len({r["group"] for r in rows}), "candidates": {}}
    judge_cells = shape_figures(rows, candidates["judge"])
    for name, selections in candidates.items():
        cells = shape_figures(rows, selections)
        mean, even = statistics.fmean(cells.values()), no_worse(cells, judge_cells)
        report["candidates"][name] = {"figure": round(mean, 4), "no_worse_than_judge_on_every_shape": even, **{k: round(v, 4) for k, v in cells.items()}}
        print(f"{name:55s} {mean:.3f} {'=' if even else ' '} " + ", ".join(f"{k} {v:.3f}" for k, v in cells.items()))
    print("= : at least the judge rule's figure on every shape")
    groups, judge_values = [r["group"] for r in rows], mean_of_shapes(sample_values(rows, candidates["judge"]))
    versus_judge(report, {name: paired_difference(groups, mean_of_shapes(sample_values(rows, selections)), judge_values) for name, selections in candidates.items()}, "question")
    if args.against:
        compare("relevance", rows, candidates, args.against, args.against_file, report)
    for name, (features, per_sample, selector) in fitted_relevance(rows).items():
        fit = fit_stacked(rows, features, per_sample, selector)
        report["candidates"][name]["fitted_on_all"] = fit.table()
        print(f"{name} fitted on all rows: {fit.table()}")
        if args.write_calibration and name == args.write_calibration[0]:
            figures = {k: v for k, v in report["candidates"][name].items() if k != "fitted_on_all"}
            write_calibration(name, fit, judge_features(rows), figures, Path(args.write_calibration[1]))
    low, high = best_band(rows)
    share = cascade_selections(rows, low, high)[1]
    report["cascade_band"] = {"low": low, "high": high, "judge_share": round(share, 4)}
    print(f"cascade band on all rows: verifier logit in [{low:+.2f}, {high:+.2f}) asks the judge; {share:.0%} of samples ask it")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    if args.ship:
        ship("relevance", report["candidates"][args.ship]["fitted_on_all"], args.file)


if __name__ == "__main__":
    main()
