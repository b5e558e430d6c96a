"""Where the shipped verifier lives, and writing a candidate verifier file anywhere but there.

Every script that makes a verifier file (join_parts.py, average_weights.py, task_tower.py,
lab/splice_top_layers.py) makes a candidate: it is compared on the dev rows and the sealed split first and shipped
deliberately with ship_verifier.py, so none of them may overwrite the package's file in passing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from localeval.verifier import FILE_NAME

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "localeval" / "verifier" / FILE_NAME


def refuse_shipped(out: Path) -> None:
    """Stop before any work when `out` is the shipped verifier."""
    if out.resolve() == SHIPPED.resolve():
        raise SystemExit(f"{out} is the shipped verifier: write elsewhere, compare on the dev rows and the sealed split, then ship it deliberately (ship_verifier.py)")


def write_candidate(out: Path, data: bytes) -> str:
    """Write a candidate file (never the shipped one) and return its SHA-256."""
    refuse_shipped(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    return hashlib.sha256(data).hexdigest()
