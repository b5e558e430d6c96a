"""benchmarks/judge_cache.py's with_calibration_file: a candidate table is measured by the metric
itself (accuracy.py and verifier_accuracy.py --calibration), so the file is read as `localeval score
--calibration` reads it and replaces only the tables it names."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from judge_cache import with_calibration_file  # noqa: E402

from localeval.calibration.combination import CALIBRATION_FORMAT, CALIBRATION_VERSION  # noqa: E402
from localeval.metrics import create_metric  # noqa: E402


def test_the_file_replaces_the_tables_it_names_and_keeps_the_others(tmp_path: Path) -> None:
    catalog = {"relevance": {"intercept": -4.0, "weights": {"overlap": 1.0}}, "attribution": {"intercept": -1.0, "weights": {"judge": 0.7}}}
    candidate = {"intercept": -5.0, "weights": dict.fromkeys(create_metric("context_relevance", {}).calibration_features, 0.5)}
    path = tmp_path / "candidate.json"
    path.write_text(json.dumps({"format": CALIBRATION_FORMAT, "version": CALIBRATION_VERSION, "tables": {"relevance": candidate}}))
    assert with_calibration_file(catalog, path) == {"relevance": candidate, "attribution": catalog["attribution"]}
    assert with_calibration_file(catalog, None) == catalog


def test_a_bad_file_stops_the_benchmark_with_its_name_before_any_judge_call(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"tables": {}}))
    with pytest.raises(SystemExit, match="other.json: not a localeval calibration file"):
        with_calibration_file({}, path)
    short = tmp_path / "short.json"  # a table without a weight for every feature the metric reads
    short.write_text(json.dumps({"format": CALIBRATION_FORMAT, "version": CALIBRATION_VERSION, "tables": {"relevance": {"intercept": -5.0, "weights": {"overlap": 2.0}}}}))
    with pytest.raises(SystemExit, match="short.json: .*no weight for"):
        with_calibration_file({}, short)
