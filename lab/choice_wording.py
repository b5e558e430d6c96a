"""Which wording of context_relevance's choice prompt puts the judge's mass on the answering
sentence: the hand-written single-context questions of benchmarks/data/plain_cases.jsonl,
asked in each wording, straight to the judge (no cache: 14 short prompts a wording).

Prints, per wording, how often the judge's most likely sentence is the answering one, the
mean share of its sentence probability on that sentence, and the mean probability of "0"
(none). Measured 2026-11-24 with the default judge (docs/HISTORY.md).

    python lab/choice_wording.py
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from localeval.data.text import split_sentences
from localeval.judge import load_judge
from localeval.judge.prompts import CHOICE_OPTIONS, RELEVANCE_CHOICE_USER, RELEVANCE_SYSTEM

PLAIN = Path(__file__).resolve().parent / "data" / "plain_cases.jsonl"
ASK = "Answer with its number only, or 0 if none of them does."
WORDINGS = {
    "shipped": (RELEVANCE_SYSTEM, RELEVANCE_CHOICE_USER),
    "the answer itself": (RELEVANCE_SYSTEM, "Question: {question}\n\nSentences:\n{numbered}\n\nWhich sentence states the answer to the question itself, not only its topic? " + ASK),
    "question last": ("You find the sentence that answers a question. Use only the sentences.", "Sentences:\n{numbered}\n\nQuestion: {question}\n\nWhich sentence answers the question? " + ASK),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="catalog name or GGUF path (default: the default judge)")
    args = parser.parse_args()
    judge = load_judge(args.model)
    rows = [json.loads(line) for line in PLAIN.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r["kind"] == "relevance" and len(r["retrieved_contexts"]) == 1 and len(r["required"]) == 1]
    for name, (system, user) in WORDINGS.items():
        right, gold_share, none = 0, [], []
        for row in rows:
            sentences = split_sentences(row["retrieved_contexts"][0])
            numbered = "\n".join(f"{n}. {s}" for n, s in enumerate(sentences, start=1))
            messages = [{"role": "system", "content": system}, {"role": "user", "content": user.format(question=row["user_input"], numbered=numbered)}]
            probabilities, _ = judge.choose(messages, "", CHOICE_OPTIONS[: len(sentences) + 1])
            shares = [p / sum(probabilities[1:]) for p in probabilities[1:]]
            gold = sentences.index(row["required"][0])
            right += max(range(len(shares)), key=shares.__getitem__) == gold
            gold_share.append(shares[gold])
            none.append(probabilities[0])
        print(f"{name:<18} most likely sentence right {right} of {len(rows)}   share on the answering sentence {statistics.fmean(gold_share):.3f}   P(none) {statistics.fmean(none):.3f}", flush=True)
    judge.close()


if __name__ == "__main__":
    main()
