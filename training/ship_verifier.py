"""Install a chosen verifier file as the shipped one: the file, its SHA-256 and the parity reference.

Run only after the candidate won on the sealed split and on whole samples (training/DATA.md).
It copies the file to localeval/verifier/verifier.safetensors, writes its SHA-256 into
localeval/verifier/__init__.py (SHIPPED_SHA256), and rewrites tests/data/verifier_reference.jsonl:
torch's logits for the hand-written reference pairs from the file's float16 weights, which
tests/test_verifier.py checks the numpy runtime against. Needs torch (the [train] extra); the
model card is written by hand.

    python training/ship_verifier.py --file training/.cache/candidate/verifier.safetensors
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
from pathlib import Path

from candidate_files import ROOT, SHIPPED

INIT = ROOT / "localeval" / "verifier" / "__init__.py"
REFERENCE = ROOT / "tests" / "data" / "verifier_reference.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, required=True, help="the candidate verifier file")
    args = parser.parse_args()
    from train_device import base_names  # torch: imported once the options are read
    from train_verifier import write_reference

    from localeval.verifier import Verifier
    from localeval.verifier.tensors import read_tensors
    from localeval.verifier.towers import expand
    from localeval.verifier.wordpiece import WordPiece

    data = args.file.read_bytes()
    Verifier(str(args.file), data)  # the runtime loads it (calibration in range, every part present)
    stored, metadata = read_tensors(data)
    exported = expand(stored)  # a task's tower as the runtime computes it
    if args.file.resolve() != SHIPPED.resolve():
        shutil.copyfile(args.file, SHIPPED)
    digest = hashlib.sha256(data).hexdigest()
    INIT.write_text(re.sub(r'SHIPPED_SHA256 = "[0-9a-f]{64}"', f'SHIPPED_SHA256 = "{digest}"', INIT.read_text(encoding="utf-8")), encoding="utf-8")
    write_reference(exported, base_names(exported), WordPiece.from_lines(metadata["vocab"]), REFERENCE)
    print(f"shipped {args.file} as {SHIPPED} (SHA-256 {digest}); reference logits -> {REFERENCE}")


if __name__ == "__main__":
    main()
