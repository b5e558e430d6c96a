"""Scoring on a Ray cluster, for files one machine cannot score in time (`localeval score --ray`).

The only module that imports ray (the `ray` extra), and only when --ray is given.

- The input is read with Ray Data (`read_binary_files`, so from any filesystem Ray
  reads) and cut into numbered lines by `localeval.data.jsonl.numbered_lines`, exactly as the
  local reader numbers them; lines a resumed run already has are dropped there.
- Judge metrics run on a pool of actors that each load the judge once; metrics that
  need no judge run as plain Ray tasks (no pool, no model), in batches sized by time as a
  local run sizes them (`next_batch_size`: the first is one sample, each next one what took about
  a second in the last), so a slow metric without a judge (the verifier) hands rows on from its
  first seconds instead of after 512 samples.
- The driver sends batches out and takes results back in input order, so it writes
  the same results file as a local run (same lines, same order, same scores), with
  the progress line and the summary. When an actor dies, a new one is started and
  its batch is scored again: scoring is deterministic, so nothing in the file changes.
"""

from __future__ import annotations

import io
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from localeval.calibration.combination import checked_calibration
from localeval.data.jsonl import input_name, numbered_lines, to_record
from localeval.data.results import ResultRow
from localeval.errors import ConfigError
from localeval.judge.backends import open_backend
from localeval.judge.cache import cache_path
from localeval.judge.spec import JudgeSpec
from localeval.metrics import Metric, calibration_tasks
from localeval.run.runner import next_batch_size, score
from localeval.run.settings import RunSettings

JUDGE_BATCH = 2  # samples an actor scores per call: small, so a restart redoes little
READ_BATCH = 64  # lines taken from Ray Data at a time; what a task scores is sized apart from it
IN_FLIGHT_PER_WORKER = 2  # batches queued per worker, so none waits for the driver
ACTOR_THREADS = 2  # judge threads per actor when --threads is not given


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError("--ray needs Ray: pip install 'localeval[ray]'") from None
    return ray


def _judge_settings(settings: RunSettings, metrics: Sequence[Metric[Any]], threads: int) -> tuple[JudgeSpec, Any]:
    """What each actor loads its judge with: the run's spec with the actor's threads, and the
    calibration file, read here once (its tables travel)."""
    spec = JudgeSpec.of(settings).model_copy(update={"threads": threads})
    return spec, checked_calibration(settings.calibration, metrics, calibration_tasks())


class _Worker:
    """Scores batches of numbered lines: one per actor (the judge loaded once) or per task."""

    def __init__(self, metrics: list[Metric[Any]], judge_settings: tuple[JudgeSpec, Any] | None, name: str, field_map: dict[str, str]) -> None:
        # The metrics themselves travel (pickled), options and all: rebuilding them from their
        # description would lose what it leaves out (a rubric's text).
        self.metrics = metrics
        self.judge = open_backend(*judge_settings) if judge_settings is not None else None
        self.name = name
        self.field_map = field_map

    def describe(self) -> dict[str, Any] | None:
        return self.judge.describe() if self.judge is not None else None

    def score(self, lines: list[tuple[int, bytes | None]]) -> list[ResultRow]:
        records = [to_record(number, raw, self.name, self.field_map) for number, raw in lines]
        return list(score(records, self.metrics, judge=self.judge))


def _numbered(row: dict[str, Any], skip: bytes, limit: int | None) -> list[dict[str, Any]]:
    """Ray Data flat_map: a file's first `limit` bytes (those the run hashed) -> one row per
    numbered line not in `skip` (a bitmap)."""
    done = bytearray(skip)
    out = []
    for number, raw in numbered_lines(io.BytesIO(row["bytes"] if limit is None else row["bytes"][:limit])):
        index, bit = divmod(number, 8)
        if index < len(done) and done[index] >> bit & 1:
            continue
        out.append({"line": number, "raw": raw if raw is not None else b"", "overlong": raw is None})
    return out


