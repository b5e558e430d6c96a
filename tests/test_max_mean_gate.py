"""`--max-mean`: a gate on a lower-is-better metric's mean (noise_sensitivity), which a minimum
could not be (it would fail the clean runs and pass the noisy ones). It reads the figure
--threshold-on names on the other side of the interval, so the modes keep their sense for the
pipeline's quality; a maximum on a higher-is-better metric is refused, as a minimum on a
lower-is-better one is."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from conftest import CAPITALS, invoke

from localeval.data.results import ResultRow
from localeval.errors import ConfigError
from localeval.stats.summary import Summary

# A clean response is the reference (noise_sensitivity 0); a noisy one is the context's other fact,
# which the reference does not state (noise_sensitivity 1).
NOISY = 2  # the first two responses are noisy: the mean is 2 / 6


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The capitals scored once with the verifier: the data file and its results file. The tests
    gate them again with --resume, which scores nothing more and summarises every row."""
    folder = tmp_path_factory.mktemp("max_mean")
    rows: list[dict[str, Any]] = [
        {"id": f"q{n}", "user_input": "What is the capital?", "reference": reference, "retrieved_contexts": [f"{reference} {other}"],
         "response": other if n < NOISY else reference}
        for n, (reference, other) in enumerate(CAPITALS)
    ]
    data = folder / "capitals.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = folder / "capitals.results.jsonl"
    result = invoke(["score", str(data), "-m", "noise_sensitivity", "--verifier", "-o", str(out), "-q", "--no-timing"])
    assert result.exit_code == 0, result.output
    return data, out


def _gated(scored: tuple[Path, Path], tmp_path: Path, *gate: str) -> tuple[Any, dict[str, Any], str]:
    data, out = scored
    summary, markdown = tmp_path / "summary.json", tmp_path / "summary.md"
    result = invoke(["score", str(data), "-m", "noise_sensitivity", "--verifier", "-o", str(out), "--resume", "--no-timing",
                     "--summary-json", str(summary), "--markdown", str(markdown), *gate])
    figures = json.loads(summary.read_text(encoding="utf-8"))["metrics"]["noise_sensitivity"] if summary.exists() else {}
    return result, figures, markdown.read_text(encoding="utf-8") if markdown.exists() else ""


def test_a_noisy_run_fails_a_maximum_and_a_cleaner_one_passes_it(scored, tmp_path):
    """Mean 0.333: above a maximum of 0.2 (exit 1), within one of 0.5 (exit 0), and every report
    says it was a maximum."""
    failed, figures, markdown = _gated(scored, tmp_path, "--max-mean", "noise_sensitivity=0.2")
    assert figures["mean"] == pytest.approx(NOISY / len(CAPITALS)), figures
    assert failed.exit_code == 1, failed.output
    assert "noise_sensitivity mean 0.333 > 0.2 (the most it may be)" in failed.output
    assert figures["max_mean"] == 0.2 and figures["max_mean_on"] == "mean" and figures["gated_figure"] == "mean" and figures["mean_ok"] is False
    assert "min_mean" not in figures
    assert "| mean gate |" in markdown and "at most 0.200, read on the mean 0.333 (not met)" in markdown
    passed, figures, markdown = _gated(scored, tmp_path, "--max-mean", "noise_sensitivity=0.5")
    assert passed.exit_code == 0, passed.output
    assert "noise_sensitivity mean 0.333 <= 0.5 (the most it may be)" in passed.output and figures["mean_ok"] is True
    assert "at most 0.500, read on the mean 0.333 (ok)" in markdown


def test_the_config_file_sets_a_maximum_too(scored, tmp_path):
    config = tmp_path / "gates.toml"
    config.write_text("max_mean = { noise_sensitivity = 0.2 }\n", encoding="utf-8")
    result, figures, _ = _gated(scored, tmp_path, "--config", str(config))
    assert result.exit_code == 1 and figures["max_mean"] == 0.2 and figures["mean_ok"] is False, result.output


