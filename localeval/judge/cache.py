"""The verdict cache: a judge that answers a prompt it has answered before, in this run or an
earlier one, from disk, and loads the real judge only on the first prompt it has not.

A hit is exact by construction. An entry's key is the SHA-256 of everything that decides the
judge's answer:

- the judge's identity (`JudgeStandIn.identity`): for a GGUF judge the weights' SHA-256, the
  context size, the GPU layers, every llama.cpp option that can move a logit, the
  llama-cpp-python version and the CPU's kind (its kernels differ); for a server, its URL and
  the served model's name, as the results header records them;
- the call: the exact messages and answer prefix and the options (`choose`), or the messages,
  the schema and `max_tokens`, and the seed (`ask`); the text (`count_tokens`);
- the cache's format version (KEY_VERSION).

Speed settings (threads, a server's concurrency) and the calibration are not in the key: they
change how fast the answer comes or what a metric makes of it, never the answer. The value is
what the judge returned (probabilities, floats written so they read back bit for bit; the
answer object; the token count) with the Usage it reported, so a run that reads the cache
scores what an uncached run scores, token counts included. What a hit reports as its cost is
what this run spent: no tokens evaluated, the seconds of the lookup, marked `cached`, with the
judge seconds it saved.

The judge itself is loaded by `JudgeStandIn.load`, on the first miss: a run whose every prompt
is cached never imports llama.cpp. The verifier's answers are kept in the same file, under keys
of their own (localeval.graders.verifier_cache).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localeval.judge.spec import SPEED_KEY
from localeval.judge.usage import Usage
from localeval.judge.verdict_store import VerdictStore
from localeval.judge.wrapper import WrappedJudge

if TYPE_CHECKING:  # the package loads its backends, which load this module: names for the types only
    from localeval.judge import Judge, Message, T

KEY_VERSION = 1  # in every key: a change of what a key means makes every old entry a miss
CACHE_ENV = "LOCALEVAL_CACHE"  # a cache file's path, or "off"
CACHE_FILE = "verdicts.sqlite"
OFF_WORDS = frozenset({"off", "0", "false", "no", "none"})
NOT_ANSWERS = ("calibration", "calibration_file", SPEED_KEY)  # description keys that never change an answer


def default_cache_path() -> Path:
    """Next to the models: $LOCALEVAL_HOME/verdicts.sqlite, else ~/.cache/localeval/verdicts.sqlite."""
    from localeval.models.store import store_dir

    return store_dir().parent / CACHE_FILE


def cache_path(setting: str | bool | None) -> Path | None:
    """The cache file a run uses: `setting` is JudgeSpec.cache (a path, False or one of OFF_WORDS
    for none, as the help says: `--cache false` makes no file named `false`, which ./false would;
    None or True for the default); without one, $LOCALEVAL_CACHE (a path, or "off"); else the default."""
    if setting is False:
        return None
    if isinstance(setting, str) and setting.strip().lower() in OFF_WORDS:
        return None
    if isinstance(setting, str) and setting:
        return Path(setting).expanduser()
    from_env = os.environ.get(CACHE_ENV, "").strip()
    if from_env:
        return None if from_env.lower() in OFF_WORDS else Path(from_env).expanduser()
    return default_cache_path()


def digest(*parts: Any) -> bytes:
    """The SHA-256 of `parts` as canonical JSON (keys sorted; floats as repr writes them)."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).digest()


def answer_identity(description: Mapping[str, Any]) -> dict[str, Any]:
    """What of a judge's description decides its answers (all but speed and calibration)."""
    return {k: v for k, v in description.items() if k not in NOT_ANSWERS}


@dataclass
class JudgeStandIn:
    """What the cache needs of a judge before it is loaded: its `identity` (the key's judge part,
    a JSON object), its `calibration` tables, its description given its context size
    (`describe`), how to `load` it, and its context size when that is known without loading
    (else it is read from the cache, where the first load of the same judge kept it)."""

    identity: dict[str, Any]
    calibration: Mapping[str, Mapping[str, Any]]
    describe: Callable[[int], dict[str, Any]]
    load: Callable[[], Judge]
    context_size: int | None = None
    concurrency: int = 1
    seed: int = 0


@dataclass
class CacheTally:
    """The run's answers by where they came from."""

    hits: int = 0
    misses: int = 0
    saved_seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


def _usage_fields(usage: Usage) -> dict[str, Any]:
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens, "seconds": usage.seconds}


