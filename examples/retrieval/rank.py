"""Two small retrievers over this folder's BEIR corpus, written as the run files localeval reads.

`idf` ranks a passage by the content words it shares with the query, each weighted by how rare it
is in the corpus (a small BM25), and writes a TREC run; `common` counts shared words of any kind
("the", "of" and "is" weigh as much as "honey"), so it ranks worse, and writes BEIR's JSON run.
Scores are rounded to two decimals, so both runs hold ties, ordered as trec_eval orders them.

    python examples/retrieval/rank.py    # rewrites runs/idf.trec and runs/common.json
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEPTH = 10  # ids ranked per query
WORD = re.compile(r"[a-z0-9]+")
STOP = frozenset("a an the of in on at to for from by with and or is are was were be what which who when where why how did does do it its as that this so".split())


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def read_jsonl(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def idf_scores(query: str, corpus: list[dict[str, str]]) -> dict[str, float]:
    counts = Counter(word for doc in corpus for word in set(words(doc["text"])))
    asked = {w for w in words(query) if w not in STOP}
    return {doc["_id"]: round(sum(math.log(len(corpus) / counts[w]) for w in asked & set(words(doc["text"]))), 2) for doc in corpus}


def common_scores(query: str, corpus: list[dict[str, str]]) -> dict[str, float]:
    asked = Counter(words(query))
    return {doc["_id"]: float(sum(min(asked[w], n) for w, n in Counter(words(doc["text"])).items())) for doc in corpus}


def top(scores: dict[str, float]) -> list[tuple[str, float]]:
    return sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)[:DEPTH]


def main() -> None:
    corpus, queries = read_jsonl(HERE / "corpus.jsonl"), read_jsonl(HERE / "queries.jsonl")
    (HERE / "runs").mkdir(exist_ok=True)
    with open(HERE / "runs" / "idf.trec", "w", encoding="utf-8") as out:
        for query in queries:
            for rank, (doc, score) in enumerate(top(idf_scores(query["text"], corpus)), start=1):
                out.write(f"{query['_id']} Q0 {doc} {rank} {score} idf\n")
    common = {query["_id"]: dict(top(common_scores(query["text"], corpus))) for query in queries}
    (HERE / "runs" / "common.json").write_text(json.dumps(common, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