@pytest.mark.parametrize(
    ("mode", "figure", "side"),
    [("fail-if-confidently-below", "ci95_low", 0), ("pass-if-confidently-above", "ci95_high", 1)],
)
def test_the_interval_modes_read_the_other_bound_of_a_maximum(scored, tmp_path, mode, figure, side):
    """Six samples, mean 0.333, interval wide: fail-if-confidently-below gives the benefit of the
    doubt (fails only when the whole interval is above the maximum: its lower bound), and
    pass-if-confidently-above passes only when the whole interval is within it (its upper bound)."""
    result, figures, _ = _gated(scored, tmp_path, "--max-mean", "noise_sensitivity=0.3", "--threshold-on", mode)
    assert figures["gated_figure"] == figure and math.isclose(figures["gated_value"], figures["ci95"][side]), figures
    low, high = figures["ci95"]
    assert low < 0.3 < high  # the mean 0.333 is above the maximum; the interval straddles it
    assert result.exit_code == (0 if mode == "fail-if-confidently-below" else 1), result.output
    assert figures["mean_ok"] is (mode == "fail-if-confidently-below")


def test_a_maximum_on_a_higher_is_better_metric_is_refused_before_any_sample(scored, tmp_path):
    """A maximum on a higher-is-better metric is refused naming --min-mean; one on a misspelt name,
    as a gate for a metric the run does not score (not as higher-is-better)."""
    data, _ = scored
    out = tmp_path / "out.jsonl"
    result = invoke(["score", str(data), "-m", "id_context_recall", "--max-mean", "id_context_recall=0.5", "-o", str(out), "-q"])
    assert result.exit_code == 2 and "id_context_recall is higher-is-better" in result.output and "--min-mean id_context_recall=VALUE" in result.output, result.output
    assert not out.exists()
    misspelt = invoke(["score", str(data), "-m", "noise_sensitivity", "--verifier", "--max-mean", "noise_sensitivty=0.2", "-o", str(out), "-q"])
    assert misspelt.exit_code == 2 and "--max-mean noise_sensitivty: a gate for a metric that is not selected" in misspelt.output, misspelt.output
    assert not out.exists()


@pytest.mark.parametrize(("value", "words"), [("1.5", "max_mean"), ("nan", "max_mean"), ("x", "--max-mean noise_sensitivity: 'x' is not a number")])
def test_a_maximum_outside_0_to_1_is_refused_naming_the_gate(scored, tmp_path, value, words):
    data, _ = scored
    result = invoke(["score", str(data), "-m", "noise_sensitivity", "--verifier", "--max-mean", f"noise_sensitivity={value}", "-o", str(tmp_path / "out.jsonl"), "-q"])
    assert result.exit_code == 2 and words in result.output and "Traceback" not in result.output, result.output


def test_a_minimum_on_noise_sensitivity_points_to_the_maximum():
    with pytest.raises(ConfigError, match=r"--max-mean noise_sensitivity=VALUE"):
        Summary(["noise_sensitivity"], min_mean={"noise_sensitivity": 0.2})


def test_an_unscored_sample_fails_a_maximum_as_it_fails_a_minimum():
    """A sample the metric could not score may be the noisiest: the gate does not pass on the others."""
    summary = Summary(["noise_sensitivity"], max_mean={"noise_sensitivity": 0.5})
    summary.add(ResultRow(line=1, id="a", scores={"noise_sensitivity": 0.0}))
    summary.add(ResultRow(line=2, id="b", scores={"noise_sensitivity": None}, errors={"noise_sensitivity": "the judge failed"}))
    gate = summary.figures().metrics["noise_sensitivity"].gate
    assert gate is not None and gate.at_most and gate.value == 0.0 and not gate.ok and "1 of 2 samples could not be scored" in (gate.reason or "")
    assert not summary.figures().thresholds_met
