"""Does a probe on the judge's own hidden states select sentences better? (issue 19, item 4)

The relevance prompt puts the question before the passage, so the judge's hidden state at
the end of each sentence of the passage has read the question and that sentence: a linear
probe on it could say which sentence answers, from the same forward pass that gives the
passage verdict (no extra prompt tokens). This script measures it on the relevance dev
shapes of benchmarks/accuracy.py:

1. collect: runs the relevance and squad rows as accuracy.py does (same metric, same
   cached verdicts), and for every passage the judge reads, evaluates its verdict prompt
   once more with llama.cpp's embeddings on, cut at each sentence end, keeping the final
   (normed) hidden state at each sentence end and at the verdict position; cached per
   prompt in benchmarks/.cache/states/<model>/.
2. report: a ridge-logistic probe (principal components of the states, fitted in-fold) gives
   each sentence of a read passage an out-of-fold log-odds of being required; the shipped
   features plus that "probe" feature are then fitted and cross-validated per shape exactly
   as accuracy.py's combination, side by side with the shipped features alone.

    python lab/probe_states.py --limit relevance=30,squad=40 --components 16,32 --l2 1,10,100

`statements` does the same for context_recall's statement verdicts: the state at the verdict
position of each statement's deciding prompt (its prompt loaded as in a normal run, prefix
reused), a probe on it, and the shipped combination (judge, best_coverage) with and without
it, fitted and cross-validated on the given statement sets at once:

    python lab/probe_states.py statements --limit recall=40,fever=120,vitaminc=120

Measured 2026-11-23 (docs/HISTORY.md): the probes raise HotpotQA F1 but lower
"insufficient information" where nothing answers, or SQuAD F1; over the eight shapes no
variant is clearly ahead of the shipped rule, so nothing here is shipped. Collecting the
states costs about 25 s per HotpotQA question or SQuAD paragraph on 2 cores.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # the benchmarks' libraries: no package holds them
import accuracy  # noqa: E402
from judge_cache import CACHE, CachedJudge  # noqa: E402
from labelled_rows import parse_limits  # noqa: E402

from localeval.calibration.fitting import FOLDS, folds_by_group  # noqa: E402
from localeval.data.text import split_sentences  # noqa: E402
from localeval.judge import Message, load_judge  # noqa: E402
from localeval.judge.prompts import ATTRIBUTION_SYSTEM, RELEVANCE_SYSTEM, relevance_messages  # noqa: E402
from localeval.models.store import DEFAULT_MODEL, resolve_model  # noqa: E402

STATES = Path(__file__).resolve().parent / ".cache" / "states"


def _key(messages: list[Message]) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:32]


def sentence_states(judge: Any, messages: list[Message], sentences: Sequence[str]) -> np.ndarray:
    """The normed final hidden state after each sentence of the paragraph, and at the verdict
    position (last row): the prompt evaluated with embeddings on, cut at each sentence end."""
    from llama_cpp import llama_cpp as low

    runtime = judge._runtime
    llm = runtime._llm
    prompt = judge._render(messages, True)
    tokens = judge._tokenize(prompt, messages)
    ends, cursor = [], 0
    for token in tokens:
        cursor += len(runtime.token_text(token))
        ends.append(cursor)
    encoded = prompt.encode("utf-8")
    paragraph = " ".join(sentences)
    start = len(prompt[: prompt.find("Paragraph: " + paragraph) + len("Paragraph: ")].encode("utf-8"))
    assert encoded[start:].startswith(paragraph.encode("utf-8")), "paragraph not found in the prompt"
    cuts, offset = [], start
    for sentence in sentences:
        offset += len(sentence.encode("utf-8"))
        cuts.append(next(i for i, e in enumerate(ends) if e >= offset) + 1)
        offset += 1  # the joining space
    cuts.append(len(tokens))
    runtime.keep(0)
    low.llama_set_embeddings(llm._ctx.ctx, True)
    rows, begin = [], 0
    try:
        for cut in cuts:
            if cut > begin:
                runtime.evaluate(tokens[begin:cut])
                begin = cut
            pointer = low.llama_get_embeddings_ith(llm._ctx.ctx, -1)
            rows.append(np.ctypeslib.as_array(pointer, shape=(llm.n_embd(),)).astype(np.float32).copy())
    finally:
        low.llama_set_embeddings(llm._ctx.ctx, False)
        runtime.keep(0)
    return np.stack(rows)


class StateJudge(CachedJudge):
    """The cached judge, also recording hidden states for every relevance verdict prompt."""

    def __init__(self, *args: Any, states: Path, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.states = states
        states.mkdir(parents=True, exist_ok=True)

    def choose(self, messages: list[Message], prefix: str, options: Sequence[str]) -> tuple[list[float], Any]:
        if messages[0]["content"] == RELEVANCE_SYSTEM and "\n\nParagraph: " in messages[1]["content"]:
            path = self.states / f"{_key(messages)}.npy"
            if not path.exists():
                user = messages[1]["content"]
                paragraph = user[user.index("\n\nParagraph: ") + len("\n\nParagraph: ") : user.rindex("\n\nDoes the paragraph")]
                np.save(path, sentence_states(self._inner(), messages, split_sentences(paragraph)).astype(np.float16))
        return super().choose(messages, prefix, options)


def _recording(record_contexts: list[dict[str, Any]]) -> Any:
    original = accuracy.relevance_record

    def record(metric: Any, judge: Any, question: str, contexts: list[str], gold: list[int], **kwargs: Any) -> dict[str, Any]:
        out = original(metric, judge, question, contexts, gold, **kwargs)
        out["question"], out["contexts"] = question, contexts
        record_contexts.append(out)
        return out

    return record


def unit_states(states: Path, record: Mapping[str, Any], passage_level: bool = False) -> list[np.ndarray | None]:
    """Each unit's state at its sentence end (with `passage_level`, its passage's state at the
    verdict position), None where the judge did not read its passage."""
    out: list[np.ndarray | None] = []
    for context in record["contexts"]:
        sentences = split_sentences(context)
        path = states / f"{_key(relevance_messages(' '.join(sentences), record['question']))}.npy"
        rows = np.load(path).astype(np.float32) if path.exists() else None
        out += [None if rows is None else rows[-1] if passage_level else rows[i] for i in range(len(sentences))]
    return out


def _owner(record: Mapping[str, Any], unit: int) -> int:
    if "_owners" not in record:
        record["_owners"] = [p for p, context in enumerate(record["contexts"]) for _ in split_sentences(context)]
    return int(record["_owners"][unit])


def _gold_passages(record: Mapping[str, Any]) -> list[bool]:
    """Whether each unit's passage holds a gold unit."""
    owners = [p for p, context in enumerate(record["contexts"]) for _ in split_sentences(context)]
    gold = {owners[i] for i in record["gold"]}
    return [p in gold for p in owners]


