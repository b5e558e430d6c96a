"""`compare(base, candidate)`: two runs of the same questions, paired, metric by metric.

Samples are paired by their `id`. A sample with no id has its input line number for one (the
runner's rule), so two files of id-less samples pair by line, and the comparison says which it
used. Nothing is dropped in silence: a sample in one file only, an id two rows share, an input
line that could not be read, a pair whose question text differs, and per metric a sample that
errored in either run or was scored in one and undefined (NaN) in the other are each counted and
listed, and a --max-drop gate fails on them (what could not be compared may hide the drop).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from localeval.comparison.inputs import GOLD_FIELDS, RecordedInput, ScoredSample, read_recorded_input, recorded_input_path
from localeval.comparison.movers import Mover, what_changed
from localeval.comparison.quoting import quote
from localeval.comparison.runs import ComparedRun, no_cycle_collection, read_run
from localeval.comparison.setup import InputFiles, SetupDifference, input_files, setup_differences
from localeval.data.results import INPUT_ERROR_KEY, Outcome, ResultRow
from localeval.errors import EXIT_OK, EXIT_USAGE, ConfigError
from localeval.stats.gates import EVERY_METRIC, DropGate, GateOn, check_gate_on, drop_gate
from localeval.stats.paired import PairedDifference, Verdict, paired_difference

EXIT_GATE_FAILED = 1
DEFAULT_SHOW = 5
DEFAULT_MAX_DROP_ON: GateOn = "fail-if-confidently-below"
MAX_LISTED = 50  # unpaired samples listed per kind in the reports; the JSON lists them all
Side = Literal["base", "candidate", "both"]


@dataclass(frozen=True)
class Unpaired:
    """A sample left out of a comparison: its id, its line (in the `side` file; the base's for
    both), the side it concerns, and why."""

    id: str | int | None
    line: int
    side: Side
    why: str

    def to_json_dict(self) -> dict[str, Any]:
        return {"id": self.id, "line": self.line, "side": self.side, "why": self.why}


@dataclass(frozen=True)
class PairedScore:
    """One sample both runs scored on a metric: its id, its line in each file and both scores
    (the comparison page's table of every pair, and its scatter)."""

    id: str | int | None
    base_line: int
    candidate_line: int
    base: float
    candidate: float


@dataclass(frozen=True)
class MetricComparison:
    """One shared metric: its paired difference, the samples it could not compare, how many both
    runs left undefined, its --max-drop gate, the samples that moved most each way, and every
    pair compared (in the base's order)."""

    name: str
    difference: PairedDifference
    not_compared: tuple[Unpaired, ...]
    undefined_in_both: int
    gate: DropGate | None
    improved: tuple[Mover, ...]
    worsened: tuple[Mover, ...]
    one_pipeline: bool = False
    lower_is_better: bool = False  # the metric's good scores are its low ones (noise_sensitivity)
    pairs: tuple[PairedScore, ...] = ()

    @property
    def verdict(self) -> Verdict:
        """The difference's verdict turned the metric's way: a lower-is-better metric whose
        whole interval is above 0 got worse."""
        found = self.difference.verdict
        if not self.lower_is_better or found is Verdict.NO_DIFFERENCE:
            return found
        return Verdict.WORSE if found is Verdict.BETTER else Verdict.BETTER

    def sentence(self) -> str:
        """The one-line verdict: never "no regression" where the interval cannot tell."""
        d = self.difference
        if d.ci95 is None or d.mean is None:
            return f"no difference shown: {d.count} paired sample(s), too few for an interval"
        low, high = d.ci95
        if self.one_pipeline and low == high == 0.0:
            return "no difference: the same input scored with the same setup gave every sample the same score"
        places = d.decimals
        figures = f"{d.mean:+.{places}f} (95% interval {low:+.{places}f} to {high:+.{places}f}{'; lower is better' if self.lower_is_better else ''})"
        if self.verdict is Verdict.BETTER:
            return f"better: {figures}"
        if self.verdict is Verdict.WORSE:
            return f"worse: {figures}"
        if self.lower_is_better:
            return f"no difference shown: {figures}; the data allow anything from a fall of {-low:.{places}f} (better) to a rise of {high:.{places}f} (worse)"
        return f"no difference shown: {figures}; the data allow anything from a drop of {-low:.{places}f} to a gain of {high:.{places}f}"

    def to_json_dict(self) -> dict[str, Any]:
        return {
            **self.difference.to_json_dict(), "verdict": self.verdict.value, "lower_is_better": self.lower_is_better,
            "sentence": self.sentence(), "undefined_in_both": self.undefined_in_both,
            "not_compared": [u.to_json_dict() for u in self.not_compared], "gate": self.gate.to_json_dict() if self.gate else None,
            "improved": [m.to_json_dict() for m in self.improved], "worsened": [m.to_json_dict() for m in self.worsened],
        }


@dataclass(frozen=True)
class Comparison:
    """What `localeval compare` found: the two files, how samples were paired, what differs in the
    setups, each shared metric's comparison, the samples not paired, the question check, the
    metrics only one run has, and why the gates were refused (None when they were read)."""

    base: str
    candidate: str
    paired_by: Literal["id", "line"]
    setup: tuple[SetupDifference, ...]
    one_pipeline: bool
    metrics: dict[str, MetricComparison]
    unpaired: tuple[Unpaired, ...]
    questions: str
    not_shared: dict[str, str] = field(default_factory=dict)
    max_drop: dict[str, float] = field(default_factory=dict)
    gate_refusal: str | None = None
    recorded_inputs: dict[str, str] = field(default_factory=dict)
    inputs: InputFiles | None = None  # the input files the headers record: another one is the normal case

    def files_read(self) -> dict[str, str]:
        """Every file the comparison read, by what names it: the two results files and the input
        files their headers record (read for the question check), none of which an output may name."""
        return {"BASE": self.base, "CANDIDATE": self.candidate, **self.recorded_inputs}

    @property
    def gated(self) -> bool:
        return self.gate_refusal is not None or any(m.gate is not None for m in self.metrics.values())

    @property
    def gates_hold(self) -> bool:
        return self.gate_refusal is None and all(m.gate.ok for m in self.metrics.values() if m.gate is not None)

    @property
    def exit_code(self) -> int:
        """0 when every gate holds (or there is none), 1 when one fails, 2 when they were refused."""
        if self.gate_refusal is not None:
            return EXIT_USAGE
        return EXIT_OK if self.gates_hold else EXIT_GATE_FAILED

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "base": self.base, "candidate": self.candidate, "paired_by": self.paired_by, "one_pipeline": self.one_pipeline,
            "inputs": self.inputs.to_json_dict() if self.inputs else None,
            "setup_differences": [d.to_json_dict() for d in self.setup], "questions": self.questions,
            "unpaired": [u.to_json_dict() for u in self.unpaired], "not_shared": self.not_shared,
            "gate_refusal": self.gate_refusal, "gates_hold": self.gates_hold if self.gated else None,
            "metrics": {name: m.to_json_dict() for name, m in self.metrics.items()},
        }


