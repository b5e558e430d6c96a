"""The judge metrics with the trained verifier (`--verifier`), scored on labelled rows it was never trained on.

No fitting, no cross-validation: every figure is the metric's own decision with its shipped
options, under the grader named (`--grader judge` scores the judge rule and `--grader stacked`
both through the cached judge, for the same rows). Rows (benchmarks/DATA_SOURCES.md, training/DATA.md):

- relevance: shared/data/relevance_dev.jsonl (HotpotQA; training takes neither these questions
  nor the reserved ones since 2026-11-26: before, 286 of the 300 were training rows of every
  verifier, docs/measured.md) in the shapes of accuracy.py (10, 3 and 1
  paragraphs; without the gold paragraphs); SQuAD 2.0's dev half (1 and 3 paragraphs;
  a question the paragraph cannot answer);
- statements: shared/data/attribution_dev.jsonl (SciFact, WiCE) with each question form (none,
  a real question about the page, one that restates the claim), shared/data/recall_dev.jsonl
  (QAGS), VitaminC's dev half of cases, FEVER-symmetric test;
- the hand-written plain and unanswerable cases (`--plain-cases`: another file of plain cases,
  as benchmarks/data/plain_cases_sealed.jsonl, written blind on 2026-11-27 and scored once);
- `--task sealed` (only when named): the sealed test split's whole relevance samples
  (training/prepare_split_data.py: HotpotQA test questions in the shapes above, plain one-context
  windows of SelQA and SQuAD test questions), the final evaluation of the relevance decision.
  Run it after a decision is chosen, never to choose one. `--task sealed-news`: the sealed news
  summaries as whole samples, each called factual when every statement is attributed.
  `--task sealed-claims`: the sealed claims against whole documents (Check-COVID,
  Citation-Integrity, Factcheck-GPT, SummEdits), `--limit` per source, the seeded sample
  verifier_sealed.py --claims takes, each decided by context_recall's verdict on the document.
  `--task validation-claims`: the same for the validation split's claims against documents
  (training/.cache/split/validation_claim_samples.jsonl: rows a statement table may be fitted on).

    python benchmarks/verifier_accuracy.py [--task relevance,squad,...] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from labelled_rows import PLAIN, UNANSWERABLE, answer_sentence, question_shapes, read, read_external, read_squad, same_sentence, sentences
from verifier_sealed import seeded_per_source

from localeval.calibration.fitting import auc, balanced_accuracy, selection_f1
from localeval.data.samples import Sample
from localeval.metrics import create_metric

TASKS = ("relevance", "squad", "attribution", "recall", "vitaminc", "fever", "plain", "unanswerable")
SEALED_SAMPLES = Path(__file__).resolve().parents[1] / "training" / ".cache" / "sealed" / "test_relevance_samples.jsonl"
SEALED_NEWS = SEALED_SAMPLES.with_name("test_news_samples.jsonl")
SEALED_CLAIMS = SEALED_SAMPLES.with_name("test_claim_samples.jsonl")
VALIDATION_CLAIMS = SEALED_SAMPLES.parents[1] / "split" / "validation_claim_samples.jsonl"
NEWS_SEED = 20261126  # verifier_sealed.py's SEED: the same summaries for both


class Scorer:
    """The two judge metrics with the grader named, and the judge they need then."""

    def __init__(self, grader: str, model: str | None, calibration: Path | None = None) -> None:
        options: dict[str, Any] = {"grader": grader}
        self.relevance = create_metric("context_relevance", options)
        self.recall = create_metric("context_recall", options)
        self.judge = None
        self.seconds: dict[str, list[float]] = {}
        self.judge_seconds: dict[str, list[float]] = {}
        if self.relevance.uses_judge() or self.recall.uses_judge():
            from judge_cache import CACHE, CachedJudge, with_calibration_file

            from localeval.judge import load_judge
            from localeval.models.store import CATALOG, DEFAULT_MODEL, resolve_model

            path, name = resolve_model(model or DEFAULT_MODEL)
            tables = with_calibration_file(CATALOG[name].calibration if name else {}, calibration)
            self.judge = CachedJudge(CACHE / path.name / "answers.jsonl", lambda: load_judge(str(path), cache=False), tables)

    def _timed(self, cost: str | None, started: float, judged: float) -> None:
        """Seconds per sample, and the judge's share of them (cached answers count as they first cost)."""
        if cost:
            self.seconds.setdefault(cost, []).append(time.perf_counter() - started)
            self.judge_seconds.setdefault(cost, []).append((self.judge.seconds if self.judge is not None else 0.0) - judged)

    def select(self, question: str, contexts: list[str], cost: str | None = None) -> dict[str, Any]:
        started, judged = time.perf_counter(), self.judge.seconds if self.judge is not None else 0.0
        details = self.relevance.score_batch([Sample(user_input=question, retrieved_contexts=contexts)], self.judge)[0].details
        self._timed(cost, started, judged)
        return details

    def verdicts(self, sample: Sample, statements: Sequence[str], cost: str | None = None) -> list[dict[str, Any]]:
        started, judged = time.perf_counter(), self.judge.seconds if self.judge is not None else 0.0
        verdicts = self.recall.score_statements(sample, statements, self.judge).details["statements"]
        self._timed(cost, started, judged)
        return verdicts


