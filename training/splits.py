"""Which split a training group belongs to, and the guard that keeps the sealed test split out.

Every source is split by group (a document, question, premise, case), never by row, so no
document is on two sides. A group's side is a hash of SPLIT_SEED, its family and its id: the same
inputs always give the same sides. Sources that share documents share a family (the news
summary sets; the dialogue sets), so a document found in two of them lands on one side.

The shipped verifier was trained on the train split of training/prepare_verifier_data.py. For
those sources (LEGACY), a group it trained on can only be trained on again; the groups it never
trained on (that script's validation tenth, and the halves the benchmarks hold out) are split
between validation and the sealed test, so a figure on the test split is on rows neither the
shipped verifier nor a new one saw.

The sealed test rows are written under a folder named SEALED, and `refuse_sealed` stops any
training or tuning script that is handed a path inside it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

SPLIT_SEED = "localeval-verifier-split-20261126"
SEALED = "sealed"  # the folder name of the test split's files: no training or tuning script reads below it
TEST_SHARE = 38  # of 256: about 15 % of a new source's groups
VALIDATION_SHARE = 26  # of 256: about 10 %
LEGACY = ("hotpotqa", "squad", "vitaminc_real", "vitaminc_synthetic", "fever_symmetric_dev", "fever_adversarial", "wice")


def _byte(family: str, group: str) -> int:
    return hashlib.sha256(f"{SPLIT_SEED}:{family}:{group}".encode()).digest()[0]


def split_of(family: str, group: str) -> str:
    """A new source's group: 'train', 'validation' or 'test'."""
    value = _byte(family, group)
    return "test" if value < TEST_SHARE else "validation" if value < TEST_SHARE + VALIDATION_SHARE else "train"


def legacy_split(source: str, group: str, seen: bool) -> str:
    """A group of a source the shipped verifier learned from: 'train' if it trained on the group,
    else half 'test', half 'validation'."""
    if seen:
        return "train"
    return "test" if _byte(source, group) < 128 else "validation"


def refuse_sealed(path: Path) -> None:
    """Stop with a clear message if `path` is (inside) the sealed test folder."""
    if SEALED in Path(path).resolve().parts or SEALED in Path(path).parts:
        raise SystemExit(f"{path}: the sealed test split is read only by the final evaluation, never by training or tuning")
