"""LlamaJudge: a local GGUF model in this process, through llama-cpp-python (localeval.judge.llama_runtime).

The model stays loaded for the whole run, and llama.cpp's cache keeps the tokens
of the previous prompt: a call whose prompt starts like the last one evaluates
only the new part. Prompts are cut at fixed points so that scores never depend on
what was cached before (see `_load`).
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from localeval.cores import usable_cores
from localeval.data.files import file_sha256
from localeval.errors import JudgeError, ModelError
from localeval.judge import Message, T, Usage
from localeval.judge.backends import calibration_source, calibration_tables
from localeval.judge.cache import JudgeStandIn
from localeval.judge.llama_runtime import LlamaRuntime, chat_formatter, check_version, cpu_has_amx, cpu_kind
from localeval.judge.spec import NOT_A_BOOL, SPEED_KEY, JudgeSpec, speed_only

DEFAULT_CONTEXT = 4096  # tokens: a HotpotQA sample (~1,400 tokens) and most RAG prompts fit
DEFAULT_SEED = 0
ANSWER_MAX_TOKENS = 512  # a ceiling only: schemas bound every field, so answers end well before
# A prompt's shared head (everything before its last message) is snapshotted when it is at
# least this long: the attribution prompt's worked examples (about 450 tokens, 7 s to evaluate
# on 2 cores) are restored in milliseconds after a relevance prompt took the cache.
SNAPSHOT_MIN_TOKENS = 128
SNAPSHOTS_KEPT = 4  # distinct heads (a few tens of MB for the default judge)
DEFAULT_BATCH = 512  # llama-cpp-python's default


class Options(BaseModel):
    """The gguf backend's own settings (--judge-option KEY=VALUE). Each field is named as
    llama_cpp.Llama's argument of the same meaning and handed to it as is, in process and by
    `localeval serve`: adding one is a field here. A field marked `identity: False` changes
    speed or memory, not what the judge says."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_batch: Annotated[int, NOT_A_BOOL] = Field(
        default=DEFAULT_BATCH, ge=1, le=1 << 16,
        description="Prompt tokens llama.cpp evaluates per step; part of a run's identity (another split of the prompt can move a logit in its last digits).",
    )
    use_mlock: bool = Field(
        default=False, description="Lock the model in RAM, so a busy machine never pages it out mid-run (memory, not verdicts).",
        json_schema_extra={"identity": False},
    )


def parse_answer(text: str, schema: type[T]) -> T:
    """The grammar's JSON, validated by the schema.

    llama-cpp-python's grammar for a length-bounded string admits raw control
    characters (a newline inside a string, seen with Qwen2.5-1.5B), which strict JSON
    forbids; they are accepted here rather than losing the answer.
    """
    try:
        return schema.model_validate(json.loads(text, strict=False))
    except (ValueError, ValidationError) as exc:
        reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise JudgeError(f"the judge's answer does not fit {schema.__name__}: {reason}") from None


def default_threads() -> int:
    """The cores this process may run on (its affinity and its container's CPU quota, not the
    host's count: localeval.cores), at most 8: llama.cpp gets slower, not faster, with more
    threads than it may run."""
    return min(8, usable_cores())


