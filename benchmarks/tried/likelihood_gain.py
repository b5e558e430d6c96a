"""Does the context make the statement likelier? A likelihood-gain feature for statement verdicts (issue 19).

Faithfulness scorers of the BARTScore / HaRiM family read a generator's token log-probabilities
instead of asking it a question: a statement the context supports is more probable after the
context than without it, and a statement that contradicts it (a wrong number, another name)
less probable. This script measures that signal from the default judge itself, beside the
shipped features (the Yes/No verdict's log-odds and the best sentence's coverage):

1. Runs accuracy.py's statement sets through localeval's own context_recall code (the same
   cached judge answers), noting for every statement the chunk the verdict came from (the
   chunk the judge found most supported).
2. Evaluates, with llama.cpp returning logits at every position, the statement's tokens after
   "Document: <that chunk>\\nStatement: " and after "Document: \\nStatement: ", and keeps each
   token's log-probability in both (cached per chunk and statement in
   benchmarks/.cache/likelihood/<model>/gains.jsonl).
3. Features per statement: gain_mean (mean over the statement's tokens of the log-probability
   with the chunk minus without), gain_min (the lowest of those per-token gains: one
   contradicted token), with_mean (mean log-probability with the chunk); then the combinations
   below fitted on the four sets at once and cross-validated exactly as accuracy.py does.

    python benchmarks/tried/likelihood_gain.py --limit attribution=150,recall=40,vitaminc=240,fever=120

Costs one more read of the deciding chunk plus the statement (not prefix-shared with the
verdict prompt here; in the metric the statement's tokens already follow the chunk in the
verdict prompt, so only the statement alone would be new).

Measured 2026-11-25 (default judge, 150 claims, 40 QAGS summaries, 240 VitaminC and 120 FEVER
pairs; 103,042 tokens read in 1,111 s): no variant helps. Balanced accuracy / AUC, claims /
QAGS / VitaminC / FEVER: shipped features 0.700 / 0.792, 0.767 / 0.849, 0.633 / 0.742, 0.784 /
0.877; + gain_mean 0.700 / 0.789, 0.767 / 0.848, 0.629 / 0.741, 0.784 / 0.875; + gain_min 0.693 /
0.788, 0.741 / 0.849, 0.629 / 0.737, 0.793 / 0.877; the best of the others (+ with_informative)
0.700 / 0.792, 0.750 / 0.844, 0.637 / 0.741, 0.776 / 0.875. Alone (no verdict) the gains rank
QAGS statements at AUC 0.82 but claims at 0.58-0.63: what the judge's Yes/No already knows.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import accuracy  # noqa: E402
from judge_cache import CachedJudge  # noqa: E402

from localeval.judge import load_judge  # noqa: E402
from localeval.judge.llama_runtime import safe_loading  # noqa: E402
from localeval.metrics import recall  # noqa: E402
from localeval.models import CATALOG, DEFAULT_MODEL, resolve_model  # noqa: E402
from localeval.samples import Sample  # noqa: E402

TASKS = ("attribution", "recall", "vitaminc", "fever")
TEMPLATE = "Document: {document}\nStatement:"
COMBINATIONS = {
    "shipped features (judge, best_coverage)": ["judge", "best_coverage"],
    "+ gain_mean": ["judge", "best_coverage", "gain_mean"],
    "+ gain_min": ["judge", "best_coverage", "gain_min"],
    "+ with_min": ["judge", "best_coverage", "with_min"],
    "+ gain_informative": ["judge", "best_coverage", "gain_informative"],
    "+ with_informative": ["judge", "best_coverage", "with_informative"],
    "+ unexplained": ["judge", "best_coverage", "unexplained"],
    "+ gain_informative, with_informative": ["judge", "best_coverage", "gain_informative", "with_informative"],
    "gain_informative, with_informative (no verdict)": ["gain_informative", "with_informative"],
    "gain_informative, best_coverage (no verdict)": ["gain_informative", "best_coverage"],
}


class DecidingChunks:
    """Records, per statement, the chunk each verdict prompt showed and the judge's log-odds on
    it, by wrapping the two functions context_recall calls (our own control flow only)."""

    def __init__(self) -> None:
        self.read: dict[str, list[tuple[float, str]]] = {}
        self._last: tuple[str, str] | None = None
        self._messages = recall.attribution_messages
        self._log_odds = recall.yes_log_odds
        recall.attribution_messages = self._record_messages  # type: ignore[assignment]
        recall.yes_log_odds = self._record_log_odds  # type: ignore[assignment]

    def _record_messages(self, document: str, statement: str, *args: Any, **kwargs: Any) -> Any:
        self._last = (document, statement)
        return self._messages(document, statement, *args, **kwargs)

    def _record_log_odds(self, judge: Any, messages: Any) -> Any:
        value, usage = self._log_odds(judge, messages)
        assert self._last is not None
        document, statement = self._last
        self.read.setdefault(statement, []).append((value, document))
        return value, usage

    def deciding(self, statement: str) -> str | None:
        """The chunk of the highest log-odds (the first read among equals), as context_recall decides."""
        read = self.read.get(statement, [])
        return max(read, key=lambda pair: pair[0])[1] if read else None


class Likelihood:
    """Per-token log-probabilities of a statement after a document, from a GGUF model loaded
    with logits at every position; cached by document and statement."""

    def __init__(self, model_path: Path, cache: Path) -> None:
        self._path = model_path
        self._model: Any = None
        self._cache = cache
        self._entries: dict[str, list[float]] = {}
        if cache.exists():
            for line in cache.read_text(encoding="utf-8").splitlines():
                entry = json.loads(line)
                self._entries[entry["k"]] = entry["v"]
        cache.parent.mkdir(parents=True, exist_ok=True)
        self._out = open(cache, "a", encoding="utf-8")
        self.tokens = 0
        self.seconds = 0.0

    def _llama(self) -> Any:
        if self._model is None:
            import llama_cpp

            with safe_loading(llama_cpp):  # the AMX kernels off, as the judge loads
                self._model = llama_cpp.Llama(str(self._path), n_ctx=2048, n_threads=2, seed=0, flash_attn=True, logits_all=True, verbose=False)
        return self._model

    def token_log_probs(self, document: str, statement: str) -> list[float]:
        key = hashlib.sha256(json.dumps([TEMPLATE, document, statement]).encode()).hexdigest()[:32]
        if key not in self._entries:
            llama = self._llama()
            head = llama.tokenize(TEMPLATE.format(document=document).encode(), add_bos=False, special=False)
            tail = llama.tokenize((" " + statement).encode(), add_bos=False, special=False)
            head = head[-(2000 - len(tail)) :]
            started = time.perf_counter()
            llama.reset()
            llama.eval(head + tail)
            logits = np.asarray(llama.scores[len(head) - 1 : len(head) + len(tail) - 1], dtype=np.float64)
            peak = logits.max(axis=1, keepdims=True)
            log_probs = logits - peak - np.log(np.exp(logits - peak).sum(axis=1, keepdims=True))
            values = [float(log_probs[i, token]) for i, token in enumerate(tail)]
            self.seconds += time.perf_counter() - started
            self.tokens += len(head) + len(tail)
            self._entries[key] = values
            self._out.write(json.dumps({"k": key, "v": values}) + "\n")
            self._out.flush()
        return self._entries[key]


INFORMATIVE_SHARE = 0.3  # the statement's least predictable tokens without the document: its names, numbers, facts


def gain_features(with_document: Sequence[float], without: Sequence[float]) -> dict[str, float]:
    """The per-token log-probabilities, with and without the document, as statement features."""
    gains = [a - b for a, b in zip(with_document, without)]
    informative = sorted(range(len(gains)), key=lambda i: without[i])[: max(1, round(INFORMATIVE_SHARE * len(gains)))]
    return {
        "gain_mean": statistics.fmean(gains),
        "gain_min": min(gains),
        "with_mean": statistics.fmean(with_document),
        "with_min": min(with_document),
        "gain_informative": statistics.fmean(gains[i] for i in informative),
        "with_informative": statistics.fmean(with_document[i] for i in informative),
        "unexplained": sum(1 for g, w in zip(gains, with_document) if w < -2 and g < 1) / len(gains),
    }


def likelihood_features(chunks: DecidingChunks, likelihood: Likelihood) -> accuracy.ExtraFeatures:
    """accuracy.statement_rows' hook: each statement's likelihood features on the chunk its verdict
    came from. Sample by sample (VitaminC pairs one claim with several revisions of its evidence)."""

    def extra(sample: Sample, statements: Sequence[str], verdicts: Sequence[Any]) -> list[dict[str, float]]:
        features = [
            gain_features(likelihood.token_log_probs(chunks.deciding(statement) or "", statement), likelihood.token_log_probs("", statement))
            for statement in statements
        ]
        chunks.read.clear()
        return features

    return extra


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=accuracy._limits, default={}, help="rows per task: TASK=N,...")
    parser.add_argument("--task", default=",".join(TASKS))
    parser.add_argument("--shift", type=int, default=0, help="held-out rows, as accuracy.py --shift")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    args = parser.parse_args()
    path, catalog_name = resolve_model(args.model)
    shipped = CATALOG[catalog_name].calibration if catalog_name else {}
    judge = CachedJudge(accuracy.CACHE / path.name / "answers.jsonl", lambda: load_judge(str(path)), shipped)
    chunks = DecidingChunks()
    likelihood = Likelihood(path, accuracy.CACHE.parent / "likelihood" / path.name / "gains.jsonl")
    extra = likelihood_features(chunks, likelihood)
    tasks = {task: accuracy.statement_rows(judge, task, args.limit.get(task), args.shift, extra) for task in args.task.split(",")}
    judge.close()
    if likelihood.tokens:
        print(f"likelihood reads this run: {likelihood.tokens} tokens in {likelihood.seconds:.0f} s ({likelihood.tokens / max(likelihood.seconds, 1e-9):.0f} tokens/s)")
    for task, records in tasks.items():
        rows = [r for r in records if "error" not in r]
        for label in (1, 0):
            values = [r["features"]["gain_mean"] for r in rows if r["label"] == label]
            minima = [r["features"]["gain_min"] for r in rows if r["label"] == label]
            print(f"{task} label {label}: {len(values)} statements, gain_mean median {statistics.median(values):+.3f}, gain_min median {statistics.median(minima):+.3f}")
    accuracy.print_combinations(tasks, COMBINATIONS)


if __name__ == "__main__":
    main()
