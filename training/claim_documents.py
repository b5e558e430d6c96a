"""Claims against long documents (Check-COVID, Citation-Integrity, SummEdits, Factcheck-GPT) as the
verifier's attribution pairs, and the test split's claims as whole samples.

Why: the verifier ranks SciFact claims against their abstracts at chance and WiCE claims against
web pages barely above it (shared/VERIFIER.md), because none of its rows was a claim checked
against a scientific abstract, a cited paper's passage, an edited summary of a long document or a
web page. These four sources are of that kind (training/DATA.md: repositories, commits, licences).

Labels: 1 only where the source says the document supports the claim (Check-COVID SUPPORT,
Citation-Integrity SUPPORT, SummEdits consistent, Factcheck-GPT "completely-support"); refuted,
not enough information, partly supported, irrelevant and inconsistent are 0. Check-COVID's
not-enough-info claims are copies of its SUPPORT and REFUTE claims paired with one sentence of the
same abstract that does not settle them: against the whole abstract they are their copy's label,
so they are used only against that sentence (a "pair" row) and are never a whole sample.

Windows: a document is cut as the runtime cuts it (statement_windows.py) and a statement is paired
with the window sharing most of its words; Check-COVID annotates its evidence sentences, and there
the window must hold them all (a supported claim whose evidence no single window holds is not
used). Caveat, as for news: elsewhere a supported claim may need two windows, and its row then says
the best one supports it. A claim of several sentences (SummEdits' summaries) that is supported
gives one row per sentence; one that is not gives one row for the only sentence no supported
summary of the same document has, else one row for the whole claim when it fits the verifier's
statement budget uncut, else none.

Groups: documents that share text (SHARED_SEQUENCES 8-word sequences, as news_documents.py
compares articles) are one group whatever their source, so a cited paper, an abstract found twice
(preprint and journal), or a web page several claims cite lands on one side of the split.

SciFact is evaluation only (shared/data): a claim equal to a SciFact claim of shared/data or sharing
an 8-word sequence with one is dropped, and so is every claim of a group with a document sharing
SHARED_SEQUENCES 8-word sequences with a SciFact abstract there.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gather_sources import SUMMEDITS_DOMAINS
from news_documents import shingles
from prepare_verifier_data import json_lines
from splits import split_of
from statement_windows import most_shared, window_ranges

from localeval.data.text import split_sentences
from localeval.verifier.pairs import FIRST_TOKENS

FAMILY = "claims"  # one hash family: a document two sources share is one group
# Two documents share text when they have this many 8-word sequences in common (a run of at least
# 12 words): a copied clause, where stock phrases ("the aim of this study was to investigate the",
# two sequences) are not.
SHARED_SEQUENCES = 5
CHECK_COVID_LABELS = {"SUPPORT": 1, "REFUTE": 0}  # NOTENOUGHINFO: against its one sentence only (the docstring)
CITINT_LABELS = {"SUPPORT": 1, "REFUTE": 0}  # no evidence at all: the passage does not support the claim (0)
FACTCHECK_LABELS = {"completely-support": 1, "partially-support": 0, "refute": 0, "irrelevant": 0}
CITATION_MARKER = re.compile(r"<\|\w+\|>")
MARK = "\x00"  # where a citation marker was, while the text around it is tidied
MIN_CLAIM_WORDS = 4  # fewer is a fragment, not a claim (Citation-Integrity's "Chen et al.." once its marker is gone)
MIN_DOCUMENT_WORDS = 12  # fewer is a page that did not load, not evidence (Factcheck-GPT's "Google LLC", "Try again Please enable Javascript...")


@dataclass(frozen=True)
class Claim:
    """One labelled claim against one document, as its source gives it. `key` names the source's
    own unit (an abstract, a cited article, a summarised document, a claim's web evidence) that
    groups start from; `evidence` are the document's sentences the source marks as deciding the
    label; `only_against` is set when the label holds against that text only, not the document."""

    source: str
    key: str
    claim: str
    document: str
    label: int
    evidence: tuple[str, ...] = ()
    only_against: str | None = None


@dataclass(frozen=True)
class Pair:
    """One attribution row: a statement of a claim against the window it is read in."""

    statement: str
    window: str
    label: int
    source: str
    group: str
    split: str
    level: str


def normalised(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


# --- the sources ---------------------------------------------------------------------------------

def check_covid(folder: Path) -> Iterator[Claim]:
    """Check-COVID's news claims against the CORD-19 abstract (title, blank line, sentences) each
    was checked on; the label's evidence sentences are kept so the row's window holds them."""
    corpus = {item["cord_id"]: item for item in json_lines(folder / "corpus.json")}
    for split in ("train", "dev", "test"):
        for kind in ("composed", "extracted"):
            for item in json_lines(folder / f"{split}_{kind}.json"):
                paper = corpus[item["cord_id"]]
                document = f"{paper['title'].strip()}\n\n{' '.join(s.strip() for s in paper['abstract'])}"
                evidence = tuple(paper["abstract"][e["sent_index"]].strip() for e in item["evidence_set"])
                if item["label"] in CHECK_COVID_LABELS:
                    yield Claim("checkcovid", f"checkcovid:{item['cord_id']}", item["claim"], document, CHECK_COVID_LABELS[item["label"]], evidence)
                else:
                    yield Claim("checkcovid", f"checkcovid:{item['cord_id']}", item["claim"], document, 0, only_against=" ".join(evidence))


def strip_citation_markers(text: str) -> str:
    """A citing sentence without Citation-Integrity's markers (<|cit|>, <|multi_cit|>,
    <|other_cit|>), and without the brackets and separators a marker leaves empty, as a reader
    would quote it. Only text beside a marker changes ("(-)-epicatechin" stays)."""
    text = CITATION_MARKER.sub(MARK, text)
    text = re.sub(rf"\s*[\[(]\s*{MARK}(?:\s*[,;]\s*{MARK})*\s*[\])]", "", text)  # a bracket of markers only
    text = re.sub(rf"{MARK}\s*[,;]\s*|\s*[,;]\s*{MARK}", "", text)  # a marker in a list
    return re.sub(rf"\s*{MARK}", "", text).strip()


def citation_integrity(folder: Path) -> Iterator[Claim]:
    """Citation-Integrity (jedick's copy, which holds its corpus): a biomedical citing sentence
    against the passage of the cited paper annotators chose (the copy's `abstract`: five sentences,
    the evidence as a whole; its sentence indices point at the first one only, so they are not
    used). A cited paper's passages share a thousand block of ids: that block is the key."""
    corpus = {item["doc_id"]: " ".join(s.strip() for s in item["abstract"]) for item in json_lines(folder / "corpus.jsonl")}
    for split in ("train", "dev", "test"):
        for item in json_lines(folder / f"claims_{split}.jsonl"):
            (cited,) = item["cited_doc_ids"]
            labels = {CITINT_LABELS[r["label"]] for found in item["evidence"].values() for r in found}
            yield Claim("citint", f"citint:{cited // 1000}", strip_citation_markers(item["claim"]), corpus[cited], min(labels, default=0))


def summedits(folder: Path) -> Iterator[Claim]:
    """SummEdits: each edited summary against its document, consistent (1) or not (0); only the
    domains gather_sources.py takes (a stray file of a non-commercial domain is not read)."""
    for path in (folder / f"{domain}.json" for domain in sorted(SUMMEDITS_DOMAINS)):
        for item in json.loads(path.read_text(encoding="utf-8")):
            key = "summedits:" + hashlib.sha256(normalised(item["doc"]).encode()).hexdigest()[:16]
            yield Claim(f"summedits_{path.stem}", key, item["summary"], item["doc"], int(item["label"]))


def factcheck_gpt(path: Path) -> Iterator[Claim]:
    """Factcheck-GPT's claims of ChatGPT answers against each web passage retrieved for them;
    only "completely-support" is support. Keyed by the claim (shared passages join claims' groups)."""
    for item in json_lines(path):
        key = "factcheck_gpt:" + hashlib.sha256(normalised(item["claim"]).encode()).hexdigest()[:16]
        yield Claim("factcheck_gpt", key, item["claim"], item["evidence"], FACTCHECK_LABELS[item["stance"]])


# --- groups and SciFact ----------------------------------------------------------------------------

def link_groups(claims: Iterable[Claim]) -> dict[str, str]:
    """Each key's group: keys whose documents share SHARED_SEQUENCES 8-word sequences are joined
    (union-find), and a group is named by its smallest key, whatever order the sources come in."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    owners: dict[str, set[str]] = defaultdict(set)  # 8-word sequence -> keys holding it
    seen: set[tuple[str, str]] = set()
    for claim in claims:
        root(claim.key)
        if (claim.key, claim.document) not in seen:
            seen.add((claim.key, claim.document))
            for gram in shingles(claim.document):
                owners[gram].add(claim.key)
    shared: Counter[tuple[str, str]] = Counter()
    for keys in owners.values():
        ordered = sorted(keys)
        shared.update((a, b) for i, a in enumerate(ordered) for b in ordered[i + 1:])
    for (a, b), count in shared.items():
        if count >= SHARED_SEQUENCES:
            ra, rb = root(a), root(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    return {key: root(key) for key in parent}


class SciFactFilter:
    """shared/data's SciFact claims and abstracts (evaluation only), to find training text that
    repeats them."""

    def __init__(self, claims: Iterable[str], abstracts: Iterable[str]) -> None:
        self.claims = {normalised(c) for c in claims}
        self.claim_sequences = {gram for c in claims for gram in shingles(c)}
        self.abstract_sequences: dict[str, set[int]] = defaultdict(set)
        for number, abstract in enumerate(abstracts):
            for gram in shingles(abstract):
                self.abstract_sequences[gram].add(number)

    def claim_overlaps(self, claim: str) -> bool:
        """The claim is a SciFact claim or shares an 8-word sequence with one."""
        return normalised(claim) in self.claims or not shingles(claim).isdisjoint(self.claim_sequences)

    def document_overlaps(self, document: str) -> bool:
        """The document shares SHARED_SEQUENCES 8-word sequences with one SciFact abstract."""
        hits = Counter(n for gram in shingles(document) for n in self.abstract_sequences.get(gram, ()))
        return bool(hits) and max(hits.values()) >= SHARED_SEQUENCES


def scifact_filter(shared: Path) -> SciFactFilter:
    """The SciFact claims and abstracts of shared/data (README.md there): attribution_dev.jsonl's
    scifact rows (claim, context = title and abstract) and retrieval_dev.jsonl (claims as
    user_input, abstracts as retrieved and reference contexts)."""
    claims: list[str] = []
    abstracts: list[str] = []
    for item in json_lines(shared / "attribution_dev.jsonl"):
        if item["source"] == "scifact":
            claims.append(item["claim"])
            abstracts.append(item["context"])
    for item in json_lines(shared / "retrieval_dev.jsonl"):
        claims.append(item["user_input"])
        abstracts += [*item["retrieved_contexts"], *item["reference_contexts"]]
    return SciFactFilter(claims, abstracts)


def kept_claims(claims: list[Claim], groups: dict[str, str], scifact: SciFactFilter, counts: Counter[str]) -> list[Claim]:
    """The claims that are claims (MIN_CLAIM_WORDS), against text that is a document
    (MIN_DOCUMENT_WORDS), and that neither SciFact filter drops (counted per source)."""
    tainted = {groups[c.key] for c in claims if scifact.document_overlaps(c.document)}
    for group in sorted(tainted):
        counts[f"claims: group {group} shares text with a SciFact abstract, dropped"] += 1
    kept = []
    for claim in claims:
        if len(normalised(claim.claim).split()) < MIN_CLAIM_WORDS:
            counts[f"{claim.source}: fewer than {MIN_CLAIM_WORDS} words, not a claim"] += 1
        elif len(normalised(claim.document).split()) < MIN_DOCUMENT_WORDS:
            counts[f"{claim.source}: document of fewer than {MIN_DOCUMENT_WORDS} words, not evidence"] += 1
        elif groups[claim.key] in tainted:
            counts[f"{claim.source}: claims of a group sharing text with a SciFact abstract, dropped"] += 1
        elif scifact.claim_overlaps(claim.claim):
            counts[f"{claim.source}: claims repeating a SciFact claim, dropped"] += 1
        else:
            kept.append(claim)
    return kept


# --- pairs and whole samples ------------------------------------------------------------------------

def _statements(claim: Claim, supported: set[tuple[str, str]], tokenizer: Any) -> list[tuple[str, str]] | None:
    """(statement, level) rows of one claim, or None when an unsupported claim cannot be cut
    soundly (the module docstring)."""
    if claim.only_against is not None:
        return [(claim.claim.strip(), "pair")]
    sentences = split_sentences(claim.claim)
    if claim.label:
        return [(s, "sentence") for s in sentences]
    unsupported = [s for s in sentences if (claim.document, normalised(s)) not in supported]
    if len(unsupported) == 1:
        return [(unsupported[0], "sentence")]
    if len(sentences) == 1 or len(tokenizer.encode(claim.claim)) <= FIRST_TOKENS:
        return [(claim.claim.strip(), "sentence" if len(sentences) == 1 else "summary")]
    return None


def claim_pairs(claims: list[Claim], groups: dict[str, str], tokenizer: Any, budget: int, counts: Counter[str]) -> list[Pair]:
    """The attribution pairs of every claim: the same statement against the same text is kept once,
    and not at all when it is labelled both ways."""
    supported = {(c.document, normalised(s)) for c in claims if c.label and c.only_against is None for s in split_sentences(c.claim)}
    found: dict[tuple[str, str], list[tuple[Claim, str, str]]] = {}
    for claim in claims:
        statements = _statements(claim, supported, tokenizer)
        if statements is None:
            counts[f"{claim.source}: not supported and longer than the statement budget, not used"] += 1
            continue
        for statement, level in statements:
            against = claim.only_against if claim.only_against is not None else claim.document
            found.setdefault((against, normalised(statement)), []).append((claim, statement, level))
    units_of: dict[str, tuple[list[str], list[int]]] = {}
    pairs: list[Pair] = []
    for (against, _), copies in found.items():
        claim, statement, level = copies[0]
        if len({c.label for c, _, _ in copies}) > 1:
            counts[f"{claim.source}: the same statement against the same text labelled both ways, dropped"] += 1
            continue
        if len(copies) > 1:
            counts[f"{claim.source}: duplicate statements merged"] += len(copies) - 1
        group = groups[claim.key]
        if claim.only_against is not None:
            pairs.append(Pair(statement, against, 0, claim.source, group, split_of(FAMILY, group), level))
            continue
        if against not in units_of:
            units = split_sentences(against)
            units_of[against] = (units, [len(tokenizer.encode(u)) + 1 for u in units])
        units, lengths = units_of[against]
        windows = window_ranges(statement, units, lengths, budget, tokenizer)
        holding = [w for w in windows if all(normalised(e) in normalised(" ".join(units[i] for i in w)) for e in claim.evidence)]
        if not holding and claim.label:
            counts[f"{claim.source}: supported, but no window holds all its evidence sentences, not used"] += 1
            continue
        window = most_shared(statement, units, holding or windows)
        pairs.append(Pair(statement, window, claim.label, claim.source, group, split_of(FAMILY, group), level))
    return pairs


def whole_samples(claims: list[Claim], groups: dict[str, str], counts: Counter[str], split: str) -> list[dict[str, Any]]:
    """One split's claims whole, in the metric's shape (statement, contexts: the whole document,
    label): a claim whose label holds against the whole document, once, and not when labelled both ways."""
    found: dict[tuple[str, str], list[Claim]] = {}
    for claim in claims:
        if claim.only_against is None and split_of(FAMILY, groups[claim.key]) == split:
            found.setdefault((claim.document, normalised(claim.claim)), []).append(claim)
    samples = []
    for copies in found.values():
        claim = copies[0]
        if len({c.label for c in copies}) > 1:
            counts[f"{claim.source}: {split} sample labelled both ways, not a sample"] += 1
            continue
        samples.append({"source": claim.source, "group": groups[claim.key], "statement": claim.claim.strip(), "contexts": [claim.document], "label": claim.label})
    return samples


def read_claims(folder: Path) -> list[Claim]:
    """Every claim of the four sources in the folder gather_sources.py writes, in a fixed order."""
    return [*check_covid(folder / "checkcovid"), *citation_integrity(folder / "citint"), *summedits(folder / "summedits"),
            *factcheck_gpt(folder / "factcheck_gpt" / "claim_evidence_stance.jsonl")]


def claim_documents(folder: Path, shared: Path, tokenizer: Any, budget: int, counts: Counter[str]) -> tuple[list[Pair], dict[str, list[dict[str, Any]]]]:
    """The pairs of the four sources, and the validation and test splits' whole samples (what a
    statement table may be fitted on, and the sealed figures), SciFact filtered out."""
    claims = read_claims(folder)
    groups = link_groups(claims)
    kept = kept_claims(claims, groups, scifact_filter(shared), counts)
    counts["claims: groups (documents joined by shared text)"] = len({groups[c.key] for c in kept})
    return claim_pairs(kept, groups, tokenizer, budget, counts), {split: whole_samples(kept, groups, counts, split) for split in ("validation", "test")}
