"""Does another wording of the passage verdict rank HotpotQA's gold paragraphs better?

`explore_relevance.py --oracle-verdicts` shows the judge's verdict on a paragraph read alone as
what keeps context_relevance from its targets at 10 and 3 contexts (AUC 0.72 / 0.77 against the
gold paragraphs; with perfect verdicts the shipped rule reaches F1 0.55 / 0.77). This script asks
the verdict in other words (or order) about the same paragraphs (those a run reads at 10 contexts, and the
3-context shape's), same system message and layout, and prints each wording's AUC against the gold
paragraphs, beside the shipped wording's, over the same prompts, and the AUC of the sum of their
log-odds. Answers go through accuracy.py's judge cache.

Measured 2026-11-25 (60 questions, 120 gold and 146 other paragraphs): shipped 0.714, "about what
is asked" 0.700, the paragraph before the question 0.670, "one step of the answer" 0.690, the sum
of the four 0.740 for four times the prompts; not shipped.

    python benchmarks/tried/passage_wording.py --limit 60
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import accuracy  # noqa: E402
import explore_relevance  # noqa: E402
from judge_cache import CachedJudge  # noqa: E402

from localeval.judge import Message, load_judge  # noqa: E402
from localeval.judge.prompts import RELEVANCE_SYSTEM, RELEVANCE_USER  # noqa: E402
from localeval.metrics import relevance  # noqa: E402
from localeval.metrics.judging import yes_log_odds  # noqa: E402
from localeval.models import CATALOG, DEFAULT_MODEL, resolve_model  # noqa: E402
from localeval.samples import Sample  # noqa: E402

WORDINGS = {
    "shipped": RELEVANCE_USER,
    "about what is asked": (
        "Question: {question}\n\nParagraph: {paragraph}\n\n"
        "Is the paragraph about a person, place, work or thing the question asks about or describes? Answer Yes or No."
    ),
    "the paragraph first": (
        "Paragraph: {paragraph}\n\nQuestion: {question}\n\n"
        "Does the paragraph contain information needed to answer the question? Answer Yes or No."
    ),
    "one step of the answer": (
        "Question: {question}\n\nParagraph: {paragraph}\n\n"
        "Answering the question may take facts from several paragraphs. Does this paragraph give one of those facts? Answer Yes or No."
    ),
}


def paragraphs(row: dict, judged: int) -> list[tuple[str, bool]]:
    """The paragraphs of a question a run reads at 10 contexts, and those of its 3-context shape,
    each once, with whether it holds a gold sentence."""
    contexts = row["retrieved_contexts"]
    units = relevance._units(Sample(user_input=row["user_input"], retrieved_contexts=contexts), "sentence", "en")
    _, passage_overlap, _ = relevance._question_overlap(row["user_input"], units, len(contexts), "en")
    read = sorted(range(len(contexts)), key=lambda p: (-passage_overlap[p], p))[:judged]
    gold = {u.passage for u in units if any(accuracy._same_sentence(u.text, g) for g in row["gold_sentences"])}
    others = [p for p in range(len(contexts)) if p not in gold]
    chosen = sorted(set(read) | gold | set(others[:1]))
    return [(contexts[p], p in gold) for p in chosen]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=60, help="HotpotQA dev questions (accuracy.py's rows)")
    args = parser.parse_args()
    path, catalog_name = resolve_model(DEFAULT_MODEL)
    judge = CachedJudge(accuracy.CACHE / path.name / "answers.jsonl", lambda: load_judge(str(path)), CATALOG[catalog_name].calibration if catalog_name else {})
    values: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in WORDINGS}
    for number, row in enumerate(accuracy.read("relevance_dev.jsonl", args.limit), start=1):
        for text, is_gold in paragraphs(row, relevance.JUDGED_CONTEXTS):
            paragraph = " ".join(relevance.split_sentences(text, "en") or [text])  # as the metric shows it
            for name, wording in WORDINGS.items():
                messages: list[Message] = [{"role": "system", "content": RELEVANCE_SYSTEM}, {"role": "user", "content": wording.format(question=row["user_input"], paragraph=paragraph)}]
                value, _ = yes_log_odds(judge, messages)
                values[name][0 if is_gold else 1].append(value)
        print(f"\r{number}/{args.limit}", end="", file=sys.stderr, flush=True)
    judge.close()
    print(file=sys.stderr)
    for name, (gold, others) in values.items():
        print(f"{name:<24} AUC {explore_relevance._auc(gold, others):.3f} over {len(gold)} gold and {len(others)} other paragraphs")
    everything = [sum(column) for column in zip(*(values[name][0] for name in WORDINGS))], [sum(column) for column in zip(*(values[name][1] for name in WORDINGS))]
    print(f"{'the sum of all':<24} AUC {explore_relevance._auc(*everything):.3f} (one prompt per wording)")


if __name__ == "__main__":
    main()
