"""training/claim_documents.py: claims against long documents as the verifier's rows (issue 48).
Only support is label 1 ("partially-support" is not), Check-COVID's not-enough-info claims are
read only against their one sentence, text that repeats shared/data's SciFact is dropped, a
document's rows never straddle splits, and a window must hold the evidence a source annotates.
Every input here is made up: no dataset is copied."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))

import claim_documents as cd  # noqa: E402


class WordTokenizer:
    """One token per word: enough to cut a document into windows."""

    def encode(self, text: str) -> list[str]:
        return text.split()


def write_lines(path: Path, items: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")


def pairs_of(claims: list[cd.Claim], budget: int = 40) -> tuple[list[cd.Pair], Counter[str]]:
    counts: Counter[str] = Counter()
    return cd.claim_pairs(claims, cd.link_groups(claims), WordTokenizer(), budget, counts), counts


def test_only_complete_support_is_label_one(tmp_path: Path) -> None:
    stances = ["completely-support", "partially-support", "refute", "irrelevant"]
    write_lines(tmp_path / "stance.jsonl", [{"claim": f"The lighthouse was painted {s} in spring.", "evidence": "A page about a lighthouse.", "stance": s}
                                            for s in stances])
    assert [c.label for c in cd.factcheck_gpt(tmp_path / "stance.jsonl")] == [1, 0, 0, 0]


def test_not_enough_info_is_read_against_its_sentence_only(tmp_path: Path) -> None:
    folder = tmp_path / "checkcovid"
    write_lines(folder / "corpus.json", [{"cord_id": "p1", "title": "Masks in a small town", "abstract": [
        "The town handed out masks in May.", "Cases fell by half in June after the masks."]}])
    claim = "Cases fell by half after the town handed out masks."
    write_lines(folder / "train_composed.json", [
        {"claim": claim, "cord_id": "p1", "label": "SUPPORT", "evidence_set": [{"sent_index": 1}]},
        {"claim": claim, "cord_id": "p1", "label": "NOTENOUGHINFO", "evidence_set": [{"sent_index": 0}]}])
    for name in ("train_extracted", "dev_composed", "dev_extracted", "test_composed", "test_extracted"):
        write_lines(folder / f"{name}.json", [])
    support, nei = cd.check_covid(folder)
    assert (support.label, support.evidence, support.only_against) == (1, ("Cases fell by half in June after the masks.",), None)
    assert (nei.label, nei.only_against) == (0, "The town handed out masks in May.")
    pairs, _ = pairs_of([support, nei], budget=200)
    assert {(p.label, p.window, p.level) for p in pairs if p.label == 0} == {(0, "The town handed out masks in May.", "pair")}
    groups = {c.key: "g" for c in (support, nei)}
    whole = [s for split in ("train", "validation", "test") for s in cd.whole_samples([support, nei], groups, Counter(), split)]
    assert [s["label"] for s in whole] == [1]  # the supported claim in its group's split; the one-sentence copy never whole


def test_citation_markers_are_removed_and_no_evidence_is_unsupported(tmp_path: Path) -> None:
    assert cd.strip_citation_markers("Bees dance to point at food [<|cit|>, 12] and rest (<|multi_cit|>).") == "Bees dance to point at food [12] and rest."
    assert cd.strip_citation_markers("(-)-Epicatechin helps (<|other_cit|>; Smith et al., <|cit|>)") == "(-)-Epicatechin helps (Smith et al.)"
    folder = tmp_path / "citint"
    write_lines(folder / "corpus.jsonl", [{"doc_id": 7001, "abstract": ["Bees dance.", "They rest."]}, {"doc_id": 7002, "abstract": ["Ants march."]}])
    write_lines(folder / "claims_train.jsonl", [
        {"claim": "Bees dance to point at food <|cit|>.", "evidence": {"7001": [{"sentences": [0], "label": "SUPPORT"}]}, "cited_doc_ids": [7001]},
        {"claim": "Ants march in a straight line <|cit|>.", "evidence": {}, "cited_doc_ids": [7002]}])
    for name in ("claims_dev", "claims_test"):
        write_lines(folder / f"{name}.jsonl", [])
    claims = list(cd.citation_integrity(folder))
    assert [(c.claim, c.label, c.key) for c in claims] == [("Bees dance to point at food.", 1, "citint:7"), ("Ants march in a straight line.", 0, "citint:7")]


def test_scifact_claims_and_documents_are_dropped() -> None:
    abstract = "The river otter eats crayfish and small fish in the cold streams of the northern forest during every winter month."
    scifact = cd.SciFactFilter(["Otters prefer crayfish to trout."], [abstract])
    assert scifact.claim_overlaps("otters PREFER crayfish to trout")
    assert not scifact.claim_overlaps("Otters prefer trout.")
    copied = "Field notes. " + abstract[:80] + " Later the team counted nests."
    stock = "The aim of this study was to investigate the nests of herons."
    assert scifact.document_overlaps(copied) and not scifact.document_overlaps(stock)
    claims = [cd.Claim("citint", "citint:1", "Otters eat crayfish in winter streams.", copied, 1),
              cd.Claim("citint", "citint:1", "The team counted nests later on.", "Another passage of the same paper, which the first one does not copy.", 1),
              cd.Claim("factcheck_gpt", "fc:1", "Otters prefer crayfish to trout.", stock, 0),
              cd.Claim("factcheck_gpt", "fc:2", "Herons build nests in reeds.", stock, 0)]
    counts: Counter[str] = Counter()
    kept = cd.kept_claims(claims, cd.link_groups(claims), scifact, counts)
    assert [c.claim for c in kept] == ["Herons build nests in reeds."]
    assert counts["citint: claims of a group sharing text with a SciFact abstract, dropped"] == 2
    assert counts["factcheck_gpt: claims repeating a SciFact claim, dropped"] == 1
    assert cd.kept_claims([cd.Claim("factcheck_gpt", "fc:3", "Herons build nests in reeds.", "Google LLC", 0)], {"fc:3": "fc:3"}, scifact, counts) == []


def test_documents_sharing_text_are_one_group_on_one_side() -> None:
    page = "The museum opened its new wing in March and the wing holds two hundred paintings from the old collection of the city."
    claims = [cd.Claim("factcheck_gpt", f"fc:{n}", f"Claim number {n} says the museum opened a wing.", page, n % 2) for n in range(40)]
    claims += [cd.Claim("checkcovid", "checkcovid:x", "A different claim about the museum wing.", "Preface. " + page, 1)]
    groups = cd.link_groups(claims)
    assert len(set(groups.values())) == 1
    pairs, _ = pairs_of(claims)
    assert len({p.split for p in pairs}) == 1 and len({p.group for p in pairs}) == 1


def test_an_unsupported_summary_is_cut_to_its_edited_sentence() -> None:
    document = "Ann met Bob at the station. They drove to the farm. The farm sells apples and pears. Bob bought ten apples."
    consistent = cd.Claim("summedits_news", "s:1", "Ann met Bob. Bob bought ten apples.", document, 1)
    edited = cd.Claim("summedits_news", "s:1", "Ann met Bob. Bob bought ten pears.", document, 0)
    pairs, _ = pairs_of([consistent, edited], budget=20)
    assert sorted((p.statement, p.label, p.level) for p in pairs) == [
        ("Ann met Bob.", 1, "sentence"), ("Bob bought ten apples.", 1, "sentence"), ("Bob bought ten pears.", 0, "sentence")]
    assert all(len(p.window.split()) + len(p.statement.split()) + 3 <= 20 for p in pairs)


def test_summedits_reads_only_the_domains_gathered(tmp_path: Path) -> None:
    """podcast (Spotify Podcast Dataset, non-commercial) and samsum (CC BY-NC-ND) are not gathered,
    and a stray file of theirs is not read either."""
    for domain in (*cd.SUMMEDITS_DOMAINS, "podcast", "samsum"):
        item = {"doc": f"A made-up {domain} document of a few words.", "summary": f"A {domain} summary.", "label": 1}
        (tmp_path / f"{domain}.json").write_text(json.dumps([item]), encoding="utf-8")
    sources = {claim.source for claim in cd.summedits(tmp_path)}
    assert sources == {f"summedits_{domain}" for domain in cd.SUMMEDITS_DOMAINS}
    assert not {"podcast", "samsum"} & set(cd.SUMMEDITS_DOMAINS)


def test_the_window_holds_the_annotated_evidence() -> None:
    document = "Alpha beta gamma delta. Masks were worn by staff. The clinic closed early. Masks reduced infections among staff by a third."
    evidence = ("Masks reduced infections among staff by a third.",)
    claim = cd.Claim("checkcovid", "checkcovid:p", "Masks were worn by staff and reduced infections.", document, 1, evidence)
    (pair,), _ = pairs_of([claim], budget=22)
    assert evidence[0] in pair.window
    spread = cd.Claim("checkcovid", "checkcovid:p", claim.claim, document, 1, ("Alpha beta gamma delta.", evidence[0]))
    pairs, counts = pairs_of([spread], budget=22)
    assert pairs == [] and counts["checkcovid: supported, but no window holds all its evidence sentences, not used"] == 1


def test_a_statement_labelled_both_ways_is_dropped_and_a_repeat_kept_once() -> None:
    claims = [cd.Claim("factcheck_gpt", "fc:1", "The bridge opened in 1932.", "The bridge opened in 1932 after four years.", label) for label in (1, 0)]
    claims.append(cd.Claim("factcheck_gpt", "fc:2", "The tower is tall.", "A page on the tower.", 0))
    claims.append(cd.Claim("factcheck_gpt", "fc:2", "The tower is tall!", "A page on the tower.", 0))
    pairs, counts = pairs_of(claims)
    assert [(p.statement, p.label) for p in pairs] == [("The tower is tall.", 0)]
    assert counts["factcheck_gpt: the same statement against the same text labelled both ways, dropped"] == 1
