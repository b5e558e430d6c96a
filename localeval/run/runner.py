"""Scoring: samples in, one result per sample out, in input order, as a stream.

Samples are scored in batches so the string metrics can vectorise across
samples; when a judge metric is selected the batch is as many samples as the
judge takes at once (one in process, several on a server), so results appear
(and are written) as soon as they are judged. Without a judge the batch is sized
by time (`next_batch_size`): as many samples as took about BATCH_SECONDS in the
last batch, so the string metrics fill a vectorised batch of STRING_BATCH in
milliseconds while the verifier, or a slow metric from another package, hands
its rows on about every second: an interruption loses seconds of work, not 512
samples'. Scores never depend on how samples are batched (a resume batches
differently too).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import Any, TypeVar, cast

from localeval.data.jsonl import Record
from localeval.data.results import INPUT_ERROR_KEY, ResultRow, dumps_json
from localeval.data.samples import Sample, parse_sample
from localeval.errors import ConfigError, InputError, JudgeError
from localeval.interrupts import ctrl_c_pressed, users_interrupt
from localeval.judge import Judge
from localeval.judge.cache import CacheCounter
from localeval.judge.shared import SharedVerdicts
from localeval.metrics import BUILTIN, Metric, Score, create_metric

PROMPT_EVALUATED = "prompt_evaluated"
CACHED = "cached"  # a metric's judge answers read from the verdict cache, in a row's timing
SAVED_SECONDS = "saved_seconds"  # the judge seconds those answers took when first given
WAIT_SECONDS = 0.1  # how often the main thread looks up from waiting for judge calls
T = TypeVar("T")
R = TypeVar("R")
STRING_BATCH = 512  # the most samples per batch without a judge: enough to amortise a vectorised metric
BATCH_SECONDS = 1.0  # what a batch without a judge should take: rows reach the results about this often
BATCH_GROWTH = 4  # a batch is at most this many times the last one: a few fast samples do not promise the rest are

SampleLike = Sample | Mapping[str, Any] | Record
MetricLike = str | Metric[Any]


def resolve_metrics(metrics: Iterable[MetricLike]) -> list[Metric[Any]]:
    """Metric objects from names or objects (one name alone is one metric, not its letters); a
    name twice is an error, not a double score."""
    if isinstance(metrics, str):
        metrics = [metrics]
    resolved = [create_metric(m) if isinstance(m, str) else m for m in metrics]
    names = [m.name for m in resolved]
    if not names:
        raise ConfigError("no metric selected")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"metric selected twice: {', '.join(duplicates)}")
    return resolved


def _as_records(samples: Iterable[SampleLike]) -> Iterator[Record]:
    for index, item in enumerate(samples, start=1):
        if isinstance(item, Record):
            yield item
        elif isinstance(item, Sample):
            yield Record(index, item)
        else:
            try:
                yield Record(index, parse_sample(item, "<samples>", index))
            except InputError as error:
                yield Record(index, None, error)


def score(
    samples: Iterable[SampleLike],
    metrics: Iterable[MetricLike],
    *,
    judge: Judge | None = None,
    skip_lines: frozenset[int] = frozenset(),
) -> Iterator[ResultRow]:
    """Score every sample with every metric; yield results in input order as they are ready.

    `samples` may be Sample objects, plain dicts (ragas or legacy field names) or
    Records from `localeval.data.jsonl.read_records`; a bad one yields a result whose
    errors name the problem, and the others are still scored. Lines in
    `skip_lines` (already scored by an interrupted run) are passed over.
    """
    selected = resolve_metrics(metrics)
    if judge is None and any(m.uses_judge() for m in selected):
        names = ", ".join(m.name for m in selected if m.uses_judge())
        raise ConfigError(f"{names} need a judge model; pass judge= (or --model on the command line)")
    if judge is not None:
        for metric in selected:  # a calibration that does not fit stops here, before any sample
            metric.check_calibration(judge.calibration)
    judged = any(m.uses_judge() for m in selected)
    batch_size = concurrency(judge) if judged else 1
    records = (r for r in _as_records(samples) if r.line not in skip_lines)
    while True:
        batch: list[Record] = []
        stop: InputError | None = None
        try:
            batch.extend(islice(records, batch_size))
        except InputError as error:  # a strict reader: still score what came before the bad line
            stop = error
        started = time.perf_counter()
        rows = score_records(batch, selected, judge)
        took = time.perf_counter() - started
        yield from rows
        if stop is not None:
            raise stop
        if len(batch) < batch_size:
            return
        if not judged:
            batch_size = next_batch_size(len(batch), took)


def next_batch_size(done: int, seconds: float) -> int:
    """The next batch without a judge: as many samples as take about BATCH_SECONDS at the last
    batch's pace (`done` samples in `seconds`), at most BATCH_GROWTH times the last batch and
    STRING_BATCH, at least one."""
    pace = done * BATCH_SECONDS / seconds if seconds > 0 else float(STRING_BATCH)
    return max(1, min(STRING_BATCH, done * BATCH_GROWTH, int(pace)))


def _new_row(line: int, sample_id: Any, **fields: Any) -> ResultRow:
    """A row of our own making: typed by construction, so it is not validated."""
    return ResultRow(line=line, id=sample_id, **fields)


def score_records(records: Sequence[Record], metrics: Sequence[Metric[Any]], judge: Judge | None) -> list[ResultRow]:
    """One batch's rows, in the records' order: an unreadable record's row names its error, a
    sample without a metric's fields has that metric's error, every other score is checked."""
    results = []
    valid: list[tuple[ResultRow, Sample]] = []
    for record in records:
        if record.sample is None:
            assert record.error is not None
            results.append(_new_row(record.line, None, errors={INPUT_ERROR_KEY: str(record.error)}))
            continue
        sample = record.sample
        result = _new_row(record.line, sample.id if sample.id is not None else record.line, extra=sample.extra)
        results.append(result)
        valid.append((result, sample))
    if judge is not None and sum(m.uses_judge() for m in metrics) > 1:
        judge = SharedVerdicts(judge)  # a prompt two metrics ask is judged once per batch
    for metric in metrics:
        ready = []
        for result, sample in valid:
            missing = metric.missing_fields(sample)
            if missing:
                _record(result, metric.name, Score.failed(_missing_message(missing)))
            else:
                ready.append((result, sample))
        if not ready:
            continue
        if metric.uses_judge():
            for (result, _), (outcome, seconds, counter) in zip(ready, _judge_each(metric, [s for _, s in ready], judge)):
                _record(result, metric.name, outcome)
                timing = result.timing.setdefault(metric.name, {})
                timing["seconds"] = round(seconds, 4)
                if counter is not None and counter.hits:  # what the verdict cache answered: this run's accounting, with the timing
                    timing[CACHED] = counter.hits
                    timing[SAVED_SECONDS] = round(counter.saved_seconds, 4)
        else:
            for (result, _), outcome in zip(ready, _safe_score(metric, [s for _, s in ready], judge)):
                _record(result, metric.name, outcome)
    return results


def _judge_each(metric: Metric[Any], samples: list[Sample], judge: Judge | None) -> list[tuple[Score, float, CacheCounter | None]]:
    """Each sample scored on its own (and timed), several at once when the judge can take
    concurrent calls (a server); results come back in input order."""

    def one(sample: Sample) -> tuple[Score, float, CacheCounter | None]:
        started = time.perf_counter()
        counter = CacheCounter(judge) if judge is not None else None
        return _safe_score(metric, [sample], counter)[0], time.perf_counter() - started, counter

    workers = concurrency(judge)
    if workers == 1 or len(samples) == 1:
        return [one(sample) for sample in samples]
    return _in_daemon_threads(one, samples, workers)


def _in_daemon_threads(work: Callable[[T], R], items: Sequence[T], workers: int) -> list[R]:
    """`work` over `items` on up to `workers` daemon threads, results in order. Daemon threads,
    not a thread pool: on Ctrl-C the main thread stops waiting at once and the process can
    exit with requests still in flight (a pool's threads are joined at exit, so a server
    that hangs would keep the process alive)."""
    results: list[R | None] = [None] * len(items)
    failures: list[BaseException] = []
    pending = iter(range(len(items)))
    lock = threading.Lock()

    def run() -> None:
        while not failures:
            with lock:
                index = next(pending, None)
            if index is None:
                return
            try:
                results[index] = work(items[index])
            except BaseException as error:  # handed to the main thread, which raises it
                failures.append(error)

    threads = [threading.Thread(target=run, daemon=True) for _ in range(min(workers, len(items)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(WAIT_SECONDS)  # short waits: Ctrl-C reaches the main thread between them
    if failures:
        raise failures[0]
    return cast(list[R], results)


def concurrency(judge: Judge | None) -> int:
    """How many samples a judge can work on at once: a server says so; in-process judges take one."""
    return max(1, int(getattr(judge, "concurrency", 1)))


def _safe_score(metric: Metric[Any], samples: list[Sample], judge: Judge | None) -> list[Score]:
    """A judge failure on one sample (for example, it cannot fit) is that sample's error, not the
    run's. What a metric returns is checked here, where it enters the pipeline (`_checked`); a
    metric from another package that raises fails its samples, naming it, not the run: whatever
    it raises (SystemExit, asyncio.CancelledError, a KeyboardInterrupt of its own, with no
    Ctrl-C behind it), short of the user's Ctrl-C, which stops the run even when the metric
    turned it into another exception."""
    try:
        scores = metric.score_batch(samples, judge)
    except JudgeError as error:
        if len(samples) == 1:
            return [Score.failed(str(error))]
        return [_safe_score(metric, [s], judge)[0] for s in samples]
    except BaseException as error:  # noqa: BLE001 - another package's code may raise anything
        if _is_builtin(metric) or users_interrupt(error):
            raise  # localeval's own bug (reported as one, with its traceback), or the user's Ctrl-C
        if ctrl_c_pressed():
            raise KeyboardInterrupt from None
        own = " of its own, with no Ctrl-C behind it" if isinstance(error, KeyboardInterrupt) else ""
        message = f"{_origin(metric)} raised {type(error).__name__}{own}: {error}"
        return [Score.failed(message) for _ in samples]
    return _checked(metric, scores, len(samples))


def _is_builtin(metric: Metric[Any]) -> bool:
    return type(metric) in BUILTIN


def _origin(metric: Metric[Any]) -> str:
    """How an error names a metric: its name, and for a metric from another package, its class."""
    cls = type(metric)
    return f"metric '{metric.name}'" if _is_builtin(metric) else f"metric '{metric.name}' ({cls.__module__}.{cls.__qualname__})"


def _checked(metric: Metric[Any], scores: Any, count: int) -> list[Score]:
    """The scores a metric returned, each made safe to count, gate and write, or replaced by
    that sample's error naming the metric: a list of exactly one Score per sample (fewer or
    more fail the whole batch: which score belongs to which sample is unknown); a value that
    is None (with an error), NaN (undefined), or a real number in [0, 1] (a numpy float or
    int is converted to float; true/false, infinities and strings are refused); details a
    JSON object (checked for a metric from another package: localeval's own are typed)."""
    if not isinstance(scores, (list, tuple)) or len(scores) != count:
        got = f"{len(scores)} scores" if isinstance(scores, (list, tuple)) else f"a {type(scores).__name__}, not a list of scores"
        return [Score.failed(f"{_origin(metric)} returned {got} for a batch of {count} samples; every sample of the batch is left unscored")] * count
    return [_checked_score(metric, score) for score in scores]


def _checked_score(metric: Metric[Any], score: Any) -> Score:
    if not isinstance(score, Score):
        return Score.failed(f"{_origin(metric)} returned {_shown(score)}, not a Score")
    problem = None if _is_builtin(metric) else _extras_problem(score)
    if problem is not None:
        return Score.failed(f"{_origin(metric)} returned {problem}")
    value: Any = score.value  # typed float | None, but a plugin may put anything there
    if value is None:
        return score if score.error else Score.failed(f"{_origin(metric)} returned no score and no error saying why")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return Score.failed(f"{_origin(metric)} returned the score {_shown(value)}, not a number in [0, 1]")
    number = float(value)
    if not (math.isnan(number) or 0.0 <= number <= 1.0):  # NaN: undefined for the sample, as for the built-ins
        return Score.failed(f"{_origin(metric)} returned the score {_shown(value)}, outside [0, 1]")
    exact = type(score.value) is float  # a numpy float or an int becomes a float, which the results and the summary hold
    return score if exact else dataclasses.replace(score, value=number)


def _extras_problem(score: Score) -> str | None:
    """What is wrong with the parts of a Score besides its value, for a metric from another
    package (localeval's own are typed by construction): details must be a JSON object with
    text keys (NaN is written as null), the error text, the usage token counts."""
    details: Any = score.details  # typed, but a plugin may put anything there
    if not isinstance(details, dict) or not all(isinstance(key, str) for key in details):
        return f"details that are not a JSON object with text keys: {_shown(details)}"
    try:
        dumps_json(details)
    except (TypeError, ValueError, RecursionError):
        return f"details that JSON cannot hold: {_shown(details)}"
    error: Any = score.error
    if error is not None and not isinstance(error, str):
        return f"the error {_shown(error)}, not text"
    usage: Any = score.usage
    if usage is not None and not (isinstance(usage, dict) and all(isinstance(k, str) and type(v) is int for k, v in usage.items())):
        return f"usage that is not token counts by name: {_shown(usage)}"
    return None


def _shown(value: Any) -> str:
    """A plugin's value in an error message: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _missing_message(missing: list[str]) -> str:
    fields = ", ".join(f"'{name}'" for name in missing)
    return f"missing required field {fields}"


def _record(result: ResultRow, name: str, outcome: Score) -> None:
    result.scores[name] = outcome.value
    if outcome.details:
        result.details[name] = outcome.details
    if outcome.error:
        result.errors[name] = outcome.error
    if outcome.usage:
        # How many prompt tokens were really evaluated depends on what the judge saw
        # before (its prefix cache), not on this sample: it goes with the timing.
        usage = dict(outcome.usage)
        evaluated = usage.pop(PROMPT_EVALUATED, None)
        result.usage[name] = usage
        if evaluated is not None:
            result.timing.setdefault(name, {})[PROMPT_EVALUATED] = evaluated
