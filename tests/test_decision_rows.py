"""training/decision_rows.py --logits-from: another verifier file is weighed beside the judge's
answers already written, which are copied untouched; the logits are the real verifier's, as a
fresh run would write them; a row whose sample is gone is refused, not silently dropped."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))

import decision_rows  # noqa: E402
from tune_cut import unit_logits  # noqa: E402

from localeval.verifier import load_verifier  # noqa: E402

SAMPLE = {"question": "Where was Ada Lovelace born?", "contexts": ["Ada Lovelace was born in London. She wrote about the Analytical Engine."],
          "source": "hotpotqa", "group": "g1", "shape": "1", "required": [0]}


def namespace(tmp_path: Path, rows: list[dict[str, object]]) -> argparse.Namespace:
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps(SAMPLE) + "\n", encoding="utf-8")
    written = tmp_path / "rows.jsonl"
    written.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return argparse.Namespace(task="relevance", samples=samples, rows=None, logits_from=written, out=tmp_path / "out.jsonl", file=Path("shipped"))


def test_the_judges_answers_are_kept_and_the_logits_are_the_files(tmp_path: Path) -> None:
    judged = {"key": decision_rows.sample_key(SAMPLE), "judge_probabilities": [0.9, 0.1], "judge_selected": [0], "verifier_logits": [0.0, 0.0]}
    args = namespace(tmp_path, [judged])
    verifier = load_verifier()
    decision_rows.relogit(args, verifier)
    (row,) = [json.loads(line) for line in args.out.read_text(encoding="utf-8").splitlines()]
    assert row == {**judged, "verifier_logits": [round(v, 4) for v, _ in unit_logits(verifier, [SAMPLE])[0]]}
    assert row["verifier_logits"] != [0.0, 0.0]


def test_a_row_whose_sample_is_gone_is_refused(tmp_path: Path) -> None:
    args = namespace(tmp_path, [{"key": "not-a-sample", "verifier_logits": [0.0]}])
    with pytest.raises(SystemExit, match="not among those read from"):
        decision_rows.relogit(args, load_verifier())
