"""The release step: fit the judge's calibrations on the dev rows and store them in localeval/catalog.toml.

Runs benchmarks/accuracy.py's measurement with the same options (the same rows, the same cached
judge answers), prints its report, and writes what it fitted on all the rows it read into the
judge's [[model]] table: the statement-verdict combination (calibration.attribution, from the
statement tasks) and the relevance selection (calibration.relevance, from relevance and squad).
Only the tables of the tasks it ran are replaced. Fit on the rows a later measurement does not
score (docs/HISTORY.md records which rows each shipped table was fitted on).

    python benchmarks/write_catalog.py --task attribution,recall,vitaminc,fever --limit attribution=150,recall=40,vitaminc=240,fever=120
    python benchmarks/write_catalog.py --task relevance,squad,plain,unanswerable --limit relevance=60,squad=80
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import tomllib
from accuracy import build_parser, measure, print_report

from localeval.metrics.recall import CALIBRATION_KEY as ATTRIBUTION_KEY
from localeval.metrics.relevance import CALIBRATION_KEY as RELEVANCE_KEY
from localeval.models.store import replace_calibrations, resolve_model

CATALOG_FILE = Path(__file__).resolve().parents[1] / "localeval" / "catalog.toml"


def write_catalog(model_name: str, tables: Mapping[str, Mapping[str, Any]], catalog: Path = CATALOG_FILE) -> None:
    """Store fitted calibrations in the model's [[model]] table of the catalog, replacing those keys
    only. What else a task's table holds stays (localeval.graders.stacked's stacked model and
    cascade band): they read the judge rule's raw features and the verifier's logits, not this
    table's combination, so a refit here leaves them valid."""
    text = catalog.read_text(encoding="utf-8")
    model = next(m for m in tomllib.loads(text)["model"] if m["name"] == model_name)
    old = model.get("calibration", {})
    kept = {key: {**table, **{k: v for k, v in old.get(key, {}).items() if k not in table}} for key, table in tables.items()}
    catalog.write_text(replace_calibrations(text, model_name, kept), encoding="utf-8")


def main(argv: Iterable[str] | None = None) -> None:
    parser = build_parser(__doc__)
    args = parser.parse_args(argv)
    if resolve_model(args.model)[1] is None:
        parser.error(f"--model {args.model}: not a catalog model, so there is no table to write")
    if args.calibration:
        parser.error("--calibration: this fits the catalog's own tables; measure a calibration file with accuracy.py --calibration")
    report = measure(parser, args)
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str) + "\n")
    tables = {}
    if "verdicts" in report:
        tables[ATTRIBUTION_KEY] = report["verdicts"]["fit"]
    if "relevance" in report:
        tables[RELEVANCE_KEY] = report["relevance"]["fit"]
    write_catalog(report["catalog_name"], tables)
    print(f"\nwrote the calibration of {report['catalog_name']} to {CATALOG_FILE}")


if __name__ == "__main__":
    main()
