"""A task's own tower (localeval/verifier/towers.py, training/task_tower.py): the other task scores
exactly as the shared file does, the tower's task as the run it came from does (within the int8
storage's error), and a malformed tower is refused when the file is loaded."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from localeval.errors import ConfigError
from localeval.verifier import Verifier, shipped_path
from localeval.verifier.tensors import read_tensors, write_tensors
from localeval.verifier.towers import expand

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))

import task_tower  # noqa: E402

PAIRS = [
    ("Who built the tower?", "The tower was built by Gustave Eiffel's company.", "The tower is in Paris. The tower was built by Gustave Eiffel's company."),
    ("Who built the tower?", "Paris has many bridges.", "Paris has many bridges. The tower is tall."),
    ("When was Python released?", "Python was first released in 1991.", ""),
]


@pytest.fixture(scope="module")
def shipped() -> bytes:
    return shipped_path().read_bytes()


@pytest.fixture(scope="module")
def other_run(shipped: bytes) -> bytes:
    """A stand-in run continued from the shipped file's shared weights (train_device.py leaves a
    tower out): every layer and the head moved by about 1% (seeded), the size of a fine-tune's
    change; the embeddings kept."""
    tensors, metadata = read_tensors(shipped)
    rng = np.random.default_rng(7)
    moved = {
        name: (value.astype(np.float32) * (1 + 0.01 * rng.standard_normal(value.shape))).astype(value.dtype) if name.startswith(("layers.", "head.")) else value
        for name, value in tensors.items()
        if not name.startswith("towers.")
    }
    return write_tensors(moved, metadata)


@pytest.fixture(scope="module")
def towered(shipped: bytes, other_run: bytes) -> bytes:
    data, error = task_tower.with_tower(shipped, other_run, "relevance")
    assert 0 < error < 1e-3
    return data


def test_the_other_task_is_the_shared_file_exactly_and_the_tower_task_is_the_other_run(shipped, other_run, towered):
    verifier = Verifier("towered", towered)
    assert verifier.logits("attribution", PAIRS) == Verifier("shared", shipped).logits("attribution", PAIRS)
    own = Verifier("other", other_run).logits("relevance", PAIRS)
    assert verifier.logits("relevance", PAIRS) == pytest.approx(own, abs=5e-3)
    assert verifier.logits("relevance", PAIRS) != pytest.approx(Verifier("shared", shipped).logits("relevance", PAIRS), abs=5e-3)


def test_the_task_takes_the_tower_runs_calibration_and_keeps_the_other(shipped, other_run, towered):
    _, metadata = read_tensors(other_run)
    calibration = json.loads(metadata["calibration"])
    calibration["relevance"]["cut"] = 1.25
    retuned = write_tensors(read_tensors(other_run)[0], {**metadata, "calibration": json.dumps(calibration)})
    built = Verifier("towered", task_tower.with_tower(shipped, retuned, "relevance")[0])
    shared = Verifier("shared", shipped)
    assert built.calibration["relevance"].cut == 1.25
    assert built.calibration["attribution"] == shared.calibration["attribution"]


def test_a_tower_replaces_the_tasks_old_one_and_costs_half_a_float16_copy(shipped, towered):
    shipped_tensors, _ = read_tensors(shipped)
    tensors, _ = read_tensors(towered)
    assert {name.split(".")[1] for name in tensors if name.startswith("towers.")} == {"relevance"}
    assert tensors.keys() == shipped_tensors.keys()  # the shipped file's own relevance tower was replaced, not kept beside
    float16_copy = sum(value.nbytes for name, value in shipped_tensors.items() if name.startswith(("layers.", "head.")))
    tower = sum(value.nbytes for name, value in tensors.items() if name.startswith("towers."))
    assert tower < 0.52 * float16_copy


def tower_for_no_task(tensors: dict[str, np.ndarray]) -> None:
    for part in ("", ".scale"):
        tensors["towers.summary.head.out.weight" + part] = tensors["towers.relevance.head.out.weight" + part]


@pytest.mark.parametrize(
    "break_it, why",
    [
        (lambda t: t.pop("towers.relevance.head.out.weight.scale"), "no shared tensor or scale"),
        (lambda t: t.__setitem__("towers.relevance.head.out.weight", np.zeros((3, 3), dtype=np.int8)), "dtype or shape"),
        (lambda t: t.__setitem__("towers.relevance.embeddings.word", np.zeros((2, 2), dtype=np.int8)), "no shared tensor or scale"),
        (tower_for_no_task, "cannot hold"),
        (lambda t: t.__setitem__("towers.relevance.head.out.weight.scale", np.full((2, 1), np.nan, dtype=np.float32)), "not a finite number"),
    ],
)
def test_a_malformed_tower_is_refused_naming_the_file(towered, break_it, why):
    tensors, metadata = read_tensors(towered)
    tensors = dict(tensors)
    break_it(tensors)
    with pytest.raises(ConfigError, match="broken.safetensors.*" + why):
        Verifier("broken.safetensors", write_tensors(tensors, metadata))


def test_files_of_another_base_or_task_are_refused(shipped, other_run):
    tensors, metadata = read_tensors(other_run)
    with pytest.raises(ValueError, match="'vocab' differs"):
        task_tower.with_tower(shipped, write_tensors(tensors, {**metadata, "vocab": "[PAD]"}), "relevance")
    with pytest.raises(ValueError, match="not one of"):
        task_tower.with_tower(shipped, other_run, "summary")


def test_an_epoch_tower_is_small_and_builds_the_same_file_as_the_whole_run(shipped, other_run, towered):
    """train_device.py --epoch-towers returns one task's tower per epoch (a device gives back at most
    8 files of 16 MiB); put back into the file the run started from, it is the tower the whole run gives."""
    epoch = task_tower.epoch_tower(shipped, other_run, "relevance", 120)
    tensors, metadata = read_tensors(epoch)
    assert all(name.startswith("towers.relevance.") for name in tensors) and len(epoch) < 12 * 2**20
    assert metadata["tower_of"] == "relevance" and metadata["step"] == "120"
    rebuilt, error = task_tower.with_tower(shipped, epoch, "relevance")
    assert 0 < error < 1e-3
    rebuilt_tensors, rebuilt_meta = read_tensors(rebuilt)
    towered_tensors, towered_meta = read_tensors(towered)
    assert rebuilt_tensors.keys() == towered_tensors.keys() and all(np.array_equal(rebuilt_tensors[k], towered_tensors[k]) for k in towered_tensors)
    assert json.loads(rebuilt_meta["calibration"]) == json.loads(towered_meta["calibration"])
    assert Verifier("rebuilt", rebuilt).logits("relevance", PAIRS) == Verifier("towered", towered).logits("relevance", PAIRS)


def test_an_epoch_tower_goes_only_into_its_own_start_file_and_task(shipped, other_run, towered):
    epoch = task_tower.epoch_tower(shipped, other_run, "relevance", 120)
    with pytest.raises(ValueError, match="not from this --shared file"):
        task_tower.with_tower(towered, epoch, "relevance")
    with pytest.raises(ValueError, match="a tower for relevance, not for attribution"):
        task_tower.with_tower(shipped, epoch, "attribution")


def test_a_run_started_from_the_tower_returns_it_unchanged_before_any_step(shipped):
    """train_device.py --start-tower relevance trains the relevance tower, not the statements'
    weights; with no step taken, its epoch tower rebuilds the shipped file's relevance verdicts."""
    pytest.importorskip("torch")
    import train_device

    model, metadata, start = train_device.load_start(shipped_path(), "relevance")
    assert start == shipped
    epoch = task_tower.epoch_tower(shipped, write_tensors(model.export(), metadata), "relevance", 0)
    rebuilt = Verifier("rebuilt", task_tower.with_tower(shipped, epoch, "relevance")[0])
    assert rebuilt.logits("relevance", PAIRS) == pytest.approx(Verifier("shipped", shipped).logits("relevance", PAIRS), abs=1e-4)
    assert rebuilt.logits("attribution", PAIRS) == Verifier("shipped", shipped).logits("attribution", PAIRS)


