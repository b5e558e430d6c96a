"""Every metric of a run reads the same Sample, so no metric may change what the next one reads:
a Sample is frozen, its lists refuse to change (still lists: equal to lists, JSON and pickled as
lists), and its `extra` is a copy for each reader. The plugin below is installed for real, as
tests/test_metric_plugins.py installs one, and runs before a built-in in the CLI."""

from __future__ import annotations

import copy
import json
import pickle

import pytest
from conftest import install_plugin, run_with_plugins

from localeval import evaluate
from localeval.data.samples import Sample, parse_sample, parse_sample_json

SORTER = '''
from pydantic import BaseModel, ConfigDict

from localeval.metrics.base import Metric, Score


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    in_place: bool = True


class ContextSorter(Metric[Params]):
    """Reads the contexts in alphabetical order: in place (what must not reach other metrics) or
    from a copy of its own (what a plugin should do)."""

    name = "context_sorter"
    description = "Sorts the retrieved contexts before it reads them."
    required_fields = ("retrieved_contexts",)
    Params = Params

    def score_batch(self, samples, judge):
        scores = []
        for sample in samples:
            sample.extra["tags"].append("sorted")  # its own copy: the results row keeps what was read
            if self.params.in_place:
                sample.retrieved_contexts.sort()
                contexts = sample.retrieved_contexts
            else:
                contexts = sorted(sample.retrieved_contexts)
            scores.append(Score(value=1.0 if contexts[0].startswith("Paris") else 0.0))
        return scores
'''

# The relevant context is second: average precision 0.5; sorted, it would be first and 1.0.
SAMPLE = {
    "id": "s1",
    "retrieved_contexts": ["Rome is in Italy.", "Paris is the capital of France."],
    "reference_contexts": ["Paris is the capital of France."],
    "tags": ["read"],
}


def test_a_plugin_that_sorts_the_contexts_in_place_changes_nothing_another_metric_reads(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    install_plugin(site, "context_sorter", SORTER, "context_sorter = context_sorter:ContextSorter")
    data = tmp_path / "samples.jsonl"
    data.write_text(json.dumps(SAMPLE) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"

    run = run_with_plugins(site, "score", str(data), "-m", "context_sorter", "-m", "nonllm_context_precision", "-o", str(out), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    (row,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()][1:]
    assert row["scores"]["nonllm_context_precision"] == 0.5  # as the contexts were read, not 1.0 as sorted
    assert row["scores"]["context_sorter"] is None
    error = row["errors"]["context_sorter"]
    assert "context_sorter.ContextSorter" in error and "TypeError" in error and "read-only" in error
    assert row["extra"] == {"tags": ["read"]}

    polite = run_with_plugins(site, "score", str(data), "-m", "context_sorter", "--option", "context_sorter.in_place=false",
                        "-m", "nonllm_context_precision", "-o", str(out), cwd=tmp_path)
    assert polite.returncode == 0, polite.stderr
    (row,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()][1:]
    assert row["scores"] == {"context_sorter": 1.0, "nonllm_context_precision": 0.5}
    assert row["extra"] == {"tags": ["read"]}


@pytest.mark.parametrize("build", [
    lambda: parse_sample_json(json.dumps(SAMPLE)),
    lambda: parse_sample(SAMPLE),
    lambda: parse_sample({"contexts": SAMPLE["retrieved_contexts"], "reference_contexts": SAMPLE["reference_contexts"], "tags": ["read"]}),
    lambda: Sample(retrieved_contexts=list(SAMPLE["retrieved_contexts"]), reference_contexts=["Paris is the capital of France."], tags=["read"]),
])
def test_a_samples_lists_refuse_every_change_and_still_read_as_lists(build):
    sample = build()
    contexts = sample.retrieved_contexts
    for change in (
        lambda c: c.sort(), lambda c: c.reverse(), lambda c: c.append("x"), lambda c: c.extend(["x"]), lambda c: c.insert(0, "x"),
        lambda c: c.pop(), lambda c: c.remove(c[0]), lambda c: c.clear(), lambda c: c.__setitem__(0, "x"), lambda c: c.__delitem__(0),
        lambda c: c.__iadd__(["x"]), lambda c: c.__imul__(2),
    ):
        with pytest.raises(TypeError, match="read-only"):
            change(contexts)
    assert contexts == SAMPLE["retrieved_contexts"] and isinstance(contexts, list)
    assert sorted(contexts) == [contexts[1], contexts[0]] and contexts + ["x"] == [*SAMPLE["retrieved_contexts"], "x"]
    with pytest.raises(Exception, match="frozen"):
        sample.retrieved_contexts = []
    sample.extra["tags"].append("changed")
    assert sample.extra == {"tags": ["read"]}
    for again in (pickle.loads(pickle.dumps(sample)), copy.deepcopy(sample), Sample(retrieved_contexts=contexts)):
        assert again.retrieved_contexts == contexts
        with pytest.raises(TypeError):
            again.retrieved_contexts.sort()
    assert json.loads(sample.model_dump_json())["retrieved_contexts"] == SAMPLE["retrieved_contexts"]


def test_ids_are_read_only_too_and_every_metric_reads_them_as_given():
    sample = parse_sample({"retrieved_context_ids": [3, 1, 2], "reference_context_ids": [1]})
    for ids in (sample.retrieved_context_ids, sample.reference_context_ids):
        with pytest.raises(TypeError, match="read-only"):
            ids.sort()
    run = evaluate([sample], ["id_context_precision", "id_context_recall"])
    assert run.results[0]["scores"] == {"id_context_precision": 1 / 3, "id_context_recall": 1.0}
    assert sample.retrieved_context_ids == [3, 1, 2]
