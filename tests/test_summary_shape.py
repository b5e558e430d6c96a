"""The summary's outputs byte for byte: its JSON (what --summary-json writes, less the run's
provenance) and what the terminal table, Markdown, JUnit XML and the HTML page make of it, for
runs that reach every figure (tokens, thresholds, NaN, errors, unreadable lines, a binned median,
labels with ambiguous and unknown ids, each gate mode, too few samples, nothing scored).

The expected files in tests/data/summary_shape/ were written by the summary before it became a
typed model; a change to the model or a writer that moves a byte shows here."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest

from localeval.data.results import ResultRow, dumps_json
from localeval.reports.html import BINS, worst_rows, write_html
from localeval.reports.junit import write_junit
from localeval.reports.markdown import write_markdown
from localeval.reports.table import summary_table
from localeval.stats.human_scores import read_gold
from localeval.stats.summary import Summary

EXPECTED = Path(__file__).parent / "data" / "summary_shape"
METRICS = ["context_recall", "faithfulness", "id_context_recall"]


def _rows(count: int, seed: int) -> list[ResultRow]:
    """`count` rows from a fixed seed: scores on a coarse grid, some NaN, some errors, one
    unreadable line, judge usage on faithfulness."""
    draw = random.Random(seed)
    rows = []
    for line in range(1, count + 1):
        if line == 4:
            rows.append(ResultRow(line=line, id=f"s{line}", errors={"input": f"in.jsonl:{line}: not JSON"}))
            continue
        scores: dict[str, float | None] = {name: round(draw.random() * 8) / 8 for name in METRICS}
        errors = {}
        if line % 7 == 0:
            scores["faithfulness"] = None
            errors["faithfulness"] = "the judge's answer was not JSON"
        if line % 5 == 0:
            scores["id_context_recall"] = None  # NaN: undefined for the sample
        rows.append(
            ResultRow(
                line=line,
                id=f"s{line}",
                scores=scores,
                errors=errors,
                usage={"faithfulness": {"prompt_tokens": 100 + line, "completion_tokens": 7}},
                timing={"faithfulness": {"seconds": 0.25, "prompt_evaluated": 90}},
            )
        )
    rows.append(ResultRow(line=count + 1, id="s2", scores={name: 1.0 for name in METRICS}))  # a second sample with id s2
    return rows


def _labels(directory: Path, scored: list[ResultRow]) -> str:
    """A labels file (relative path: the summary names it) labelling context_recall on 14 samples
    as its score mostly says (so the metric narrows the interval), s2 among them, whose id two
    samples have; one id no sample has; and a context_relevance label for a metric these runs do
    not score."""
    score = {row.id: row.scores.get("context_recall") or 0.0 for row in scored}
    rows = [{"id": f"s{n}", "retrieved_contexts": ["c"], "statement": "s", "label": int((score.get(f"s{n}", 0.0) >= 0.5) != (n == 9))} for n in (1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)]
    rows.append({"id": "nobody", "retrieved_contexts": ["c"], "statement": "s", "label": 1})
    rows.append({"id": "s1", "user_input": "q", "retrieved_contexts": ["c"], "required": ["c"]})
    (directory / "labels.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return "labels.jsonl"


SCENARIOS = {
    "plain": dict(count=30, seed=1),
    "mean_gate": dict(count=30, seed=2, thresholds={"faithfulness": 0.5}, min_mean={"context_recall": 0.4, "id_context_recall": 0.9}),
    "below_gate": dict(count=30, seed=3, thresholds={"id_context_recall": 0.25}, min_mean={"context_recall": 0.5, "faithfulness": 0.3}, gate_on="fail-if-confidently-below"),
    "above_gate": dict(count=40, seed=4, min_mean={"context_recall": 0.2, "faithfulness": 0.5, "id_context_recall": 0.1}, gate_on="pass-if-confidently-above"),
    "few": dict(count=5, seed=5, thresholds={"context_recall": 0.1}, min_mean={"context_recall": 0.1, "faithfulness": 0.1}, gate_on="pass-if-confidently-above"),
    "labelled": dict(count=40, seed=6, labels=True, min_mean={"context_recall": 0.3}, gate_on="pass-if-confidently-above"),
    "labelled_mean": dict(count=40, seed=7, labels=True, thresholds={"context_recall": 0.5}),
    "few_labels": dict(count=8, seed=8, labels=True, min_mean={"context_recall": 0.3}, gate_on="fail-if-confidently-below"),
    "nothing": dict(count=0, seed=9, thresholds={"context_recall": 0.5}, min_mean={"faithfulness": 0.5}),
}


def _outputs(scenario: str, directory: Path) -> dict[str, str]:
    spec = dict(SCENARIOS[scenario])
    rows = _rows(spec.pop("count"), spec.pop("seed"))
    gold = read_gold(_labels(directory, rows)) if spec.pop("labels", False) else None
    summary = Summary(METRICS, spec.get("thresholds"), spec.get("min_mean"), gate_on=spec.get("gate_on", "mean"), gold=gold)
    for row in rows:
        summary.add(row)
    figures = summary.figures()
    outputs = {"json": dumps_json(figures.to_json_dict(), indent=2) + "\n", "txt": summary_table(figures) + "\n"}
    for suffix, write in (("md", write_markdown), ("xml", write_junit)):
        out = io.StringIO()
        write(out, iter(rows), figures)
        outputs[suffix] = out.getvalue()
    page = io.StringIO()
    shown, total = worst_rows(iter(rows), METRICS, 1000)
    write_html(page, shown, total, figures, {name: summary.distribution(name).histogram(BINS) for name in METRICS})
    outputs["html"] = page.getvalue()
    return outputs


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_summary_and_every_report_of_it_are_byte_identical(scenario, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for suffix, text in _outputs(scenario, tmp_path).items():
        expected = EXPECTED / f"{scenario}.{suffix}"
        assert text == expected.read_text(encoding="utf-8"), expected


def test_a_binned_median_says_how_close_it_is():
    summary = Summary(["m"])
    for line in range(1, 10_003):
        summary.add(ResultRow(line=line, id=line, scores={"m": line / 10_003}))
    assert dumps_json(summary.figures().to_json_dict(), indent=2) + "\n" == (EXPECTED / "binned.json").read_text(encoding="utf-8")
