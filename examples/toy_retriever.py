"""A toy retriever for docs/generate.md's worked example: ranks the chunks `localeval generate
--chunks-out` wrote against each generated question and writes samples `localeval score` reads.

Two rankings, to compare: `idf` (shared content words, each weighted by how rare it is among
the chunks: a small BM25) and `common` (shared words of any kind, counted: "the", "of" and "is"
weigh as much as "insulin", so it ranks worse).

    python examples/toy_retriever.py chunks.jsonl testset.jsonl --ranking idf -k 3 -o idf.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections import Counter
from pathlib import Path

WORD = re.compile(r"[a-z0-9]+")
STOP = frozenset("a an the of in on at to for from by with and or is are was were be what which who when where why how did does do it its as that this".split())


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def rank(question: str, chunks: list[dict[str, str]], ranking: str) -> list[int]:
    """Chunk indices, best first (ties: file order)."""
    asked = words(question)
    texts = [Counter(words(chunk["text"])) for chunk in chunks]
    if ranking == "common":
        scores = [sum(min(count, text[word]) for word, count in Counter(asked).items()) for text in texts]
    else:
        holders = Counter(word for text in texts for word in text)
        idf = {word: math.log(1 + len(chunks) / holders[word]) for word in holders}
        scores = [sum(idf[word] for word in set(asked) - STOP if word in text) for text in texts]
    return sorted(range(len(chunks)), key=lambda i: (-scores[i], i))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chunks", type=Path)
    parser.add_argument("testset", type=Path)
    parser.add_argument("--ranking", choices=("idf", "common"), default="idf")
    parser.add_argument("-k", type=int, default=3)
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    chunks = [json.loads(line) for line in args.chunks.read_text(encoding="utf-8").splitlines() if line.strip()]
    with args.output.open("w", encoding="utf-8") as out:
        for line in args.testset.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            top = rank(row["user_input"], chunks, args.ranking)[: args.k]
            sample = {key: row[key] for key in ("id", "user_input", "reference", "reference_contexts", "reference_context_ids")}
            sample["retrieved_contexts"] = [chunks[i]["text"] for i in top]
            sample["retrieved_context_ids"] = [chunks[i]["id"] for i in top]
            out.write(json.dumps(sample, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