def _metric_names(run: ComparedRun) -> list[str]:
    """The metrics a run scored: its header's, else every name its rows score, in order."""
    metrics = run.run.get("metrics")
    if isinstance(metrics, dict) and metrics:
        return [str(name) for name in metrics]
    return list(dict.fromkeys(name for row in run.rows for name in row.scores))


def _keyed(run: ComparedRun, side: Side, unpaired: list[Unpaired]) -> dict[tuple[str, str | int], ResultRow]:
    """The rows of a run by id (a string id and a number id are two ids), the unreadable lines and
    the ids two rows share listed instead."""
    counts = Counter((type(row.id).__name__, row.id) for row in run.rows if row.id is not None)
    keyed = {}
    for row in run.rows:
        if row.unreadable:
            unpaired.append(Unpaired(row.id, row.line, side, f"its input line could not be read: {row.errors[INPUT_ERROR_KEY]}"[:300]))
        elif row.id is None:  # localeval writes a line number for a sample without one: this row was made elsewhere
            unpaired.append(Unpaired(row.id, row.line, side, "its id is null: it pairs with none"))
        elif counts[(type(row.id).__name__, row.id)] > 1:
            unpaired.append(Unpaired(row.id, row.line, side, f"{counts[(type(row.id).__name__, row.id)]} rows of the {side} have this id: it pairs with none"))
        else:
            keyed[(type(row.id).__name__, row.id)] = row
    return keyed


