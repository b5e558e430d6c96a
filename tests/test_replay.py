"""training/replay.py: a CPU continue-run's rows are every train row of its sources plus a seeded,
sized replay sample of the others, and never a row outside the train indices it is given."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))

import replay  # noqa: E402

SOURCES = ["old", "other", "new"]
SOURCE = np.array([0] * 40 + [1] * 40 + [2] * 10 + [2] * 5)  # the last five rows: validation
TRAIN = np.arange(90)


def test_every_focus_row_and_the_asked_replay_share_of_the_rest():
    chosen = replay.continue_rows(SOURCE, SOURCES, TRAIN, ["new"], 1.5, seed=7)
    assert list(chosen) == sorted(chosen) and len(set(chosen)) == len(chosen)
    assert set(range(80, 90)) <= set(chosen) and len(chosen) == 10 + 15
    assert set(chosen) <= set(TRAIN)  # the validation rows of the focus source stay out


def test_the_sample_is_seeded_and_capped_by_what_there_is():
    assert list(replay.continue_rows(SOURCE, SOURCES, TRAIN, ["new"], 2, seed=7)) == list(replay.continue_rows(SOURCE, SOURCES, TRAIN, ["new"], 2, seed=7))
    assert len(replay.continue_rows(SOURCE, SOURCES, TRAIN, ["new"], 100, seed=7)) == 90
    assert list(replay.continue_rows(SOURCE, SOURCES, TRAIN, ["new"], 0, seed=7)) == list(range(80, 90))


def test_a_misspelt_source_or_a_negative_share_is_refused():
    with pytest.raises(ValueError, match="unknown source"):
        replay.continue_rows(SOURCE, SOURCES, TRAIN, ["nwe"], 1, seed=7)
    with pytest.raises(ValueError, match="0 or more"):
        replay.continue_rows(SOURCE, SOURCES, TRAIN, ["new"], -1, seed=7)


def test_a_checkpoint_id_names_the_rows_and_for_a_continue_run_the_exact_selection():
    everything = replay.selection_id("abc", TRAIN, [])
    assert everything == "abc"
    new = replay.selection_id("abc", replay.continue_rows(SOURCE, SOURCES, TRAIN, ["new"], 1, seed=7), ["new"])
    assert new.startswith("abc+") and new == replay.selection_id("abc", replay.continue_rows(SOURCE, SOURCES, TRAIN, ["new"], 1, seed=7), ["new"])
    other = replay.selection_id("abc", replay.continue_rows(SOURCE, SOURCES, TRAIN, ["new"], 2, seed=7), ["new"])
    assert len({everything, new, other}) == 3  # another --replay (or --focus) is another plan: its checkpoint is refused
