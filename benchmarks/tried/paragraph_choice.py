"""Does a choice among all the paragraphs rank HotpotQA's gold paragraphs better than a verdict on each?

`explore_relevance.py --oracle-verdicts` shows what keeps context_relevance from its targets at
10 contexts: the judge's verdict on a paragraph read alone ranks the gold paragraphs at AUC 0.72,
and 47 of the 120 gold paragraphs of 60 questions are not among the 3 the judge reads (those that
mention most of the question). Within a paragraph, a choice among its numbered sentences put the
judge's mass on the answering one where sentence-by-sentence verdicts did not; this script asks the
same kind of choice one level up: all the question's paragraphs, lettered, and "which one is most
needed", read from the first answer token's distribution over the letters (one prompt per question).

Variants: each paragraph shown by its opening sentence (what names its subject; cheap), in the
given order, reversed (letters move, so a position bias shows), and the two averaged; each
paragraph shown whole (about as many tokens as reading all ten, so over issue 20's budget; for
the size of what the openings lose). Printed per variant: AUC of each paragraph's log-probability
against the gold paragraphs (pooled over questions), and how many gold paragraphs are among each
question's 3 best by it; beside them the same for the evidence that picks the paragraphs today
(`passage_overlap`). Answers are cached in their own file beside accuracy.py's.

Measured 2026-11-25 (60 questions, 120 gold paragraphs of 600): the openings in the given order
AUC 0.652 (58 gold among the 3 best), reversed 0.681 (61), both orders averaged 0.718 (71); whole
paragraphs (first 20 questions) 0.711 (25 of 40); the evidence alone (`passage_overlap`) 0.755 (73),
0.796 (27 of 40) on those 20; the two rankings added 0.781 (71). Not shipped: the choice ranks worse
than the evidence, its letters carry a position bias, and it costs a prompt of about 450 tokens per
order.

    python benchmarks/tried/paragraph_choice.py --limit 60 --whole 20
"""

from __future__ import annotations

import argparse
import math
import string
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import accuracy  # noqa: E402
import explore_relevance  # noqa: E402
from judge_cache import CachedJudge  # noqa: E402

from localeval.judge import Message, load_judge  # noqa: E402
from localeval.metrics import relevance  # noqa: E402
from localeval.models import CATALOG, DEFAULT_MODEL, resolve_model  # noqa: E402
from localeval.samples import Sample  # noqa: E402
from localeval.text import split_sentences  # noqa: E402

SYSTEM = "You decide which paragraphs help to answer a question. Use only the paragraphs."
USER = "Question: {question}\n\nParagraphs:\n{lettered}\n\nWhich paragraph is most needed to answer the question? Answer with its letter only."
OPENING_WORDS = 40  # an opening sentence longer than this is cut: it names the subject early
READ = relevance.JUDGED_CONTEXTS


def _opening(sentences: Sequence[str]) -> str:
    words = (sentences[0] if sentences else "").split()
    return " ".join(words[:OPENING_WORDS]) + (" ..." if len(words) > OPENING_WORDS else "")


def choice(judge: CachedJudge, question: str, shown: Sequence[str], reverse: bool) -> list[float]:
    """Each paragraph's log-probability of being the one chosen, in the given order."""
    order = list(range(len(shown)))[::-1] if reverse else list(range(len(shown)))
    letters = string.ascii_uppercase[: len(shown)]
    lettered = "\n".join(f"{letters[position]}. {shown[p]}" for position, p in enumerate(order))
    messages: list[Message] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER.format(question=question, lettered=lettered)}]
    probabilities, _ = judge.choose(messages, "", list(letters))
    values = [0.0] * len(shown)
    for position, p in enumerate(order):
        values[p] = math.log(max(probabilities[position], 1e-6))
    return values


def _ranks(values: Sequence[float]) -> list[int]:
    """Each value's rank, 0 for the highest (ties: the earlier first): two scores on other scales add."""
    order = sorted(range(len(values)), key=lambda p: (-values[p], p))
    ranks = [0] * len(values)
    for rank, p in enumerate(order):
        ranks[p] = rank
    return ranks


def report(name: str, scores: Sequence[Sequence[float]], gold: Sequence[set[int]]) -> None:
    positive = [s[p] for s, g in zip(scores, gold) for p in range(len(s)) if p in g]
    negative = [s[p] for s, g in zip(scores, gold) for p in range(len(s)) if p not in g]
    top = sum(len(g & set(sorted(range(len(s)), key=lambda p: (-s[p], p))[:READ])) for s, g in zip(scores, gold))
    print(f"{name:<40} AUC {explore_relevance._auc(positive, negative):.3f}   gold among the {READ} best: {top} of {len(positive)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=60, help="HotpotQA dev questions (accuracy.py's rows)")
    parser.add_argument("--whole", type=int, default=20, help="of those, how many are also asked with whole paragraphs")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    path, catalog_name = resolve_model(DEFAULT_MODEL)
    judge = CachedJudge(accuracy.CACHE / path.name / "paragraph_choice.jsonl", lambda: load_judge(str(path), n_threads=args.threads), CATALOG[catalog_name].calibration if catalog_name else {})
    variants: dict[str, Callable[[str, list[list[str]]], list[float]]] = {
        "openings, given order": lambda q, s: choice(judge, q, [_opening(x) for x in s], False),
        "openings, reversed": lambda q, s: choice(judge, q, [_opening(x) for x in s], True),
    }
    scores: dict[str, list[list[float]]] = {name: [] for name in [*variants, "openings, both orders", "whole paragraphs", "passage_overlap", "passage_overlap (same questions as whole)"]}
    gold_sets: list[set[int]] = []
    for number, row in enumerate(accuracy.read("relevance_dev.jsonl", args.limit), start=1):
        contexts, question = row["retrieved_contexts"], row["user_input"]
        units = relevance._units(Sample(user_input=question, retrieved_contexts=contexts), "sentence", "en")
        _, passage_overlap, _ = relevance._question_overlap(question, units, len(contexts), "en")
        gold_sets.append({u.passage for u in units if any(accuracy._same_sentence(u.text, g) for g in row["gold_sentences"])})
        sentences = [split_sentences(c, "en") or [c] for c in contexts]
        for name, variant in variants.items():
            scores[name].append(variant(question, sentences))
        scores["openings, both orders"].append([(a + b) / 2 for a, b in zip(scores["openings, given order"][-1], scores["openings, reversed"][-1])])
        scores["passage_overlap"].append(list(passage_overlap))
        if number <= args.whole:
            scores["whole paragraphs"].append(choice(judge, question, [" ".join(x) for x in sentences], False))
            scores["passage_overlap (same questions as whole)"].append(list(passage_overlap))
        print(f"\r{number}/{args.limit}", end="", file=sys.stderr, flush=True)
    judge.close()
    print(file=sys.stderr)
    for name, values in scores.items():
        report(name, values, gold_sets[: len(values)])
    combined = [[-a - b for a, b in zip(_ranks(overlap), _ranks(chosen))] for overlap, chosen in zip(scores["passage_overlap"], scores["openings, both orders"])]
    report("rank by overlap + rank by openings, both", combined, gold_sets)


if __name__ == "__main__":
    main()