def _only_in(side: Side, key: tuple[str, str | int], other: Mapping[tuple[str, str | int], ResultRow]) -> str:
    """Why a row is in one file only, saying so when the other file has its id as another JSON
    type (1 and "1": two ids, so a file whose ids were rewritten as strings pairs with none)."""
    kind, value = key
    twin = ("str", str(value)) if kind == "int" else ("int", int(value)) if isinstance(value, str) and value.isdecimal() and len(value) < 20 and str(int(value)) == value else None
    if twin is not None and twin in other:
        return f"in the {side} only: the other run has the id {other[twin].id!r}, a {'string' if twin[0] == 'str' else 'number'} (a number id and a string id are two ids)"
    return f"in the {side} only"


def _by_line(runs: tuple[ComparedRun, ComparedRun], inputs: tuple[RecordedInput, RecordedInput]) -> bool:
    """Every id is its row's line number and no input read back has an id of its own: the samples
    had no ids, so they pair by line (samples with ids 1..n in lines 1..n pair by id)."""
    if any(found.with_ids for found in inputs):
        return False
    return all(row.id is None or (type(row.id) is int and row.id == row.line) for run in runs for row in run.rows)


def _check_questions(
    pairs: list[tuple[ResultRow, ResultRow]], inputs: tuple[RecordedInput, RecordedInput], unpaired: list[Unpaired], by_line: bool
) -> tuple[list[tuple[ResultRow, ResultRow]], str, int]:
    """The pairs whose question text is the same in both inputs (a pair whose texts differ is
    listed, not paired), a sentence saying what was checked ("not checked" where no pair has a
    question on both sides), and, `by_line`, how many pairs nothing confirms. A pairing by line
    is confirmed by the sample's own fields (GOLD_FIELDS: the question, the reference, the
    reference contexts or ids), never by the line number alone: a file written in another order
    pairs each line with another sample, and a line whose fields differ is listed, not paired."""
    base, candidate = inputs[0].samples, inputs[1].samples
    if base is None or candidate is None:
        notes = "; ".join(note for note in (inputs[0].note, inputs[1].note) if note)
        return pairs, f"question text not checked: {notes}", len(pairs) if by_line else 0
    kept, asked, unconfirmed, other = [], 0, 0, 0
    for pair in pairs:
        one, two = base.get(pair[0].line), candidate.get(pair[1].line)
        if one is None or two is None:
            kept.append(pair)
            unconfirmed += by_line
            continue
        asked += one.question is not None and two.question is not None
        shared = [index for index, (a, b) in enumerate(zip(one.gold, two.gold, strict=True)) if a is not None and b is not None]
        differ = [GOLD_FIELDS[index] for index in shared if one.gold[index] != two.gold[index]]
        if one.question != two.question and one.question is not None and two.question is not None:
            unpaired.append(Unpaired(pair[0].id, pair[0].line, "both", f"another question: {quote(one.question, 120)} in the base, {quote(two.question, 120)} in the candidate (line {pair[1].line})"))
        elif by_line and differ:
            other += 1
            unpaired.append(Unpaired(pair[0].id, pair[0].line, "both", f"another sample on this line in each file: its {', '.join(differ)} differ (the samples have no ids, so they pair by line)"))
        else:
            kept.append(pair)
            unconfirmed += by_line and not shared
    differ_questions = len(pairs) - len(kept) - other
    said = f"question text checked on {asked} pairs: {differ_questions} differ" if asked else "question text not checked: no pair has a question (user_input) on both sides"
    if by_line:
        said += (
            f"; paired by line: {len(kept) - unconfirmed} of {len(pairs)} pairs confirmed by their question, reference or reference contexts"
            + (f", {other} lines hold another sample in each file" if other else "") + (f", {unconfirmed} confirmed by nothing" if unconfirmed else "")
        )
    return kept, said, unconfirmed