class RayScorer:
    """A connection to a Ray cluster and the workers of one run. Use with `with`."""

    def __init__(self, settings: RunSettings, metrics: Sequence[Metric[Any]], address: str | None) -> None:
        self.ray = _ray()
        if settings.input == "-":
            raise ConfigError("--ray reads the input with Ray Data: give a file, not standard input")
        if not self.ray.is_initialized():
            # Ray on this machine listens on loopback only; a cluster's address is the user's choice.
            local = {} if address else {"_node_ip_address": "127.0.0.1"}
            self.ray.init(address=address or None, include_dashboard=False, log_to_driver=False, configure_logging=False, **local)
        self.settings = settings
        self.metrics = list(metrics)
        self.needs_judge = any(m.uses_judge() for m in metrics)
        threads = settings.threads or ACTOR_THREADS
        cpus = int(self.ray.cluster_resources().get("CPU", 1))
        self.size = max(1, cpus // threads) if self.needs_judge else max(1, cpus)
        judge_settings = _judge_settings(settings, metrics, threads) if self.needs_judge else None
        arguments = (self.metrics, judge_settings, input_name(settings.input), dict(settings.map))
        if self.needs_judge:
            self.actor_class = self.ray.remote(num_cpus=threads, max_restarts=0)(_Worker)
            self._arguments = arguments
            self.workers = [self.actor_class.remote(*arguments) for _ in range(self.size)]
        else:
            task = self.ray.remote(num_cpus=1, max_retries=3)(_score_task)
            self._task = task
            self._arguments = arguments
            self.workers = []

    def describe_judge(self) -> dict[str, Any] | None:
        return self.ray.get(self.workers[0].describe.remote()) if self.workers else None

    @property
    def cache_file(self) -> Path | None:
        """The verdict cache each actor keeps on its own machine: this path (resolved here; an
        actor on another node resolves its own default), one sqlite file per machine."""
        return cache_path(self.settings.cache) if self.needs_judge else None

    def _lines(self, skip: bytes, limit: int | None) -> Iterator[tuple[int, bytes | None]]:
        data = self.ray.data
        dataset = data.read_binary_files(self.settings.input, num_cpus=0).flat_map(_numbered, fn_args=(skip, limit), num_cpus=0)
        for batch in dataset.iter_batches(batch_size=READ_BATCH, batch_format="pandas"):
            yield from ((int(n), None if o else bytes(r)) for n, r, o in zip(batch["line"], batch["raw"], batch["overlong"]))

    def rows(self, done: Any, size: int | None) -> Iterator[ResultRow]:
        """Every row of the input's first `size` bytes whose line is not `done` (a bitmap:
        `done.bits`), in input order."""
        skip: bytes = done.bits
        pending: deque[tuple[Any, int, list[tuple[int, bytes | None]]]] = deque()
        lines = self._lines(skip, size)
        limit = max(1, self.size * IN_FLIGHT_PER_WORKER)
        batch_size = JUDGE_BATCH if self.needs_judge else 1
        exhausted = False
        turn = 0
        while True:
            while not exhausted and len(pending) < limit:
                batch = list(islice(lines, batch_size))
                if not batch:
                    exhausted = True
                    break
                slot = turn % max(1, self.size)
                pending.append((self._submit(slot, batch), slot, batch))
                turn += 1
            if not pending:
                return
            reference, slot, batch = pending.popleft()
            try:
                answer = self.ray.get(reference)
            except self.ray.exceptions.RayActorError:
                self.workers[slot] = self.actor_class.remote(*self._arguments)  # a dead actor: a new one, same batch
                pending.appendleft((self._submit(slot, batch), slot, batch))
                continue
            if self.needs_judge:
                yield from answer
                continue
            rows, seconds = answer
            batch_size = next_batch_size(len(batch), seconds)
            yield from rows

    def _submit(self, slot: int, batch: list[tuple[int, bytes | None]]) -> Any:
        if self.needs_judge:
            return self.workers[slot].score.remote(batch)
        return self._task.remote(*self._arguments, batch)

    def close(self) -> None:
        for worker in self.workers:
            self.ray.kill(worker)
        self.workers = []

    def __enter__(self) -> RayScorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _score_task(metrics: list[Metric[Any]], judge_settings: Mapping[str, Any] | None, name: str, field_map: dict[str, str], batch: list[tuple[int, bytes | None]]) -> tuple[list[ResultRow], float]:
    """A Ray task for metrics that need no judge: score one batch, with the seconds it took
    (what the next batch is sized by: the time on the worker, not the wait in the queue)."""
    started = time.perf_counter()
    rows = _Worker(metrics, None, name, field_map).score(batch)
    return rows, time.perf_counter() - started