def fit_probe(x: np.ndarray, y: np.ndarray, w: np.ndarray, components: int, l2: float) -> Any:
    """Principal components of the standardised states, then an L2 logistic fit (Newton)."""
    mean, scale = x.mean(0), x.std(0) + 1e-6
    z = (x - mean) / scale
    _, _, vt = np.linalg.svd(z - z.mean(0), full_matrices=False)
    basis = vt[:components].T
    p = z @ basis
    design = np.hstack([np.ones((len(p), 1)), p])
    beta = np.zeros(design.shape[1])
    penalty = np.full(design.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(50):
        q = 1 / (1 + np.exp(-(design @ beta)))
        gradient = design.T @ (w * (q - y)) + penalty * beta
        hessian = (design * (w * q * (1 - q))[:, None]).T @ design + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break

    def logits(xs: np.ndarray) -> np.ndarray:
        return np.hstack([np.ones((len(xs), 1)), ((xs - mean) / scale) @ basis]) @ beta

    return logits


def add_probe(records: list[dict[str, Any]], states: Path, components: int, l2: float, passage_level: bool = False) -> None:
    """Every unit gets feature "probe": the out-of-fold probe log-odds (folds by question, as the
    combination's), or the median over read units where its passage was not read."""
    per_record = [unit_states(states, r, passage_level) for r in records]
    name = "probe_passage" if passage_level else "probe"
    assignment = folds_by_group([r["group"] for r in records], FOLDS)
    weights_by_source = dict(zip((r["source"] for r in records), accuracy.source_weights(records)))
    values: list[list[float | None]] = [[None] * len(s) for s in per_record]
    for fold in range(FOLDS):
        xs, ys, ws = [], [], []
        for r, s, f in zip(records, per_record, assignment):
            if f == fold:
                continue
            labels = _gold_passages(r) if passage_level else [i in r["gold"] for i in range(len(s))]
            firsts = {0, *(i for i in range(1, len(s)) if _owner(r, i) != _owner(r, i - 1))} if passage_level else range(len(s))
            for i, state in enumerate(s):
                if state is not None and i in firsts:
                    xs.append(state)
                    ys.append(1.0 if labels[i] else 0.0)
                    ws.append(weights_by_source[r["source"]])
        if not xs:
            continue
        y = np.array(ys)
        w = np.array(ws) * np.where(y > 0, 0.5 / max(y.mean(), 1e-9), 0.5 / max(1 - y.mean(), 1e-9))
        probe = fit_probe(np.stack(xs), y, w / w.mean(), components, l2)
        for index, (s, f) in enumerate(zip(per_record, assignment)):
            if f == fold:
                read = [i for i, state in enumerate(s) if state is not None]
                if read:
                    scores = probe(np.stack([s[i] for i in read]))
                    for i, v in zip(read, scores):
                        values[index][i] = float(v)
    known = [v for vs in values for v in vs if v is not None]
    fallback = statistics.median(known) if known else 0.0
    for r, vs in zip(records, values):
        for features, v in zip(r["features"], vs):
            features[name] = v if v is not None else fallback


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=parse_limits, default={"relevance": 30, "squad": 40})
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--components", default="16,32,64")
    parser.add_argument("--l2", default="1", help="comma-separated L2 penalties of the probe")
    args = parser.parse_args()
    path, catalog_name = resolve_model(args.model)
    states = STATES / path.name
    shipped = accuracy.CATALOG[catalog_name].calibration if catalog_name else {}
    judge = StateJudge(CACHE / path.name / "answers.jsonl", lambda: load_judge(str(path)), shipped, states=states)
    records: list[dict[str, Any]] = []
    accuracy.relevance_record = _recording(records)
    accuracy.relevance_rows(judge, args.limit.get("relevance"), 0)
    accuracy.squad_rows(judge, args.limit.get("squad"), 0)
    judge.close()
    base = accuracy.RELEVANCE_FEATURES
    figures = {"shipped features": accuracy.shape_figures(records, accuracy.relevance_cv(records, base))}
    for components in (int(c) for c in args.components.split(",")):
        for l2 in (float(v) for v in args.l2.split(",")):
            add_probe(records, states, components, l2)
            name = f"probe {components} l2 {l2:g}"
            figures[f"features + {name}"] = accuracy.shape_figures(records, accuracy.relevance_cv(records, [*base, "probe"]))
            add_probe(records, states, components, l2, passage_level=True)
            figures[f"features + {name} + passage"] = accuracy.shape_figures(records, accuracy.relevance_cv(records, [*base, "probe", "probe_passage"]))
            figures[f"features + passage {components} l2 {l2:g}"] = accuracy.shape_figures(records, accuracy.relevance_cv(records, [*base, "probe_passage"]))
            figures[f"{name} without choice"] = accuracy.shape_figures(
                records, accuracy.relevance_cv(records, [f for f in [*base, "probe"] if f not in ("judge_choice", "judge_none")])
            )
    for name, shapes in figures.items():
        cells = [f"{shape} {v['f1']:.3f}" if "f1" in v else f"{shape} insuff {v['insufficient']:.2f}" for shape, v in shapes.items()]
        mean = statistics.fmean(v["f1"] if "f1" in v else v["insufficient"] for v in shapes.values())
        print(f"{name:36} mean {mean:.3f} | " + " | ".join(cells))