def _unconfirmed_refusal(unconfirmed: int, count: int) -> str:
    return (
        f"--max-drop refused: the samples have no ids, so they pair by line, and nothing confirms that a line holds the same sample in both files "
        f"on {unconfirmed} of {count} pairs (no question, reference or reference contexts read on both sides); give the samples ids, or keep their gold fields"
    )


def _number(row: ResultRow, name: str) -> float:
    """The score of `name` in a row whose outcome is PASS: a number (the outcome says so, the type of `scores` cannot)."""
    value = row.scores[name]
    if value is None:
        raise ValueError(f"{name}: no score in line {row.line}, read as a number")
    return value


def _why_not(row: ResultRow, metric: str) -> str:
    if row.unreadable:
        return row.errors[INPUT_ERROR_KEY]
    return row.errors.get(metric, "not scored in this run")[:300]


def _compare_metric(
    name: str, pairs: list[tuple[ResultRow, ResultRow]], samples: tuple[RecordedInput, RecordedInput], show: int, one_pipeline: bool, lower: bool
) -> tuple[PairedDifference, list[Unpaired], int, tuple[Mover, ...], tuple[Mover, ...], tuple[PairedScore, ...]]:
    """The paired difference of `name`, the samples not compared, how many both runs left
    undefined, the `show` samples that improved and worsened most (for a `lower`-is-better
    metric, a fall is an improvement), and every pair compared."""
    base_scores: list[float] = []
    candidate_scores: list[float] = []
    scored: list[tuple[ResultRow, ResultRow]] = []
    unpaired: list[Unpaired] = []
    both_undefined = 0
    for base, candidate in pairs:
        outcomes = (base.outcome(name, None), candidate.outcome(name, None))
        if outcomes == (Outcome.PASS, Outcome.PASS):
            base_scores.append(_number(base, name))
            candidate_scores.append(_number(candidate, name))
            scored.append((base, candidate))
        elif outcomes == (Outcome.NAN, Outcome.NAN):
            both_undefined += 1
        elif Outcome.ERROR in outcomes:
            side: Side = "both" if outcomes[0] is outcomes[1] else "base" if outcomes[0] is Outcome.ERROR else "candidate"
            row = base if side != "candidate" else candidate
            unpaired.append(Unpaired(row.id, row.line, side, f"not scored by {name} in the {'base and the candidate' if side == 'both' else side}: {_why_not(row, name)}"))
        else:
            undefined: Side = "base" if outcomes[0] is Outcome.NAN else "candidate"
            row = base if undefined == "base" else candidate
            unpaired.append(Unpaired(row.id, row.line, undefined, f"{name} undefined (NaN) in the {undefined}, scored in the other run"))
    difference = paired_difference(base_scores, candidate_scores, one_pipeline=one_pipeline)
    order = sorted(range(len(scored)), key=lambda i: (candidate_scores[i] - base_scores[i], scored[i][0].line))

    def mover(index: int) -> Mover:
        base, candidate = scored[index]
        found = (_sample(samples[0], base), _sample(samples[1], candidate))
        changes = what_changed((base.details.get(name), candidate.details.get(name)), found, (base_scores[index], candidate_scores[index]))
        return Mover(base.id, base.line, candidate.line, base_scores[index], candidate_scores[index], changes)

    fell = tuple(mover(i) for i in order[:show] if candidate_scores[i] < base_scores[i])
    rose = tuple(mover(i) for i in reversed(order[-show:] if show else []) if candidate_scores[i] > base_scores[i])
    every = tuple(PairedScore(b.id, b.line, c.line, base_scores[i], candidate_scores[i]) for i, (b, c) in enumerate(scored))
    return (difference, unpaired, both_undefined, fell, rose, every) if lower else (difference, unpaired, both_undefined, rose, fell, every)


