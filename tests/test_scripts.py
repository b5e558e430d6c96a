"""The scripts beside the package: training/, benchmarks/, tools/ and lab/.

No test ran them, so a refactor of localeval broke two of them silently (`_verified` renamed,
issue 48). Every script here is imported and asked for --help, each in a fresh interpreter as
`python SCRIPT` would run it (its own folder first on the path), and none may reach into
localeval's private names. Also the training code that decides what ships: the verifier
calibration fit (training/calibration.py), on separable logits where a plain fit has no finite
answer.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("training", "benchmarks", "tools", "lab")
SCRIPTS = sorted(path for folder in FOLDERS for path in (ROOT / folder).glob("*.py"))
# The training framework is an extra (`pip install -e ".[train]"`): these two import it at the top.
NEEDS_TORCH = {"training/train_verifier.py", "training/train_device.py"}

# One interpreter per folder (importing localeval and numpy once, not once per script): each
# script of the folder is imported as a module (nothing may run but definitions), then run as
# `python SCRIPT --help`; what each did is printed as one JSON line.
IMPORT_AND_HELP = """
import contextlib, importlib.util, io, json, runpy, sys, traceback
from pathlib import Path
sys.path.insert(0, sys.argv[1])  # as `python SCRIPT` puts the script's folder first
for path in sys.argv[2:]:
    out, code = io.StringIO(), None
    try:
        with contextlib.redirect_stdout(out):
            spec = importlib.util.spec_from_file_location("script_" + Path(path).stem, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
            if hasattr(module, "main"):
                sys.argv[0:] = [path, "--help"]
                try:
                    runpy.run_path(path, run_name="__main__")
                    code = "--help returned without exiting"
                except SystemExit as stop:
                    code = stop.code
            else:
                code = 0
    except BaseException:
        code = traceback.format_exc()[-2000:]
    print(json.dumps({"path": path, "code": code, "out": out.getvalue()}), file=sys.__stdout__, flush=True)
"""


def name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.fixture(scope="module")
def helped() -> dict[str, dict[str, object]]:
    """Each script's exit code and output, from one interpreter per folder."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    results: dict[str, dict[str, object]] = {}
    for folder in FOLDERS:
        paths = [str(p) for p in SCRIPTS if p.parent.name == folder and (name(p) not in NEEDS_TORCH or importlib.util.find_spec("torch"))]
        run = subprocess.run([sys.executable, "-c", IMPORT_AND_HELP, str(ROOT / folder), *paths], capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
        for line in run.stdout.splitlines():
            if line.startswith("{"):
                result = json.loads(line)
                results[name(Path(result["path"]))] = result
    return results


def test_the_script_folders_are_found():
    assert {"training/tune_cut.py", "benchmarks/verifier_sealed.py", "benchmarks/accuracy.py", "lab/probe_states.py", "tools/readme_reference.py"} <= {name(p) for p in SCRIPTS}
    assert not any(name(p).startswith("benchmarks/") and p.stem in ("probe_states", "explore_relevance", "choice_wording") for p in SCRIPTS)  # notebooks live in lab/


@pytest.mark.parametrize("path", SCRIPTS, ids=name)
def test_every_script_imports_and_answers_help(path, helped):
    if name(path) in NEEDS_TORCH and importlib.util.find_spec("torch") is None:
        pytest.skip("needs the [train] extra (torch)")
    result = helped[name(path)]
    assert result["code"] == 0, result["code"]
    if "def main(" in path.read_text(encoding="utf-8"):
        assert "usage:" in str(result["out"])


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) of every import in a file, top level or inside functions."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
    return found


@pytest.mark.parametrize("path", [p for p in SCRIPTS if p.parent.name != "lab"], ids=name)
def test_scripts_use_only_public_names(path):
    """Of localeval and of one another: a private name may change without notice. The lab
    notebooks are exempt: they probe one version's internals, and say so."""
    local = {p.stem for p in SCRIPTS}
    for module, names in _imports(path):
        if module.split(".")[0] not in ("localeval", *local):
            continue
        assert not any(part.startswith("_") for part in module.split(".")), f"{name(path)} imports the private module {module}"
        private = [n for n in names if n.startswith("_")]
        assert not private, f"{name(path)} imports private names {private} from {module}"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
               for alias in node.names if (getattr(node, "module", None) or alias.name).split(".")[0] in ("localeval", *local)}
    reached = {f"{node.value.id}.{node.attr}" for node in ast.walk(tree) if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
               and node.value.id in modules and node.attr.startswith("_") and not node.attr.startswith("__")}
    assert not reached, f"{name(path)} reaches private names {sorted(reached)}"


def test_the_torch_scripts_are_the_ones_listed():
    uses_torch = {name(p) for p in SCRIPTS if any(module.split(".")[0] == "torch" for module, _ in _imports(p))}
    assert uses_torch == NEEDS_TORCH


# -- the calibration fit ------------------------------------------------------------


@pytest.fixture()
def calibration(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "training"))
    import calibration

    return calibration