# -- statement verdicts (context_recall) --------------------------------------------------


class StatementStateJudge(CachedJudge):
    """The cached judge, also recording the hidden state at the verdict position of every
    attribution prompt (its prefix reused as in a normal run), and which statement it was for."""

    def __init__(self, *args: Any, states: Path, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.states = states
        self.calls: list[tuple[str, float, str]] = []  # statement, P(Yes), state key
        states.mkdir(parents=True, exist_ok=True)

    def choose(self, messages: list[Message], prefix: str, options: Sequence[str]) -> tuple[list[float], Any]:
        probabilities, usage = super().choose(messages, prefix, options)
        if messages[0]["content"] == ATTRIBUTION_SYSTEM:
            key = _key(messages)
            path = self.states / f"{key}.npy"
            if not path.exists():
                np.save(path, verdict_state(self._inner(), messages).astype(np.float16))
            user = messages[1]["content"]
            statement = user[user.rindex("Claim: ") + len("Claim: ") : user.rindex("\n\nIs the claim supported")]
            self.calls.append((statement, probabilities[0], key))
        return probabilities, usage


def verdict_state(judge: Any, messages: list[Message]) -> np.ndarray:
    """The normed final hidden state at the verdict position, the prompt loaded as `choose` loads it."""
    from llama_cpp import llama_cpp as low

    llm = judge._runtime._llm
    tokens, cuts = judge._tokens(messages, "")
    low.llama_set_embeddings(llm._ctx.ctx, True)
    try:
        judge._runtime.keep(0)
        judge._load(tokens, cuts)
        state = np.ctypeslib.as_array(low.llama_get_embeddings_ith(llm._ctx.ctx, -1), shape=(llm.n_embd(),)).astype(np.float32).copy()
    finally:
        low.llama_set_embeddings(llm._ctx.ctx, False)
        judge._runtime.keep(0)
    return state


class _StateMetric:
    """context_recall whose verdict features also name the state of each statement's deciding prompt."""

    def __init__(self, metric: Any) -> None:
        self.metric = metric

    def score_statements(self, sample: Any, statements: Sequence[str], judge: StatementStateJudge) -> Any:
        judge.calls.clear()
        score = self.metric.score_statements(sample, statements, judge)
        for verdict in score.details["statements"]:
            mine = [(p, key) for statement, p, key in judge.calls if statement == verdict["statement"]]
            verdict["features"]["_state"] = max(mine)[1] if mine else None
        return score


def statement_report(judge: StatementStateJudge, limits: Mapping[str, int], components: Sequence[int], l2: float) -> None:
    """Per task balanced accuracy, cross-validated by sample: the shipped features, and with the probe."""
    original = accuracy.recall_metric
    accuracy.recall_metric = lambda: _StateMetric(original())  # type: ignore[assignment]
    records = [
        {**r, "task": task}
        for task in limits
        for r in accuracy.statement_rows(judge, task, limits[task], 0)
        if "error" not in r and r["features"].get("_state")
    ]
    labels = np.array([r["label"] for r in records], dtype=float)
    weights = np.array(accuracy.balancing_weights([r["label"] for r in records], [r["task"] for r in records]))
    groups = [f"{r['task']}/{r['group']}" for r in records]
    assignment = folds_by_group(groups, FOLDS)
    x = np.stack([np.load(judge.states / f"{r['features']['_state']}.npy").astype(np.float32) for r in records])
    for count in components:
        oof = np.zeros(len(records))
        for fold in range(FOLDS):
            train = np.array([f != fold for f in assignment])
            oof[~train] = fit_probe(x[train], labels[train], weights[train] / weights[train].mean(), count, l2)(x[~train])
        for r, v in zip(records, oof):
            r["features"][f"probe{count}"] = float(v)
    chosen_sets = {"shipped (judge, best_coverage)": ["judge", "best_coverage"]}
    chosen_sets.update({f"+ probe {c}": ["judge", "best_coverage", f"probe{c}"] for c in components})
    chosen_sets.update({f"probe {c} alone": [f"probe{c}"] for c in components})
    features = [r["features"] for r in records]
    for name, chosen in chosen_sets.items():

        def fitted(train: list[int], chosen: list[str] = chosen) -> Any:
            model = accuracy.fit_logistic([features[i] for i in train], [int(labels[i]) for i in train], [float(weights[i]) for i in train], chosen)
            return lambda test: model.probabilities([features[i] for i in test])

        predicted = accuracy.cross_validated(features, groups, fitted)
        cells = []
        for task in limits:
            picked = [(int(labels[i]), p) for i, (r, p) in enumerate(zip(records, predicted)) if r["task"] == task]
            cells.append(f"{task} {accuracy.balanced_accuracy([g for g, _ in picked], [int(p >= 0.5) for _, p in picked]):.3f}")
        print(f"{name:32} " + " | ".join(cells))


def statements_main() -> None:
    parser = argparse.ArgumentParser(description="the probe on statement verdicts (context_recall)")
    parser.add_argument("--limit", type=parse_limits, default={"recall": 40, "fever": 120, "vitaminc": 240})
    parser.add_argument("--components", default="8,16,32")
    parser.add_argument("--l2", type=float, default=10.0)
    args = parser.parse_args(sys.argv[2:])
    path, catalog_name = resolve_model(DEFAULT_MODEL)
    shipped = accuracy.CATALOG[catalog_name].calibration if catalog_name else {}
    judge = StatementStateJudge(CACHE / path.name / "answers.jsonl", lambda: load_judge(str(path)), shipped, states=STATES / path.name / "statements")
    statement_report(judge, args.limit, [int(c) for c in args.components.split(",")], args.l2)
    judge.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["statements"]:
        statements_main()
    else:
        main()
