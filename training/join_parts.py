"""Put a trained verifier back together from the parts train_device.py wrote, checking every SHA-256.

A device returns at most 8 files of 16 MiB, so the weights come back cut into parts with
parts.json naming each part's size and SHA-256 and the whole file's. This joins them, refuses a
missing, short or altered part, and writes the file where asked (never over the shipped
verifier: replacing it is a decision for after the dev and sealed comparison, with train_verifier.py's
SHA-256 update).

    python training/join_parts.py --parts FILES_AT --out training/.cache/device/verifier.safetensors
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from candidate_files import ROOT, refuse_shipped, write_candidate


def join(folder: Path) -> bytes:
    manifest = json.loads((folder / "parts.json").read_text(encoding="utf-8"))
    pieces = []
    for part in manifest["parts"]:
        data = (folder / part["name"]).read_bytes()
        if len(data) != part["bytes"] or hashlib.sha256(data).hexdigest() != part["sha256"]:
            raise SystemExit(f"{folder / part['name']}: not the part train_device.py wrote (size or SHA-256 differs)")
        pieces.append(data)
    whole = b"".join(pieces)
    if len(whole) != manifest["bytes"] or hashlib.sha256(whole).hexdigest() != manifest["sha256"]:
        raise SystemExit(f"{folder}: the joined file's size or SHA-256 is not the one recorded")
    return whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", type=Path, required=True, help="the folder holding parts.json and the parts")
    parser.add_argument("--out", type=Path, default=ROOT / "training" / ".cache" / "device" / "verifier.safetensors")
    args = parser.parse_args()
    refuse_shipped(args.out)
    data = join(args.parts)
    print(f"{args.out}: {len(data)} bytes, SHA-256 {write_candidate(args.out, data)} (checked against parts.json)")


if __name__ == "__main__":
    main()