def _shape_figures(picked: Sequence[tuple[set[int], set[int]]], answerable: bool) -> dict[str, float]:
    insufficient = statistics.fmean(not s for s, _ in picked)
    if not answerable:
        return {"n": len(picked), "insufficient": insufficient}
    scores = [selection_f1(s, g) for s, g in picked]
    return {"n": len(picked), "precision": statistics.fmean(p for p, _, _ in scores), "recall": statistics.fmean(r for _, r, _ in scores),
            "f1": statistics.fmean(f for _, _, f in scores), "insufficient": insufficient}


def relevance(scorer: Scorer, limit: int | None, shift: int) -> dict[str, Any]:
    by_shape: dict[str, list[tuple[set[int], set[int]]]] = {}
    for row in read("relevance_dev.jsonl", limit, shift):
        for shape, variants in question_shapes(row).items():
            for contexts in (c for c in variants if c):
                units = sentences({"retrieved_contexts": contexts})
                gold = set() if "without" in shape else {i for i, text in enumerate(units) if any(same_sentence(text, g) for g in row["gold_sentences"])}
                selected = set(scorer.select(row["user_input"], contexts, cost="hotpotqa 10" if shape == "10" else None)["selected"])
                by_shape.setdefault(f"hotpotqa {shape}", []).append((selected, gold))
    return {shape: _shape_figures(picked, "without" not in shape) for shape, picked in by_shape.items()}


def squad(scorer: Scorer, limit: int | None) -> dict[str, Any]:
    by_shape: dict[str, list[tuple[set[int], set[int]]]] = {}
    for row in read_squad(limit, dev_half=True):
        answer = answer_sentence(row["context"], row["answer_start"])
        before = len(sentences({"retrieved_contexts": row["others"][:1]}))
        shapes = [("squad 1", row["question"], [row["context"]], {answer}), ("squad 3", row["question"], [row["others"][0], row["context"], row["others"][1]], {before + answer})]
        if row["impossible"]:
            shapes.append(("squad 1 without answer", row["impossible"], [row["context"]], set()))
        for shape, question, contexts, gold in shapes:
            by_shape.setdefault(shape, []).append((set(scorer.select(question, contexts, cost="squad 1" if shape == "squad 1" else None)["selected"]), gold))
    return {shape: _shape_figures(picked, "without" not in shape) for shape, picked in by_shape.items()}


