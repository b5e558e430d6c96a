"""training/average_weights.py: a weight-space average of the shipped verifier and a run continued
from it is exact at its ends, loads in the runtime, and refuses files that are not one training path."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from localeval.verifier import Verifier, shipped_path
from localeval.verifier.tensors import read_tensors, write_tensors

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))

import average_weights  # noqa: E402

PAIRS = [("Who built the tower?", "The tower was built by Gustave Eiffel's company.", ""), ("Who built the tower?", "Paris has many bridges.", "")]


@pytest.fixture(scope="module")
def shipped() -> bytes:
    return shipped_path().read_bytes()


@pytest.fixture(scope="module")
def parent(shipped: bytes) -> bytes:
    """The shipped file's shared weights (what a run continues from: train_device.py leaves its tower out)."""
    tensors, metadata = read_tensors(shipped)
    return write_tensors({name: value for name, value in tensors.items() if not name.startswith("towers.")}, metadata)


def child_of(parent: bytes, shift: float) -> bytes:
    """A stand-in continued run: every tensor moved by `shift`, naming `parent` as its parent."""
    tensors, metadata = read_tensors(parent)
    moved = {name: (value.astype(np.float32) + shift).astype(value.dtype) for name, value in tensors.items()}
    return write_tensors(moved, {**metadata, "parent_sha256": hashlib.sha256(parent).hexdigest()})


def test_the_ends_are_the_parent_and_the_child_and_the_middle_is_halfway(parent):
    child = child_of(parent, 0.01)
    at_parent, _ = read_tensors(average_weights.average(parent, child, 0.0))
    at_child, _ = read_tensors(average_weights.average(parent, child, 1.0))
    middle, metadata = read_tensors(average_weights.average(parent, child, 0.5))
    parent_tensors, _ = read_tensors(parent)
    child_tensors, _ = read_tensors(child)
    name = "head.dense.weight"
    assert np.array_equal(at_parent[name], parent_tensors[name]) and np.array_equal(at_child[name], child_tensors[name])
    halfway = (parent_tensors[name].astype(np.float32) + child_tensors[name].astype(np.float32)) / 2
    assert np.allclose(middle[name].astype(np.float32), halfway, atol=1e-3)
    assert json.loads(metadata["training"])["averaged"]["child_weight"] == 0.5


def test_the_average_loads_and_at_weight_zero_scores_as_the_parent(parent):
    averaged = average_weights.average(parent, child_of(parent, 0.01), 0.0)
    expected = Verifier("parent", parent).logits("relevance", PAIRS)
    assert Verifier("averaged", averaged).logits("relevance", PAIRS) == pytest.approx(expected, abs=1e-6)


def test_files_that_are_not_one_training_path_are_refused(parent):
    stranger = child_of(parent, 0.0)
    tensors, metadata = read_tensors(stranger)
    with pytest.raises(average_weights.AverageError, match="names parent"):
        average_weights.average(parent, write_tensors(tensors, {**metadata, "parent_sha256": "0" * 64}), 0.5)
    with pytest.raises(average_weights.AverageError, match="vocab"):
        average_weights.average(parent, write_tensors(tensors, {**metadata, "vocab": "[PAD]"}), 0.5)
    with pytest.raises(average_weights.AverageError, match="outside"):
        average_weights.average(parent, stranger, 1.5)
    fewer = {name: value for name, value in tensors.items() if name != sorted(tensors)[0]}
    with pytest.raises(average_weights.AverageError, match="tensor names"):
        average_weights.average(parent, write_tensors(fewer, metadata), 0.5)


def test_a_file_with_a_task_tower_is_refused(shipped):
    """The shipped file's relevance tower is stored as differences from its shared weights: an
    average would move what they are differences from."""
    with pytest.raises(average_weights.AverageError, match="task tower"):
        average_weights.average(shipped, child_of(shipped, 0.0), 0.5)
