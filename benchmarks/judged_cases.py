"""What the benchmarks of judge metrics on hand-written cases share: a library, not a script.

answer_relevancy.py and rag_scorecard.py each load a judge from the same three flags and read
their cases and samples from JSON Lines files; both take them from here, so the two are run
(and read their files) the same way.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def add_judge_options(parser: argparse.ArgumentParser, threads_help: str = "judge threads (default 2)") -> None:
    """--model, --threads and --n-ctx: the judge the cases are scored by."""
    parser.add_argument("--model", help="judge: a catalog name or GGUF path (default: the default judge)")
    parser.add_argument("--threads", type=int, default=2, help=threads_help)
    parser.add_argument("--n-ctx", type=int, default=4096, help="judge context window (default 4096)")


def read(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSON Lines file (blank lines skipped)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