def test_the_slope_stays_finite_and_in_range_on_separable_logits(calibration):
    """A GPU run's validation logits separated the labels, its unbounded fit returned a slope of
    1.56e9 (an overflow in exp), and localeval refused the file. The penalised fit cannot."""
    rng = random.Random(0)
    positives = [rng.uniform(2.0, 9.0) for _ in range(60)]
    negatives = [rng.uniform(-9.0, 1.9) for _ in range(600)]
    wide = [v * 1e3 for v in positives + negatives]  # separated by a margin of 100 logits
    for logits in (positives + negatives, wide):
        slope = calibration.logistic_slope(logits, [1] * 60 + [0] * 600)
        assert calibration.MIN_SCALE <= slope <= calibration.MAX_SCALE
    rows = [{"task": task, "label": y, "source": "s"} for task in ("relevance", "attribution") for y in [1] * 60 + [0] * 600]
    fitted = calibration.calibrate(rows, wide + wide)
    assert all(calibration.MIN_SCALE <= values["scale"] <= calibration.MAX_SCALE for values in fitted.values())
    assert fitted["attribution"]["validation_quality"] > 0.99  # the cut still separates them


def test_the_slope_still_fits_overlapping_logits(calibration):
    """Two unit-variance classes two logits apart: the true slope is 2; the penalty barely moves it."""
    rng = random.Random(1)
    logits = [rng.gauss(1.0, 1.0) for _ in range(2000)] + [rng.gauss(-1.0, 1.0) for _ in range(2000)]
    assert calibration.logistic_slope(logits, [1] * 2000 + [0] * 2000) == pytest.approx(2.0, abs=0.15)


def test_the_runtime_loads_what_the_fit_writes(calibration, tmp_path):
    """The fitted numbers are within what localeval.verifier accepts: a file written with them loads."""
    from localeval.verifier import Verifier, shipped_path
    from localeval.verifier.tensors import read_tensors, write_tensors

    tensors, metadata = read_tensors(shipped_path().read_bytes())
    rows = [{"task": task, "label": y, "source": "s"} for task in ("relevance", "attribution") for y in (1, 1, 0, 0, 0)]
    fitted = calibration.calibrate(rows, [50.0, 40.0, -40.0, -50.0, -60.0] * 2)
    data = write_tensors(tensors, {**metadata, "calibration": json.dumps(fitted)})
    loaded = Verifier(str(tmp_path / "v.safetensors"), data)
    assert loaded.calibration["relevance"].scale == fitted["relevance"]["scale"]


def test_the_mean_auc_over_every_source_or_a_continue_runs_focus(calibration):
    """train_device.py keeps the epoch with the best mean_auc over every source and logs the --focus
    sources' beside it; a focus source without an AUC does not count."""
    validation = {"hotpotqa": {"auc": 0.9}, "squad": {"auc": 0.7}, "fever": {"auc": 0.2}, "esnli": {"auc": float("nan")}}
    assert calibration.mean_auc(validation) == pytest.approx(0.6)
    assert calibration.mean_auc(validation, ["hotpotqa", "squad"]) == pytest.approx(0.8)
    assert calibration.mean_auc(validation, ["hotpotqa", "selqa_window"]) == pytest.approx(0.9)  # no validation rows: skipped
    assert calibration.mean_auc(validation, ["selqa_window"]) == pytest.approx(0.6)  # none at all: every source
    assert calibration.mean_auc(validation, ["esnli"]) == pytest.approx(0.6)  # rows of one label: no AUC, so every source
    assert calibration.mean_auc({}) == 0.0


# -- what the verifier may train on -------------------------------------------------


def test_the_dev_questions_never_become_training_rows(tmp_path, monkeypatch):
    """shared/data prefixes its HotpotQA ids ("hotpotqa-5a8b..."), RPT's records do not: compared
    as written, 286 of the 300 dev questions the benchmarks score were training rows (issue 48)."""
    monkeypatch.syspath_prepend(str(ROOT / "training"))
    import prepare_verifier_data as rows

    shared, rpt = tmp_path / "shared", tmp_path / "rpt"
    shared.mkdir()
    rpt.mkdir()
    (shared / "reserved_hotpotqa_ids.txt").write_text("# reserved\nr1\n", encoding="utf-8")
    (shared / "relevance_dev.jsonl").write_text(json.dumps({"id": "hotpotqa-d1", "user_input": "Who  wrote Dune?"}) + "\n", encoding="utf-8")
    records = [{"id": "d1", "question": "Other words"}, {"id": "x2", "question": "who wrote dune?"}, {"id": "r1", "question": "Q"}, {"id": "t1", "question": "Kept?"}]
    (rpt / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    for name in ("dev", "test"):
        (rpt / f"{name}.jsonl").write_text(json.dumps(records[-1]) + "\n", encoding="utf-8")
    monkeypatch.setattr(rows, "SHARED", shared)
    assert [r["id"] for r in rows.usable_hotpotqa(rpt)] == ["t1"]  # by id (bare), by question text, reserved out, once
