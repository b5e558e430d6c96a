"""training/candidate_files.py: every script that makes a verifier file writes a candidate, never
the shipped file (replacing it is ship_verifier.py's deliberate step after a held-out comparison)."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))

import candidate_files  # noqa: E402

from localeval.verifier import SHIPPED_SHA256, shipped_path  # noqa: E402


def test_the_shipped_file_is_the_one_the_package_loads() -> None:
    assert candidate_files.SHIPPED.resolve() == shipped_path().resolve()


def test_a_candidate_is_never_written_over_the_shipped_file(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="is the shipped verifier"):
        candidate_files.write_candidate(candidate_files.SHIPPED, b"not weights")
    assert hashlib.sha256(candidate_files.SHIPPED.read_bytes()).hexdigest() == SHIPPED_SHA256
    out = tmp_path / "new" / "verifier.safetensors"
    assert candidate_files.write_candidate(out, b"weights") == hashlib.sha256(b"weights").hexdigest()
    assert out.read_bytes() == b"weights"