class CachedJudge:
    """A Judge whose answers are kept in a VerdictStore (see the module docstring). Close it:
    that commits the last entries and closes the judge, if one was loaded."""

    def __init__(self, stand_in: JudgeStandIn, store: VerdictStore) -> None:
        self._stand_in = stand_in
        self._store = store
        self._judge: Judge | None = None
        self._load_lock = threading.Lock()
        self._identity = digest("judge", KEY_VERSION, stand_in.identity).hex()
        self.tally = CacheTally()
        self.cache_file = store.path

    # -- the judge, loaded on the first miss -------------------------------------

    @property
    def loaded(self) -> bool:
        """Whether the real judge was loaded (a run of cached prompts never loads it)."""
        return self._judge is not None

    def _inner(self) -> Judge:
        with self._load_lock:
            if self._judge is None:
                self._judge = self._stand_in.load()
                self._store.put(digest("context", self._identity), json.dumps(self._judge.context_size))
            return self._judge

    def _recall(self, key: bytes) -> Any:
        text = self._store.get(key)
        if text is None:
            return None
        try:
            return json.loads(text)
        except ValueError:
            return None

    def _hit(self, usage: Mapping[str, Any], started: float) -> Usage:
        saved = float(usage["seconds"])
        with self.tally.lock:
            self.tally.hits += 1
            self.tally.saved_seconds += saved
        return Usage(
            prompt_tokens=int(usage["prompt_tokens"]), prompt_evaluated=0, completion_tokens=int(usage["completion_tokens"]),
            seconds=time.perf_counter() - started, cached=True, saved_seconds=saved,
        )

    def _missed(self) -> None:
        with self.tally.lock:
            self.tally.misses += 1

    # -- the Judge protocol ----------------------------------------------------------

    def choose(self, messages: list[Message], prefix: str, options: Sequence[str]) -> tuple[list[float], Usage]:
        started = time.perf_counter()
        key = digest("choose", self._identity, messages, prefix, list(options))
        found = self._recall(key)
        if _is_choice(found, len(options)):
            return [float(p) for p in found["p"]], self._hit(found["u"], started)
        self._missed()
        probabilities, usage = self._inner().choose(messages, prefix, options)
        self._store.put(key, json.dumps({"p": [float(p) for p in probabilities], "u": _usage_fields(usage)}))
        return probabilities, usage

    def ask(self, messages: list[Message], schema: type[T], max_tokens: int = 512) -> tuple[T, Usage]:
        started = time.perf_counter()
        shape = [f"{schema.__module__}.{schema.__qualname__}", schema.model_json_schema()]
        key = digest("ask", self._identity, self._stand_in.seed, messages, shape, max_tokens)
        found = self._recall(key)
        if isinstance(found, dict) and _is_usage(found.get("u")) and "a" in found:
            try:
                answer = schema.model_validate(found["a"])
            except ValueError:
                answer = None
            if answer is not None:
                return answer, self._hit(found["u"], started)
        self._missed()
        answer, usage = self._inner().ask(messages, schema, max_tokens)
        self._store.put(key, json.dumps({"a": answer.model_dump(mode="json"), "u": _usage_fields(usage)}))
        return answer, usage

    def count_tokens(self, text: str) -> int:
        key = digest("count", self._identity, text)
        found = self._recall(key)
        if type(found) is int and found >= 0:
            return found
        count = self._inner().count_tokens(text)
        self._store.put(key, json.dumps(count))
        return count

    @property
    def context_size(self) -> int:
        if self._judge is not None:
            return self._judge.context_size
        if self._stand_in.context_size is not None:
            return self._stand_in.context_size
        found = self._recall(digest("context", self._identity))
        if type(found) is int and found > 0:
            return found
        return self._inner().context_size

    @property
    def calibration(self) -> Mapping[str, Mapping[str, Any]]:
        return self._stand_in.calibration

    @property
    def concurrency(self) -> int:
        return self._stand_in.concurrency

    def describe(self) -> dict[str, Any]:
        """The judge's own description: the same whether it was loaded or not."""
        if self._judge is not None:
            return self._judge.describe()
        return self._stand_in.describe(self.context_size)

    def close(self) -> None:
        self._store.close()
        if self._judge is not None:
            self._judge.close()

    def __enter__(self) -> CachedJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _is_usage(found: Any) -> bool:
    return (
        isinstance(found, dict)
        and all(type(found.get(k)) is int and found[k] >= 0 for k in ("prompt_tokens", "completion_tokens"))
        and isinstance(found.get("seconds"), (int, float))
    )


def _is_choice(found: Any, count: int) -> bool:
    return (
        isinstance(found, dict)
        and _is_usage(found.get("u"))
        and isinstance(found.get("p"), list)
        and len(found["p"]) == count
        and all(isinstance(p, (int, float)) and not isinstance(p, bool) for p in found["p"])
    )


def cached(stand_in: JudgeStandIn, path: Path | None) -> Judge:
    """The judge of `stand_in` behind the cache at `path`, or loaded now when there is none."""
    if path is None:
        return stand_in.load()
    return CachedJudge(stand_in, VerdictStore(path))


class CacheCounter(WrappedJudge):
    """A judge as one metric sees it for one sample, counting the answers that came from the
    verdict cache and the judge seconds they saved (the runner puts both with the sample's
    timing). An answer another metric already had this batch (SharedVerdicts) is not counted:
    it is that metric's."""

    def __init__(self, judge: Judge) -> None:
        super().__init__(judge)
        self.hits = 0
        self.saved_seconds = 0.0
        self._lock = threading.Lock()

    def _count(self, usage: Usage) -> None:
        if usage.cached and not usage.reused:
            with self._lock:
                self.hits += 1
                self.saved_seconds += usage.saved_seconds

    def choose(self, messages: list[Message], prefix: str, options: Sequence[str]) -> tuple[list[float], Usage]:
        probabilities, usage = self._judge.choose(messages, prefix, options)
        self._count(usage)
        return probabilities, usage

    def ask(self, messages: list[Message], schema: type[T], max_tokens: int = 512) -> tuple[T, Usage]:
        answer, usage = self._judge.ask(messages, schema, max_tokens)
        self._count(usage)
        return answer, usage
