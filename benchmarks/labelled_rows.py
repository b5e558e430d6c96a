"""The labelled rows every benchmark reads, and how each is split: a library, not a script.

accuracy.py (the judge rule), verifier_accuracy.py (the verifier), write_catalog.py (the release
step), the lab notebooks and training/prepare_verifier_data.py (which keeps the benchmarks'
dev halves out of training) all read the same rows the same way from here, so a row a fit
never saw stays unseen whichever script reads it.

- shared/data (`DATA`, or $LOCALEVAL_DEV_DATA): HotpotQA relevance, SciFact and WiCE claims, QAGS
  summaries, retrieval ids; read whole or `limit` rows evenly spaced (`read`).
- public sets beyond it (`EXTERNAL`, benchmarks/DATA_SOURCES.md): VitaminC and FEVER-symmetric
  claim/evidence pairs, SQuAD 2.0 paragraphs; each hashed into a fit half and a dev half
  (`in_dev_half`).
- the hand-written cases under benchmarks/data (`PLAIN`, `UNANSWERABLE`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from localeval.data.text import split_sentences

HERE = Path(__file__).resolve().parent
# The dev sets beside the checkout (../shared/data), or beside a git worktree's folder
# (../../shared/data); $LOCALEVAL_DEV_DATA names them anywhere else.
_BESIDE = [folder / "shared" / "data" for folder in (HERE.parents[1], HERE.parents[2])]
DATA = Path(os.environ.get("LOCALEVAL_DEV_DATA") or next((p for p in _BESIDE if p.is_dir()), _BESIDE[0]))
# Public claim/evidence sets beyond shared/data (benchmarks/DATA_SOURCES.md says where each
# comes from, its licence, and how to unpack it here); never committed, only read.
EXTERNAL = Path(os.environ.get("LOCALEVAL_EXTERNAL_DATA", HERE / ".cache" / "external"))
EXTERNAL_SETS = {
    # task: (file for the fit, file of the dev half, label that means "supported")
    "vitaminc": ("vitaminc_real/test.jsonl", "vitaminc_real/test.jsonl", "SUPPORTS"),
    "fever": ("fever_symmetric/dev.jsonl", "fever_symmetric/test.jsonl", "SUPPORTS"),
}
# Single-paragraph questions (SQuAD 2.0, benchmarks/DATA_SOURCES.md): the answer sentence is the
# one holding the answer span; an unanswerable question was written against the paragraph.
SQUAD_FILE = "squad2/dev-part.json"
SPLIT_SEED = "localeval-20261123"
PLAIN = HERE / "data" / "plain_cases.jsonl"
UNANSWERABLE = HERE / "data" / "unanswerable.jsonl"
RELEVANCE_SHAPES = ("10", "3", "1", "10 without gold", "1 without gold", "squad 1", "squad 3", "squad 1 without answer")


def read(name: str, limit: int | None, shift: int = 0) -> list[dict[str, Any]]:
    """All rows of a shared/data file, or `limit` rows evenly spaced through it (the files are
    grouped by source), each moved `shift` rows on: a shift smaller than the spacing picks rows
    disjoint from the unshifted choice."""
    rows = [json.loads(line) for line in open(DATA / name, encoding="utf-8") if line.strip()]
    if not limit or limit >= len(rows):
        return rows
    return [rows[(i * len(rows) // limit + shift) % len(rows)] for i in range(limit)]


def in_dev_half(task: str, group: str) -> bool:
    """Whether a group of a public set is in its dev half: a stable hash of the group, so the
    half a fit never reads is the same for every script and every run."""
    return hashlib.sha256(f"{SPLIT_SEED}:{task}:{group}".encode()).digest()[0] % 2 == 1


def read_external(task: str, limit: int | None, dev_half: bool) -> list[dict[str, Any]]:
    """Claim/evidence pairs of a public set as attribution rows. VitaminC has one file: its
    cases are hashed into a fit half and a dev half; FEVER-symmetric has a dev file (fit)
    and a test file (its second half, the dev rows). `limit` rows evenly spaced through the hash order."""
    fit_file, held_file, supported = EXTERNAL_SETS[task]
    path = EXTERNAL / (held_file if dev_half else fit_file)
    if not path.is_file():
        raise SystemExit(f"{path} is missing: see benchmarks/DATA_SOURCES.md for where {task} comes from")
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        group = str(item.get("case_id") or item["id"])
        if fit_file == held_file and in_dev_half(task, group) != dev_half:
            continue
        rows.append({"id": f"{task}/{item.get('unique_id') or item['id']}", "group": group, "source": task, "context": item["evidence"], "claim": item["claim"], "label": int(item["label"] == supported)})
    rows.sort(key=lambda r: hashlib.sha256(f"{SPLIT_SEED}:{r['id']}".encode()).hexdigest())
    if limit and limit < len(rows):
        rows = [rows[i * len(rows) // limit] for i in range(limit)]
    return rows


def read_squad(limit: int | None, dev_half: bool) -> list[dict[str, Any]]:
    """SQuAD 2.0 paragraphs (a stable half hashed to the fit, the other the dev half), each with one
    of its answerable questions (hashed; with the answer's character offset) and its first
    unanswerable one, and the article's next two paragraphs (topical distractors); `limit`
    paragraphs evenly spaced through the hash order."""
    path = EXTERNAL / SQUAD_FILE
    if not path.is_file():
        raise SystemExit(f"{path} is missing: see benchmarks/DATA_SOURCES.md for where squad comes from")
    rows = []
    for article in json.loads(path.read_text(encoding="utf-8"))["data"]:
        paragraphs = article["paragraphs"]
        for index, paragraph in enumerate(paragraphs):
            group = f"{article['title']}/{index}"
            answerable = [q for q in paragraph["qas"] if not q["is_impossible"] and q["answers"]]
            impossible = [q for q in paragraph["qas"] if q["is_impossible"]]
            if in_dev_half("squad", group) != dev_half or not answerable or len(paragraphs) < 3:
                continue
            others = [paragraphs[(index + step) % len(paragraphs)]["context"] for step in (1, 2)]
            asked = answerable[hashlib.sha256(f"{SPLIT_SEED}:{group}".encode()).digest()[0] % len(answerable)]  # crowd workers asked in reading order: the first question is mostly about the first sentence
            rows.append({
                "id": f"squad/{group}", "context": paragraph["context"], "others": others,
                "question": asked["question"], "answer_start": asked["answers"][0]["answer_start"],
                "impossible": impossible[0]["question"] if impossible else None,
            })
    rows.sort(key=lambda r: hashlib.sha256(f"{SPLIT_SEED}:{r['id']}".encode()).hexdigest())
    if limit and limit < len(rows):
        rows = [rows[i * len(rows) // limit] for i in range(limit)]
    return rows


def answer_sentence(context: str, offset: int) -> int:
    """Which pysbd sentence of `context` holds the character at `offset` (SQuAD's answer span)."""
    cursor = 0
    sentences = split_sentences(context)
    for index, sentence in enumerate(sentences):
        start = context.find(sentence, cursor)
        if start >= 0:
            cursor = start + len(sentence)
            if offset < cursor:
                return index
    return len(sentences) - 1


def sentences(row: Mapping[str, Any]) -> list[str]:
    """The units context_relevance scores for a row: every sentence of every retrieved context, in order."""
    return [s for context in row["retrieved_contexts"] for s in split_sentences(context)]


def same_sentence(a: str, b: str) -> bool:
    """pysbd and HotpotQA split a few sentences differently; containment counts as the same sentence."""
    a, b = a.strip(), b.strip()
    return a == b or (len(a) > 20 and a in b) or (len(b) > 20 and b in a)


def question_shapes(row: Mapping[str, Any]) -> dict[str, list[list[str]]]:
    """A HotpotQA question as the shapes of retrieval users have: its 10 paragraphs; its two gold
    paragraphs and the first distractor (source order); each gold paragraph alone; and, with
    nothing that answers, the distractors alone and the first distractor alone."""
    contexts = row["retrieved_contexts"]
    gold = [i for i, c in enumerate(contexts) if any(same_sentence(s, g) for s in sentences({"retrieved_contexts": [c]}) for g in row["gold_sentences"])]
    others = [i for i in range(len(contexts)) if i not in gold]
    pick = lambda indices: [contexts[i] for i in indices]  # noqa: E731
    return {
        "10": [contexts],
        "3": [pick(sorted([*gold, others[0]]))],
        "1": [[contexts[i]] for i in gold],
        "10 without gold": [pick(others)],
        "1 without gold": [pick(others[:1])],
    }


def parse_limits(text: str) -> dict[str, int]:
    """A --limit value: "80" -> every task 80 rows; "attribution=300,recall=80" -> per task ("*": the rest)."""
    if "=" not in text:
        return {"*": int(text)}
    return {task.strip(): int(n) for task, n in (part.split("=", 1) for part in text.split(","))}