def _sample(recorded: RecordedInput, row: ResultRow) -> ScoredSample | None:
    return recorded.samples.get(row.line) if recorded.samples is not None else None


MAX_KEYS_NAMED = 4  # setup keys a refusal names; the differences themselves are listed above it


def _gate_refusal(setup: Iterable[SetupDifference], gated: Iterable[str], allow_setup_change: bool) -> tuple[set[str], str | None]:
    """The gated metrics whose score the setup differences change, and one short sentence refusing
    their gates (None when none is, or the user said the setup change is what they compare). Each
    metric is judged by what it depends on: another judge refuses no id_context_recall gate."""
    changes = [d for d in setup if d.changes_scores]
    refused = [name for name in gated if any(name in d.affects for d in changes)]
    if not refused or allow_setup_change:
        return set(), None
    keys = list(dict.fromkeys(d.key for d in changes if set(d.affects) & set(refused)))
    named = ", ".join(keys[:MAX_KEYS_NAMED]) + (f" and {len(keys) - MAX_KEYS_NAMED} more" if len(keys) > MAX_KEYS_NAMED else "")
    return set(refused), (
        f"--max-drop {', '.join(refused)} refused: the runs differ in {named}, which changes what {'its score means' if len(refused) == 1 else 'their scores mean'}; "
        "pass --allow-setup-change if that change is what you compare"
    )


def every_metric_gate(gates: Mapping[str, float], compared: Iterable[str]) -> dict[str, float]:
    """The gates with `all` (EVERY_METRIC) read as one per compared metric, a gate named beside it
    winning for its metric: `all=0.02, faithfulness=0.05` gates faithfulness at 0.05, the rest at 0.02."""
    if EVERY_METRIC not in gates:
        return dict(gates)
    named = {name: value for name, value in gates.items() if name != EVERY_METRIC}
    return {**{name: gates[EVERY_METRIC] for name in compared}, **named}


def compare(
    base: str | Path,
    candidate: str | Path,
    *,
    metrics: Iterable[str] | None = None,
    max_drop: Mapping[str, float] | None = None,
    max_drop_on: str = DEFAULT_MAX_DROP_ON,
    allow_setup_change: bool = False,
    show: int = DEFAULT_SHOW,
) -> Comparison:
    """Compare the results file `candidate` with `base` (both written by `localeval score -o`): for
    each metric both runs scored (or those named in `metrics`), the paired difference (candidate
    minus base) with its 95% interval and verdict, and `show` movers each way. `max_drop` gates
    (metric -> the most the candidate may cost, in [0, 1]) are read in the mode `max_drop_on`
    (as --threshold-on's), and refused (`gate_refusal`, exit code 2) when the runs' setups differ
    in what a score means, unless `allow_setup_change`."""
    on = check_gate_on(max_drop_on, "max_drop_on")
    if isinstance(metrics, str):  # one name, not its letters
        metrics = [metrics]
    if metrics is not None and not (metrics := list(metrics)):
        raise ConfigError("metrics: an empty list names no metric to compare (None compares every metric both runs scored)")
    gates = dict(max_drop or {})
    for name, value in gates.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            raise ConfigError(f"--max-drop {name}: {value!r} is not a share in [0, 1]")
    if isinstance(show, bool) or not isinstance(show, int) or show < 0:
        raise ConfigError(f"--show must be a whole number, 0 or more, got {show!r}")
    with no_cycle_collection():
        return _compare(base, candidate, metrics, gates, on, allow_setup_change, show)