class LlamaJudge:
    """A loaded GGUF model answering through the Judge protocol. `close()` it, or use `with`."""

    def __init__(
        self,
        model_path: Path,
        *,
        n_ctx: int = DEFAULT_CONTEXT,
        n_threads: int | None = None,
        seed: int = DEFAULT_SEED,
        gpu_layers: int = 0,
        options: Options | None = None,
        catalog_name: str | None = None,
        calibration: Mapping[str, Mapping[str, Any]] | None = None,
        calibration_file: dict[str, str] | None = None,
        sha256: str | None = None,
    ) -> None:
        """`sha256`: the weights' digest when the caller has it (a catalog model, checked when
        resolved), so the file is not read twice."""
        from localeval.models.store import check_gguf

        check_gguf(model_path)
        self.model_path = model_path
        self.catalog_name = catalog_name
        self.seed = seed
        self.gpu_layers = gpu_layers
        self.n_threads = n_threads or default_threads()
        self._calibration = dict(calibration or {})
        self._calibration_file = calibration_file
        self.options = options or Options()
        self._runtime = LlamaRuntime(model_path, n_ctx=n_ctx, n_threads=self.n_threads, seed=seed, gpu_layers=gpu_layers, extra=self.options.model_dump())
        self._grammars: dict[str, Any] = {}
        self._sha256 = sha256
        self._formatters: dict[bool, Any] = {}
        self._blank_line_tokens: dict[int, bool] = {}
        self._option_tokens: dict[str, int] = {}
        self._snapshots: OrderedDict[tuple[int, ...], bytes] = OrderedDict()

    @property
    def context_size(self) -> int:
        return self._runtime.context_size

    @property
    def calibration(self) -> Mapping[str, Mapping[str, Any]]:
        return self._calibration

    def count_tokens(self, text: str) -> int:
        return len(self._runtime.tokenize(text))

    def _grammar(self, schema: type[BaseModel]) -> Any:
        key = json.dumps(schema.model_json_schema(), sort_keys=True)
        if key not in self._grammars:
            self._grammars[key] = self._runtime.grammar_from_json_schema(key)
        return self._grammars[key]

    def _formatter(self, generation_prompt: bool) -> Any:
        if generation_prompt not in self._formatters:
            self._formatters[generation_prompt] = chat_formatter(self._runtime, generation_prompt)
        return self._formatters[generation_prompt]

    def _render(self, messages: list[Message], generation_prompt: bool) -> str:
        """The model's chat template applied to `messages`; a template that fails (it raises,
        or indexes what is not there) is the model's error, named as such. (jinja2 comes with
        llama-cpp-python, so it is imported with the judge, not with this module.)"""
        from jinja2 import TemplateError

        try:
            return str(self._formatter(generation_prompt)(messages=messages).prompt)
        except (TemplateError, TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
            raise ModelError(f"the chat template of {self.model_path.name} failed: {type(exc).__name__}: {str(exc)[:200]}") from None

    def _tokenize(self, prompt: str, messages: list[Message]) -> list[int]:
        """`prompt`'s tokens, with the template's own markers read as control tokens and the
        messages' text read as text: a context containing "<|im_end|>" stays those characters,
        never a real end of message."""
        tokens: list[int] = []
        cursor = 0
        for message in messages:
            content = message["content"]
            at = prompt.find(content, cursor) if content else -1
            if at < 0:
                continue
            tokens += self._runtime.tokenize(prompt[cursor:at], bos=not tokens and cursor == 0, special=True)
            tokens += self._runtime.tokenize(content)
            cursor = at + len(content)
        tokens += self._runtime.tokenize(prompt[cursor:], bos=cursor == 0, special=True)
        return tokens

    def _tokens(self, messages: list[Message], prefix: str) -> tuple[list[int], list[int], int]:
        """The prompt's tokens (the chat template, then the answer's `prefix`), the
        positions where each message ends and the answer starts (where they fall
        between tokens), and where the last message starts (0 if that is not a cut)."""
        prompt = self._render(messages, True)
        tokens = self._tokenize(prompt + prefix, messages)
        if len(tokens) >= self.context_size:
            raise JudgeError(f"the prompt has {len(tokens)} tokens, more than the model's window of {self.context_size}")
        heads = [self._render(messages[:count], False) for count in range(1, len(messages))]
        last_message = 0
        if prefix:
            heads.append(prompt)
        cuts = []
        for count, head in enumerate(heads, start=1):
            head_tokens = self._tokenize(head, messages[:count])
            if tokens[: len(head_tokens)] == head_tokens:
                cuts.append(len(head_tokens))
                if count == len(messages) - 1:
                    last_message = len(head_tokens)
        return tokens, cuts, last_message

    def _ends_blank_line(self, token: int) -> bool:
        if token not in self._blank_line_tokens:
            self._blank_line_tokens[token] = self._runtime.token_text(token).endswith(b"\n\n")
        return self._blank_line_tokens[token]

    def _load(self, tokens: list[int], fixed_cuts: list[int], last_message: int) -> int:
        """Make llama.cpp's cache hold exactly `tokens`, with fresh logits for the last one;
        return how many tokens were evaluated.

        The prompt is evaluated in segments that depend only on its text: one per
        message, and within a message one per blank-line-ended block (the passage,
        the question, ...), then the answer's prefix. Cached tokens are reused only up
        to a segment boundary. llama.cpp's results depend slightly on how a prompt is
        split into batches, so reusing whatever prefix happened to be cached would make
        a sample's scores depend on the sample before it, or on where a run resumed.

        Everything before the last message (instructions and worked examples, the same
        for every prompt of its kind) is kept as a snapshot when it is long, and restored
        when another kind of prompt has taken the cache since: the snapshot holds exactly
        what evaluating those segments again would, so the scores do not change.
        """
        cuts = set(fixed_cuts) | {i + 1 for i, token in enumerate(tokens[:-1]) if self._ends_blank_line(token)}
        boundaries = sorted(c for c in cuts if 0 < c < len(tokens))
        cached = _common_prefix(self._runtime.cached(), tokens)
        start = max([0, *(c for c in boundaries if c <= cached)])
        head = tuple(tokens[:last_message]) if last_message >= SNAPSHOT_MIN_TOKENS else ()
        if head and start < len(head) and head in self._snapshots:
            self._snapshots.move_to_end(head)
            self._runtime.restore(head, self._snapshots[head])
            start = len(head)
        self._runtime.keep(start)
        later = [c for c in boundaries if c > start]
        for begin, end in zip([start, *later], [*later, len(tokens)]):
            self._runtime.evaluate(tokens[begin:end])
            if head and end == len(head) and head not in self._snapshots:
                self._snapshots[head] = self._runtime.snapshot()
                while len(self._snapshots) > SNAPSHOTS_KEPT:
                    self._snapshots.popitem(last=False)
        return len(tokens) - start

    def ask(self, messages: list[Message], schema: type[T], max_tokens: int = ANSWER_MAX_TOKENS) -> tuple[T, Usage]:
        """Greedy decoding under the schema's grammar; the answer always parses."""
        started = time.perf_counter()
        tokens, fixed_cuts, last_message = self._tokens(messages, "")
        evaluated = self._load(tokens, fixed_cuts, last_message)
        # The whole prompt is cached now with fresh logits: generation starts at once.
        text, generated, truncated = self._runtime.complete(tokens, self._grammar(schema), max_tokens, self.seed)
        if truncated:
            raise JudgeError(f"the judge's answer reached {max_tokens} tokens without finishing")
        usage = Usage(prompt_tokens=len(tokens), prompt_evaluated=evaluated, completion_tokens=generated, seconds=time.perf_counter() - started)
        return parse_answer(text, schema), usage

    def _option_token(self, option: str) -> int:
        if option not in self._option_tokens:
            tokens = self._runtime.tokenize(option)
            if len(tokens) != 1:
                raise JudgeError(f"the option {option!r} is not a single token for {self.model_path.name}")
            self._option_tokens[option] = tokens[0]
        return self._option_tokens[option]

    def choose(self, messages: list[Message], prefix: str, options: Sequence[str]) -> tuple[list[float], Usage]:
        """The probabilities of each option as the next token after the answer's `prefix`.

        One forward pass over the part of the prompt that is not cached yet, then the
        logits at the last position, restricted to the options and normalised.
        """
        started = time.perf_counter()
        option_ids = [self._option_token(option) for option in options]
        tokens, fixed_cuts, last_message = self._tokens(messages, prefix)
        evaluated = self._load(tokens, fixed_cuts, last_message)
        logits = self._runtime.last_logits()[option_ids]
        if not np.all(np.isfinite(logits)):
            raise JudgeError(f"the model's logits for {list(options)} are not finite ({logits.tolist()}); its verdict cannot be read")
        weights = np.exp(logits - logits.max())
        usage = Usage(prompt_tokens=len(tokens), prompt_evaluated=evaluated, completion_tokens=0, seconds=time.perf_counter() - started)
        return [float(w) for w in weights / weights.sum()], usage

    def describe(self) -> dict[str, Any]:
        """Provenance for the results: which weights, which settings."""
        if self._sha256 is None:
            self._sha256 = file_sha256(self.model_path)
        return description(
            self.model_path, self.catalog_name, self._sha256, self.context_size, self.gpu_layers, self.seed, self.options, self.n_threads,
            self._calibration, self._calibration_file, self._runtime.version,
        )

    def close(self) -> None:
        self._runtime.close()

    def __enter__(self) -> LlamaJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def description(
    path: Path, catalog_name: str | None, sha256: str, context_size: int, gpu_layers: int, seed: int, options: Options, n_threads: int,
    calibration: Mapping[str, Mapping[str, Any]], calibration_file: dict[str, str] | None, version: str,
) -> dict[str, Any]:
    """A GGUF judge's description, loaded or not (the verdict cache describes a judge it never
    loads, and a run's header must not depend on whether it did)."""
    chosen, speed = options.model_dump(), speed_only(Options)
    return {
        "backend": "gguf",
        "model": catalog_name or path.name,
        "file": path.name,
        "sha256": sha256,
        "n_ctx": context_size,
        "gpu_layers": gpu_layers,
        "seed": seed,
        "temperature": 0.0,
        "calibration": {k: dict(v) for k, v in calibration.items()},
        "calibration_file": calibration_file,
        "llama_cpp_python": version,
        **{k: v for k, v in chosen.items() if k not in speed},
        SPEED_KEY: {"n_threads": n_threads, **{k: v for k, v in chosen.items() if k in speed}},  # how fast, not what
    }


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens two sequences share."""
    count = 0
    for x, y in zip(a, b):
        if x != y:
            break
        count += 1
    return count


def open_judge(target: str | None, spec: JudgeSpec, options: Options, calibration: Any = None) -> LlamaJudge:
    """The `gguf` backend: `target` is a GGUF path or catalog name (None: $LOCALEVAL_MODEL, else the default)."""
    from localeval.models.store import CATALOG, resolve_model

    path, catalog_name = resolve_model(target)
    return _open(path, catalog_name, CATALOG[catalog_name].sha256 if catalog_name else None, spec, options, calibration)  # a catalog file was checked against it


def _open(path: Path, catalog_name: str | None, sha256: str | None, spec: JudgeSpec, options: Options, calibration: Any) -> LlamaJudge:
    return LlamaJudge(
        path,
        n_ctx=spec.n_ctx or DEFAULT_CONTEXT,
        n_threads=spec.threads,
        seed=DEFAULT_SEED if spec.seed is None else spec.seed,
        gpu_layers=spec.gpu_layers or 0,
        options=options,
        catalog_name=catalog_name,
        calibration=_tables(catalog_name, calibration),
        calibration_file=calibration_source(calibration),
        sha256=sha256,
    )


def _tables(catalog_name: str | None, calibration: Any) -> dict[str, Mapping[str, Any]]:
    from localeval.models.store import CATALOG

    return calibration_tables(CATALOG[catalog_name].calibration if catalog_name else {}, calibration)


def stand_in(target: str | None, spec: JudgeSpec, options: Options, calibration: Any = None) -> JudgeStandIn:
    """The `gguf` judge as the verdict cache sees it before loading it (localeval.judge.cache):
    the weights are found and hashed, llama.cpp is not imported. Its identity holds all that
    moves a logit: the weights, the context size, the GPU layers, the options that are not
    speed only (n_batch), the llama-cpp-python version, the CPU's kind and whether llama.cpp's
    extra buffer types are off on it (llama_runtime.safe_loading). The seed only steers `ask`,
    and is in its keys alone."""
    from localeval.models.store import CATALOG, resolve_model

    path, catalog_name = resolve_model(target)
    sha256 = CATALOG[catalog_name].sha256 if catalog_name else file_sha256(path)  # a catalog file was checked against it
    version = check_version()
    gpu_layers = spec.gpu_layers or 0
    seed = DEFAULT_SEED if spec.seed is None else spec.seed
    n_threads = spec.threads or default_threads()
    tables = _tables(catalog_name, calibration)
    identity = {
        "backend": "gguf", "sha256": sha256, "n_ctx": spec.n_ctx or DEFAULT_CONTEXT, "gpu_layers": gpu_layers, "llama_cpp_python": version,
        "options": {k: v for k, v in options.model_dump().items() if k not in speed_only(Options)}, "cpu": cpu_kind(),
        "flash_attn": True, "extra_buffer_types": not cpu_has_amx(),
    }

    def describe(context_size: int) -> dict[str, Any]:
        return description(path, catalog_name, sha256, context_size, gpu_layers, seed, options, n_threads, tables, calibration_source(calibration), version)

    return JudgeStandIn(identity=identity, calibration=tables, describe=describe, load=lambda: _open(path, catalog_name, sha256, spec, options, calibration), seed=seed)
