"""`compare --markdown`: a pull-request comment that fits. The verdict is its first line, the
samples that moved are folded, each sample's contexts are quoted once, and the whole stays under
GitHub's limit whatever the run's size, saying what it left out (real `localeval score` runs of
the string and id metrics: no judge)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from localeval.reports.comparison_markdown import MAX_MARKDOWN_CHARS
from tests.conftest import invoke

METRICS = ["nonllm_context_recall", "nonllm_context_precision", "id_context_recall", "id_context_precision"]
WORDS = "the river city north south bridge museum founded century king queen war treaty island mountain".split()


def _passage(sample: int, index: int) -> str:
    draw = random.Random(sample * 1000 + index)
    return f"Passage {sample}-{index}: " + " ".join(draw.choice(WORDS) for _ in range(60)) + "."


def _runs(tmp_path: Path, count: int) -> tuple[Path, Path]:
    """`count` samples scored twice: the candidate lost a gold context (another one entered, its
    answer changed at the end) in 30% of them, reversed the contexts in 10%, kept only the gold
    ones in 10%."""
    draw = random.Random(7)
    base, candidate = [], []
    for k in range(count):
        contexts = [_passage(k, i) for i in range(4)]
        ids = [f"c{k}-{i}" for i in range(4)]
        row = {
            "id": f"q{k}", "user_input": f"Question {k}?", "retrieved_contexts": contexts, "reference_contexts": contexts[:2],
            "retrieved_context_ids": ids, "reference_context_ids": ids[:2], "response": "A long answer " + " ".join(WORDS * 3) + " in Paris.",
        }
        changed = dict(row)
        roll = draw.random()
        if roll < 0.3:
            changed.update(retrieved_contexts=[_passage(k, 9), *contexts[2:], contexts[1]], retrieved_context_ids=[f"c{k}-9", *ids[2:], ids[1]])
            changed["response"] = row["response"].replace("Paris.", "Lyon, it's \"said\".")
        elif roll < 0.4:
            changed.update(retrieved_contexts=contexts[::-1], retrieved_context_ids=ids[::-1])
        elif roll < 0.5:
            changed.update(retrieved_contexts=contexts[:2], retrieved_context_ids=ids[:2])
        base.append(row)
        candidate.append(changed)
    paths = []
    for name, rows in (("base", base), ("candidate", candidate)):
        data = tmp_path / f"{name}.jsonl"
        data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        out = tmp_path / f"{name}.results.jsonl"
        assert invoke(["score", str(data), *[a for m in METRICS for a in ("-m", m)], "-o", str(out), "-q", "--no-timing"]).exit_code == 0
        paths.append(out)
    return paths[0], paths[1]


def test_a_400_sample_comparison_fits_a_comment_and_names_the_verdict_first(tmp_path):
    base, candidate = _runs(tmp_path, 400)
    comments = {}
    for show in ("10", "400"):
        md = tmp_path / f"c{show}.md"
        result = invoke(["compare", str(base), str(candidate), "--show", show, "--max-drop", "id_context_recall=0.02", "--markdown", str(md), "-q"])
        assert result.exit_code == 1, result.output
        comments[show] = md.read_text(encoding="utf-8")
        assert len(comments[show]) < MAX_MARKDOWN_CHARS
        first = comments[show].splitlines()[0]
        assert first.startswith("**localeval compare**: 4 of 4 metrics worse: nonllm_context_recall -0.") and first.endswith("; gate failed: id_context_recall")
        assert comments[show].count("<details>") == comments[show].count("</details>")
    assert "_Left out" not in comments["10"]  # ten a list: it all fits
    # 400 a list does not: what was left out is said, and where the rest is
    assert "_Left out to keep this comment under 60,000 characters" in comments["400"] and "`localeval compare --json`" in comments["400"]
    table = [line for line in comments["10"].splitlines() if line.startswith("| nonllm_context_recall | 400 |")]
    assert len(table) == 1 and table[0].count(" | ") == 5  # six columns: what a comment shows without scrolling
    assert "with n = 400 and this spread, a drop smaller than 0.0" in comments["10"]


def test_each_samples_contexts_are_quoted_once_however_many_metrics_it_moved_in(tmp_path):
    base, candidate = _runs(tmp_path, 30)
    md = tmp_path / "c.md"
    assert invoke(["compare", str(base), str(candidate), "--markdown", str(md), "-q"]).exit_code == 0
    text = md.read_text(encoding="utf-8")
    entered = [line for line in text.splitlines() if "context entered at rank 1: 'Passage 1-9:" in line]
    assert len(entered) == 1  # q1 worsened on all four metrics: its new context is quoted once
    assert text.count("contexts and response: as under ") >= 3
    assert "response changed from character " in text and "in Lyon, it's \"said\"." in text  # where the answers differ, not their shared start


def test_a_header_of_thousands_of_setup_differences_still_fits(tmp_path):
    """A results file from anywhere: metric options by the thousand, all differing. The comment
    cuts its notes at a line and says the rest is in the JSON."""

    def results(name: str, value: str) -> Path:
        header = {"format": "localeval-results", "version": 1, "run": {"input": {"path": f"{name}.jsonl", "sha256": name}, "metrics": {"id_context_recall": {f"option{i}": value * 50 for i in range(3000)}}}}
        rows = [{"id": f"q{i}", "line": i + 1, "scores": {"id_context_recall": 1.0 if name == "base" or i % 2 else 0.0}, "details": {}, "errors": {}} for i in range(50)]
        path = tmp_path / f"{name}.results.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in [header, *rows]), encoding="utf-8")
        return path

    md = tmp_path / "c.md"
    assert invoke(["compare", str(results("base", "a")), str(results("candidate", "b")), "--markdown", str(md), "-q", "--show", "1000"]).exit_code == 0
    text = md.read_text(encoding="utf-8")
    assert len(text) <= MAX_MARKDOWN_CHARS and text.startswith("**localeval compare**: 1 of 1 metric worse: id_context_recall -0.500 (")
    assert "`--json` has them all" in text


def test_a_reason_with_quotes_reads_without_backslashes_in_the_comment_and_the_page(tmp_path):
    def results(name: str, attributed: int, reason: str) -> Path:
        header = {"format": "localeval-results", "version": 1, "run": {"input": {"path": "gone.jsonl", "sha256": name}, "metrics": {"faithfulness": {}}, "judge": None}}
        rows = [
            {"id": f"q{i}", "line": i + 1, "scores": {"faithfulness": 1.0 if i or attributed else 0.0},
             "details": {"faithfulness": {"statements": [{"statement": "Maria's sister is \"Ana\".", "attributed": 1 if i else attributed, "probability": 0.9, "reason": reason}]}}, "errors": {}}
            for i in range(4)
        ]
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in [header, *rows]), encoding="utf-8")
        return path

    base, candidate = results("base", 1, "context 1 names 'Ana'"), results("candidate", 0, "the contexts never mention 'maria' nor \"Ana\"")
    md, page = tmp_path / "c.md", tmp_path / "c.html"
    assert invoke(["compare", str(base), str(candidate), "--markdown", str(md), "--html", str(page), "-q"]).exit_code == 0
    comment, html = md.read_text(encoding="utf-8"), page.read_text(encoding="utf-8")
    assert "never mention 'maria' nor \"Ana\"" in comment and "\\'" not in comment and '\\"' not in comment
    assert "never mention &#x27;maria&#x27; nor &quot;Ana&quot;" in html and "\\" not in html.split("</style>")[1].split("<script>")[0]