def _compare(
    base: str | Path, candidate: str | Path, metrics: Iterable[str] | None, gates: dict[str, float], on: GateOn, allow_setup_change: bool, show: int
) -> Comparison:
    runs = (read_run(base, "BASE"), read_run(candidate, "CANDIDATE"))
    names = [_metric_names(run) for run in runs]
    shared = [name for name in names[0] if name in names[1]]
    not_shared = {**{n: "base" for n in names[0] if n not in names[1]}, **{n: "candidate" for n in names[1] if n not in names[0]}}
    if metrics is not None:
        wanted = list(dict.fromkeys(metrics))
        missing = [name for name in wanted if name not in shared]
        if missing:
            raise ConfigError(f"{', '.join(missing)}: not scored by both runs (both scored: {', '.join(shared) or 'no metric'})")
        shared = wanted
    gates = every_metric_gate(gates, shared)
    missing_gates = [name for name in gates if name not in shared]
    if missing_gates:
        raise ConfigError(f"--max-drop {', '.join(missing_gates)}: not a metric both runs scored and compared (compared: {', '.join(shared) or 'no metric'})")
    setup = tuple(setup_differences(runs[0].run, runs[1].run, shared))
    inputs_recorded = input_files(runs[0].run, runs[1].run)
    one_pipeline = inputs_recorded.same and not any(d.changes_scores for d in setup)
    unpaired: list[Unpaired] = []
    keyed = (_keyed(runs[0], "base", unpaired), _keyed(runs[1], "candidate", unpaired))
    pairs = [(row, keyed[1][key]) for key, row in keyed[0].items() if key in keyed[1]]
    unpaired += [Unpaired(row.id, row.line, "base", _only_in("base", key, keyed[1])) for key, row in keyed[0].items() if key not in keyed[1]]
    unpaired += [Unpaired(row.id, row.line, "candidate", _only_in("candidate", key, keyed[0])) for key, row in keyed[1].items() if key not in keyed[0]]
    inputs = (read_recorded_input(runs[0].run, runs[0].path), read_recorded_input(runs[1].run, runs[1].path))
    by_line = _by_line(runs, inputs)
    count = len(pairs)
    pairs, questions, unconfirmed = _check_questions(pairs, inputs, unpaired, by_line)
    refused, refusal = _gate_refusal(setup, gates, allow_setup_change)
    if gates and unconfirmed:  # a gate over samples paired by their line number alone would gate on chance pairs
        refused, refusal = set(gates), (f"{refusal}; " if refusal else "") + _unconfirmed_refusal(unconfirmed, count)
    from localeval.metrics import lower_is_better  # the metric modules, once a comparison is made (not for `compare --help`)

    compared = {}
    for name in shared:
        lower = lower_is_better(name, load=True)  # the metric's own direction, a plugin's too
        unchanged = inputs_recorded.same and not any(name in d.affects for d in setup)  # the same input, nothing this metric depends on changed
        difference, not_compared, both_undefined, improved, worsened, every = _compare_metric(name, pairs, inputs, show, unchanged, lower)
        gate = None
        if name in gates and name not in refused:
            mean, interval = difference.mean, difference.ci95
            if lower:  # the cost is the rise: the gate reads the difference with its sign turned
                mean, interval = None if mean is None else -mean, None if interval is None else (-interval[1], -interval[0])
            gate = drop_gate(on, float(gates[name]), paired=difference.count, mean=mean, interval=interval, uncompared=len(unpaired) + len(not_compared))
        compared[name] = MetricComparison(name, difference, tuple(not_compared), both_undefined, gate, improved, worsened, unchanged, lower, every)
    return Comparison(
        runs[0].path, runs[1].path, "line" if by_line else "id", setup, one_pipeline, compared, tuple(unpaired), questions, not_shared,
        {name: float(value) for name, value in gates.items()}, refusal,
        {f"the input {role} records": path for role, path in zip(("BASE", "CANDIDATE"), (recorded_input_path(run.run) for run in runs), strict=True) if path},
        inputs_recorded,
    )