def test_a_blend_averages_the_new_tower_with_the_files_own(shipped, towered):
    """task_tower.py --blend W: (1 - W) x the shared file's tower + W x the new one (WiSE-FT of a tower);
    W = 0 gives back the shared file's tower, and the other task is untouched."""
    with pytest.raises(ValueError, match="between 0 and 1"):
        task_tower.blend_towers(shipped, towered, "relevance", 1.5)
    half, error = task_tower.blend_towers(shipped, towered, "relevance", 0.5)
    assert error < 1e-3  # the int8 storage's, as for the towered file
    old, new, mixed = (expand(read_tensors(data)[0]) for data in (shipped, towered, half))
    name = "towers.relevance.layers.5.up.weight"
    assert np.abs(mixed[name] - (old[name] + new[name]) / 2).max() <= error
    none = Verifier("none", task_tower.blend_towers(shipped, towered, "relevance", 0.0)[0])
    assert none.logits("relevance", PAIRS) == pytest.approx(Verifier("shipped", shipped).logits("relevance", PAIRS), abs=1e-4)
    assert Verifier("half", half).logits("attribution", PAIRS) == Verifier("shipped", shipped).logits("attribution", PAIRS)
    with pytest.raises(ValueError, match="same shared weights"):
        task_tower.blend_towers(shipped, write_tensors(read_tensors(shipped)[0] | {"head.out.bias": np.zeros(2, dtype=np.float16)}, read_tensors(shipped)[1]), "relevance", 0.5)