def sealed(scorer: Scorer, limit: int | None, path: Path = SEALED_SAMPLES) -> dict[str, Any]:
    """The sealed split's whole relevance samples, per source and shape (`limit`: samples per
    source and shape, the first ones in the file's order)."""
    if not path.is_file():
        raise SystemExit(f"{path}: no sealed relevance samples; run training/prepare_split_data.py (training/DATA.md)")
    by_shape: dict[str, list[tuple[set[int], set[int]]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        sample = json.loads(line)
        shape = f"{sample['source']} {sample['shape']}"
        if limit is not None and len(by_shape.get(shape, [])) >= limit:
            continue
        cost = shape if shape in ("hotpotqa 10", "selqa plain", "squad plain") else None
        selected = set(scorer.select(sample["question"], sample["contexts"], cost=cost)["selected"])
        by_shape.setdefault(shape, []).append((selected, set(sample["required"])))
    return {shape: _shape_figures(picked, "without" not in shape) for shape, picked in sorted(by_shape.items())}


def document_claims(scorer: Scorer, limit: int | None, path: Path) -> dict[str, Any]:
    """Claims against whole documents (the sealed split's, or the validation split's a statement
    table may be fitted on), per source: the metric's verdict on each claim against its document
    (balanced accuracy, AUC of P(attributed), the share attributed beside the people's), and the
    mean balanced accuracy over sources; `limit`: claims per source, the seeded sample
    verifier_sealed.py --claims scores for the verifier alone."""
    if not path.is_file():
        raise SystemExit(f"{path}: no claims against documents; run training/prepare_split_data.py (training/DATA.md)")
    claims = seeded_per_source([json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()], limit or 0)
    by_source: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for claim in claims:
        verdict = scorer.verdicts(Sample(user_input="", retrieved_contexts=claim["contexts"]), [claim["statement"]], cost="claim against a document")[0]
        by_source.setdefault(claim["source"], []).append((int(claim["label"]), verdict))
        ROWS.append({"label": int(claim["label"]), "source": claim["source"], "probability": verdict["probability"], **verdict.get("features", {})})
    out: dict[str, Any] = {source: _verdict_figures([y for y, _ in found], [v for _, v in found]) for source, found in sorted(by_source.items())}
    accuracies = [figures["balanced_accuracy"] for figures in out.values() if not math.isnan(figures["balanced_accuracy"])]
    out["mean balanced accuracy over sources"] = statistics.fmean(accuracies) if accuracies else float("nan")
    return out


def _verdict_figures(labels: Sequence[int], verdicts: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Balanced accuracy and AUC of the verdicts, and the metric's mean verdict beside the people's
    (attributed / supported: the issue's "within 0.10")."""
    predicted = [int(v["attributed"]) for v in verdicts]
    return {"n": len(labels), "balanced_accuracy": balanced_accuracy(list(labels), predicted), "auc": auc(list(labels), [float(v["probability"]) for v in verdicts]),
            "attributed": statistics.fmean(predicted), "supported": statistics.fmean(labels)}


def sealed_news(scorer: Scorer, limit: int | None, path: Path = SEALED_NEWS) -> dict[str, Any]:
    """The sealed split's news summaries as whole samples (FRANK, XSumFaith, SummaC): a summary is
    called factual when every statement is attributed, against its human label (balanced
    accuracy), as verifier_sealed.py scores them for the verifier alone; `limit`: its seeded sample."""
    if not path.is_file():
        raise SystemExit(f"{path}: no sealed news samples; run training/prepare_split_data.py (training/DATA.md)")
    samples = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if limit is not None and limit < len(samples):  # the seeded sample verifier_sealed.py --news takes
        samples = [samples[i] for i in sorted(random.Random(NEWS_SEED).sample(range(len(samples)), limit))]
    labels, predicted = [], []
    for sample in samples:
        verdicts = scorer.verdicts(Sample(user_input=sample["user_input"], retrieved_contexts=sample["retrieved_contexts"]), sample["statements"], cost="news summary")
        labels.append(int(sample["summary_label"]))
        predicted.append(int(all(v["attributed"] for v in verdicts)))
    return {"summaries": {"n": len(labels), "factual": sum(labels), "called factual": sum(predicted), "balanced_accuracy": balanced_accuracy(labels, predicted)}}


ROWS: list[dict[str, Any]] = []  # every statement's label and verdict features (--dump-rows)


def _figures(labels: Sequence[int], verdicts: Sequence[Mapping[str, Any]], sources: Sequence[str]) -> dict[str, Any]:
    ROWS.extend({"label": y, "source": s, "probability": v["probability"], **v.get("features", {})} for y, v, s in zip(labels, verdicts, sources))
    predicted = [int(v["attributed"]) for v in verdicts]
    out: dict[str, Any] = _verdict_figures(labels, verdicts)
    for source in sorted(set(sources)):
        picked = [(y, p) for y, p, s in zip(labels, predicted, sources) if s == source]
        out[source] = balanced_accuracy([y for y, _ in picked], [p for _, p in picked])
    return out


QUESTION_FORMS = ("no question", "a real question", "a restating question")


def statements(scorer: Scorer, task: str, limit: int | None, shift: int, question_forms: Sequence[str] = QUESTION_FORMS) -> dict[str, Any]:
    if task == "attribution":
        rows = read("attribution_dev.jsonl", limit, shift)
        out = {}
        forms = {
            "no question": lambda r: "",
            "a real question": lambda r: f"Tell me about {r['wiki_title']}." if r.get("wiki_title") else "What does the abstract report?",
            "a restating question": lambda r: f"Is it true that {r['claim'].rstrip('.')}?",
        }
        for form, question in ((f, q) for f, q in forms.items() if f in question_forms):
            verdicts = [scorer.verdicts(Sample(user_input=question(r), retrieved_contexts=[r["context"]]), [r["claim"]], cost=f"claims ({form})")[0] for r in rows]
            out[form] = _figures([r["label"] for r in rows], verdicts, [r["source"] for r in rows])
        return out
    if task == "recall":
        labels, verdicts, sources = [], [], []
        for r in read("recall_dev.jsonl", limit, shift):
            verdicts += scorer.verdicts(Sample(user_input=r["user_input"], retrieved_contexts=r["retrieved_contexts"]), r["statements"], cost="qags summary")
            labels += r["statement_labels"]
            sources += [r["source"]] * len(r["statements"])
        return {"qags": _figures(labels, verdicts, sources)}
    rows = read_external(task, limit, dev_half=True)
    verdicts = [scorer.verdicts(Sample(user_input="", retrieved_contexts=[r["context"]]), [r["claim"]])[0] for r in rows]
    return {task: _figures([r["label"] for r in rows], verdicts, [r["source"] for r in rows])}


def plain(scorer: Scorer, cases: Path = PLAIN) -> dict[str, Any]:
    """The hand-written cases of `cases` (benchmarks/data/plain_cases.jsonl unless another file of
    the same form is named, as the sealed plain_cases_sealed.jsonl), each right or wrong."""
    right: dict[str, list[str]] = {"relevance": [], "attribution": []}
    wrong: list[str] = []
    for row in (json.loads(line) for line in cases.read_text(encoding="utf-8").splitlines() if line.strip()):
        sample = Sample(user_input=row["user_input"], retrieved_contexts=row["retrieved_contexts"])
        if row["kind"] == "relevance":
            details = scorer.select(row["user_input"], row["retrieved_contexts"])
            ok = set(details["selected_sentences"]) == set(row["required"])
            said = f"selected {details['selected_sentences']} (P {details['probabilities']})"
        else:
            verdict = scorer.verdicts(sample, [row["statement"]])[0]
            ok = verdict["attributed"] == row["label"]
            said = f"attributed={verdict['attributed']} P={verdict['probability']}"
        right[row["kind"]].append(row["id"]) if ok else wrong.append(f"{row['id']}: {said}")
    return {"right": {k: len(v) for k, v in right.items()}, "wrong": wrong}


def unanswerable(scorer: Scorer) -> dict[str, Any]:
    rows = [json.loads(line) for line in UNANSWERABLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    alone = [not scorer.select(r["user_input"], r["retrieved_contexts"])["selected"] for r in rows]
    twins = [scorer.select(r["user_input"], [*r["retrieved_contexts"], r["answer"]]) for r in rows]
    return {"n": len(rows), "insufficient": statistics.fmean(alone), "with the answer added: answer selected": statistics.fmean(r["answer"] in t["selected_sentences"] for r, t in zip(rows, twins))}


def fmt(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def use_verifier_file(path: Path) -> None:
    """Make the metrics read another verifier file: a candidate is measured exactly as the shipped
    one is, by the metric code, without being installed (load_verifier checks the shipped SHA-256)."""
    from localeval.graders import verifier as grader
    from localeval.verifier import Verifier

    candidate = Verifier(str(path), path.read_bytes())
    remember_pairs(candidate)
    grader.load_verifier = lambda: candidate  # type: ignore[attr-defined]
    # The grader is where the metrics load the verifier; a refactor that moves it must fail here, not measure the shipped file.
    if grader.VerifierGrader.recorded()["verifier_file"] != candidate.describe():
        raise SystemExit(f"{path}: the metrics did not pick up this verifier file")


def remember_pairs(verifier: Any) -> None:
    """Score each (task, pair) once per run: the HotpotQA shapes read the same paragraphs again
    (10, 3 and 1 of them), and a unit's logit depends only on its question, its text and its own
    paragraph, so the figures are the metric's own at well under half the cost."""
    scored: dict[tuple[str, tuple[str, str, str]], float] = {}
    compute = verifier.logits

    def logits(task: str, pairs: Sequence[tuple[str, str, str]], encode: Callable[[str], list[int]] | None = None) -> list[float]:
        new = list(dict.fromkeys(p for p in pairs if (task, p) not in scored))
        for pair, value in zip(new, compute(task, new, encode) if new else []):
            scored[(task, pair)] = value
        return [scored[(task, p)] for p in pairs]

    verifier.logits = logits


def main(argv: Iterable[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default=",".join(TASKS), help=f"comma-separated, of {', '.join(TASKS)}, and sealed, sealed-news, sealed-claims, validation-claims (only when named)")
    parser.add_argument("--limit", type=int, help="rows per task, evenly spaced (default: all)")
    parser.add_argument("--shift", type=int, default=0, help="with --limit: the rows this many rows after the usual ones (--shift 1: the dev half, which choices have read; not unseen rows)")
    parser.add_argument("--grader", choices=("verifier", "judge", "stacked"), default="verifier", help="what decides (judge and stacked need the judge; its answers are cached)")
    parser.add_argument("--no-verifier", action="store_true", help="the same as --grader judge")
    parser.add_argument("--forms", default=",".join(QUESTION_FORMS), help=f"the claims' question forms to score, of: {', '.join(QUESTION_FORMS)}")
    parser.add_argument("--model", help="the judge for --no-verifier (default: the catalog's default)")
    parser.add_argument("--calibration", type=Path, help="with the judge: a calibration file whose tables replace the catalog's (a candidate from choose_decision.py --write-calibration)")
    parser.add_argument("--plain-cases", type=Path, default=PLAIN, help="the hand-written cases for --task plain (default: benchmarks/data/plain_cases.jsonl; benchmarks/data/plain_cases_sealed.jsonl was written blind and scored once)")
    parser.add_argument("--json", type=Path, help="also write the report here")
    parser.add_argument("--dump-rows", type=Path, help="write every statement's label and verdict features here (JSON Lines)")
    parser.add_argument("--verifier-file", type=Path, help="score with this verifier file instead of the shipped one (a retrain, before it ships)")
    args = parser.parse_args(argv)
    grader = "judge" if args.no_verifier else args.grader
    if args.verifier_file:
        use_verifier_file(args.verifier_file)
    elif grader != "judge":
        from localeval.verifier import load_verifier

        remember_pairs(load_verifier())
    scorer = Scorer(grader, args.model, args.calibration)
    tasks = args.task.split(",")
    report: dict[str, Any] = {"design": {"judge": "judge rule", "verifier": "verifier", "stacked": "stacked (judge rule and verifier)"}[grader], "limit": args.limit, "shift": args.shift}
    if "relevance" in tasks:
        report["relevance"] = relevance(scorer, args.limit, args.shift)
    if "squad" in tasks:
        report["squad"] = squad(scorer, args.limit)
    for task in ("attribution", "recall", "vitaminc", "fever"):
        if task in tasks:
            report[task] = statements(scorer, task, args.limit, args.shift, args.forms.split(","))
    if "plain" in tasks:
        report["plain"] = plain(scorer, args.plain_cases)
    if "sealed" in tasks:
        report["sealed"] = sealed(scorer, args.limit)
    if "sealed-news" in tasks:
        report["sealed news"] = sealed_news(scorer, args.limit)
    if "sealed-claims" in tasks:
        report["sealed claims"] = document_claims(scorer, args.limit, SEALED_CLAIMS)
    if "validation-claims" in tasks:
        report["validation claims"] = document_claims(scorer, args.limit, VALIDATION_CLAIMS)
    if "unanswerable" in tasks:
        report["unanswerable"] = unanswerable(scorer)
    report["seconds per sample"] = {k: statistics.fmean(v) for k, v in scorer.seconds.items()}
    report["judge seconds per sample"] = {k: statistics.fmean(v) for k, v in scorer.judge_seconds.items()}
    if scorer.judge is not None:
        scorer.judge.close()
    for section, content in report.items():
        if isinstance(content, dict):
            print(f"{section}:")
            for key, value in content.items():
                cells = ", ".join(f"{k} {fmt(v)}" for k, v in value.items()) if isinstance(value, dict) else fmt(value) if not isinstance(value, list) else "; ".join(value)
                print(f"  {key}: {cells}")
        else:
            print(f"{section}: {content}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    if args.dump_rows:
        args.dump_rows.write_text("".join(json.dumps(row) + "\n" for row in ROWS))


if __name__ == "__main__":
    main()
