"""How localeval's own work grows with the input: each size doubled, the time ratio printed.

Times what happens around the judge, with a judge that answers at once (ScriptedJudge),
so only localeval's splitting, evidence and features are measured: a ratio near 2 per
doubling is linear; 4 is quadratic. The target: at most 2.6 per doubling, and 16,000
sentences in one context split in under 5 s.

    python benchmarks/scaling.py            # sentences, contexts, statements, references, verifier contexts
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from localeval import evaluate
from localeval.data.text import split_sentences
from localeval.testing import ScriptedJudge

WORDS = "river bridge tower museum garden city station harbour castle market".split()


def sentence(i: int) -> str:
    return f"The {WORDS[i % 10]} number {i} stands near the {WORDS[(i * 7) % 10]} {i % 97}."


def best_of(work: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def one_word_sentences(n: int) -> float:
    text = " ".join(["Word."] * n)
    return best_of(lambda: split_sentences(text), 1)


def relevance_contexts(n: int) -> float:
    sample = {"user_input": "Which tower stands near the harbour?", "retrieved_contexts": [" ".join(sentence(i * 3 + k) for k in range(3)) for i in range(n)]}
    return best_of(lambda: evaluate([sample], ["context_relevance"], judge=ScriptedJudge(lambda m: 0.5)))


def recall_statements(n: int) -> float:
    sample = {"user_input": "What stands where?", "retrieved_contexts": [" ".join(sentence(i) for i in range(200))], "reference": " ".join(sentence(i * 3) for i in range(n))}
    return best_of(lambda: evaluate([sample], ["context_recall"], judge=ScriptedJudge(lambda m: 0.5)))


def nonllm_references(n: int) -> float:
    sample = {"retrieved_contexts": [sentence(i) * 3 for i in range(100)], "reference_contexts": [sentence(i * 5) * 3 for i in range(n)]}
    return best_of(lambda: evaluate([sample], ["nonllm_context_recall"]))


def verifier_context(chars: int) -> float:
    """40 units read with one context of `chars` characters by the verifier (its forward pass is
    the same at every size: what grows is tokenizing, done once per text)."""
    from localeval.verifier import load_verifier

    verifier = load_verifier()
    units = [sentence(i) for i in range(40)]
    context = " ".join(units) + " " + " ".join(sentence(i) for i in range(40, 40 + chars // 50))[:chars]
    return best_of(lambda: verifier.logits("relevance", [("Which tower stands near the harbour?", unit, context) for unit in units]))


CASES: dict[str, tuple[Callable[[int], float], list[int]]] = {
    "sentences in one context (split)": (one_word_sentences, [2000, 4000, 8000, 16000]),
    "contexts (context_relevance features)": (relevance_contexts, [250, 500, 1000, 2000]),
    "statements (context_recall evidence)": (recall_statements, [50, 100, 200, 400]),
    "reference contexts against 100 retrieved (nonllm_context_recall)": (nonllm_references, [100, 200, 400, 800]),
    "characters of one context, 40 units (context_relevance --verifier)": (verifier_context, [12500, 25000, 50000, 100000]),
}


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    for name, (measure, sizes) in CASES.items():
        times = [measure(n) for n in sizes]
        ratios = ", ".join(f"{b / a:.2f}" for a, b in zip(times, times[1:]))
        cells = ", ".join(f"{n}: {t:.3f} s" for n, t in zip(sizes, times))
        print(f"{name}: {cells}; ratio per doubling {ratios}")


if __name__ == "__main__":
    main()
