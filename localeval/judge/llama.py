"""LlamaJudge: a local GGUF model through llama-cpp-python, answering in grammar-constrained JSON.

The only module that imports llama_cpp, and only when a judge is built, so a run
with the non-LLM metrics alone never pays for (or needs) llama.cpp. The model stays
loaded for the whole run, and its cache keeps the tokens of the previous prompt:
a call whose prompt starts like the last one evaluates only the new part, cut at
fixed points so that scores never depend on what was cached (see `_load`).
Prompts are laid out for that (see prompts.py).

A verdict is read as a probability (`choose`); everything the judge writes
(selections, claims, reasons) is decoded under a grammar, so it always parses.
"""

from __future__ import annotations

import atexit
import json
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from pydantic import BaseModel, ValidationError

from localeval.errors import JudgeError, ModelError
from localeval.judge import Message, T, Usage
from localeval.models import check_gguf, file_sha256

DEFAULT_CONTEXT = 4096  # tokens: a HotpotQA sample (~1,400 tokens) and most RAG prompts fit
DEFAULT_SEED = 0
ANSWER_MAX_TOKENS = 512  # a ceiling only: schemas bound every field, so answers end well before
# GBNF for the rest of a JSON string: at most %d characters (no raw quote, backslash
# or control character; escapes allowed), then the closing quote.
STRING_GRAMMAR = r"""
root ::= char{0,%d} "\""
char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})
"""


@contextmanager
def _without_extra_buffer_types(llama_cpp: Any) -> Iterator[None]:
    """Load with llama.cpp's "extra buffer types" (the AMX and repacked-weight kernels) off.

    On the Sapphire Rapids CPUs this project runs on, llama.cpp's AMX matmul
    segfaults in the first decode (ggml_backend_amx_mul_mat, seen with 0.3.36).
    llama-cpp-python exposes no argument for `use_extra_bufts`, so the default
    model parameters are wrapped for the duration of the load only.
    """
    low_level = llama_cpp.llama_cpp
    original = low_level.llama_model_default_params

    def defaults() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    low_level.llama_model_default_params = defaults
    try:
        yield
    finally:
        low_level.llama_model_default_params = original


def parse_answer(text: str, schema: type[T]) -> T:
    """The grammar's JSON, validated by the schema.

    llama-cpp-python's grammar for a length-bounded string admits raw control
    characters (a newline inside a reason, seen with Qwen2.5-1.5B), which strict JSON
    forbids; they are accepted here rather than losing the verdict.
    """
    try:
        return schema.model_validate(json.loads(text, strict=False))
    except (ValueError, ValidationError) as exc:
        reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise JudgeError(f"the judge's answer does not fit {schema.__name__}: {reason}") from None


def default_threads() -> int:
    """Physical-ish cores: llama.cpp gets slower, not faster, with more threads than cores."""
    return max(1, min(8, os.cpu_count() or 1))


class LlamaJudge:
    """A loaded GGUF model. `ask` returns a validated object of the schema given."""

    def __init__(
        self,
        model_path: Path,
        *,
        n_ctx: int = DEFAULT_CONTEXT,
        n_threads: int | None = None,
        seed: int = DEFAULT_SEED,
        catalog_name: str | None = None,
        thresholds: Mapping[str, float] | None = None,
    ) -> None:
        check_gguf(model_path)
        import llama_cpp  # deferred: see the module docstring

        self._llama_cpp = llama_cpp
        self.model_path = model_path
        self.catalog_name = catalog_name
        self.seed = seed
        self.thresholds: Mapping[str, float] = dict(thresholds or {})
        self.n_threads = n_threads or default_threads()
        try:
            with _without_extra_buffer_types(llama_cpp):
                self._llm = llama_cpp.Llama(
                    model_path=str(model_path),
                    n_ctx=n_ctx,
                    n_threads=self.n_threads,
                    n_threads_batch=self.n_threads,
                    seed=seed,
                    flash_attn=True,  # about +25% prefill on CPU here
                    verbose=False,
                )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(f"llama.cpp could not load {model_path}: {exc}") from None
        # Free llama.cpp's memory before interpreter teardown: left to the garbage
        # collector at exit, llama-cpp-python prints "Exception ignored in __del__".
        atexit.register(self._llm.close)
        self._grammars: dict[str, Any] = {}
        self._sha256: str | None = None
        self._formatters: dict[bool, Any] = {}
        self._blank_line_tokens: dict[int, bool] = {}

    @property
    def context_size(self) -> int:
        return int(self._llm.n_ctx())

    def count_tokens(self, text: str) -> int:
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def _grammar(self, schema: type[BaseModel]) -> Any:
        key = json.dumps(schema.model_json_schema(), sort_keys=True)
        if key not in self._grammars:
            self._grammars[key] = self._llama_cpp.LlamaGrammar.from_json_schema(key, verbose=False)
        return self._grammars[key]

    def _string_grammar(self, max_chars: int) -> Any:
        key = f"string:{max_chars}"
        if key not in self._grammars:
            self._grammars[key] = self._llama_cpp.LlamaGrammar.from_string(STRING_GRAMMAR % max_chars, verbose=False)
        return self._grammars[key]

    def _formatter(self, generation_prompt: bool) -> Any:
        """The model's own chat template (the one create_chat_completion would use)."""
        if generation_prompt not in self._formatters:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            template = self._llm.metadata.get("tokenizer.chat_template")
            if not template:
                raise ModelError(f"{self.model_path.name} has no chat template in its metadata")
            model = self._llm._model
            self._formatters[generation_prompt] = Jinja2ChatFormatter(
                template=template,
                eos_token=model.token_get_text(self._llm.token_eos()),
                bos_token=model.token_get_text(self._llm.token_bos()),
                add_generation_prompt=generation_prompt,
            )
        return self._formatters[generation_prompt]

    def _tokens(self, messages: list[Message], prefix: str) -> tuple[list[int], list[int]]:
        """The prompt's tokens (the chat template, then the answer's `prefix`), and the
        positions where each message ends and the answer starts (where they fall
        between tokens)."""
        tokenize = self._llm.tokenize
        prompt = str(self._formatter(True)(messages=messages).prompt)
        tokens = tokenize((prompt + prefix).encode("utf-8"), add_bos=True, special=True)
        if len(tokens) >= self.context_size:
            raise JudgeError(f"the prompt has {len(tokens)} tokens, more than the model's window of {self.context_size}")
        heads = [str(self._formatter(False)(messages=messages[:count]).prompt) for count in range(1, len(messages))]
        if prefix:
            heads.append(prompt)
        cuts = []
        for head in heads:
            head_tokens = tokenize(head.encode("utf-8"), add_bos=True, special=True)
            if tokens[: len(head_tokens)] == head_tokens:
                cuts.append(len(head_tokens))
        return tokens, cuts

    def _ends_blank_line(self, token: int) -> bool:
        if token not in self._blank_line_tokens:
            self._blank_line_tokens[token] = self._llm.detokenize([token], special=True).endswith(b"\n\n")
        return self._blank_line_tokens[token]

    def _load(self, tokens: list[int], fixed_cuts: list[int]) -> int:
        """Make llama.cpp's cache hold exactly `tokens`, with fresh logits for the last one;
        return how many tokens were evaluated.

        The prompt is evaluated in segments that depend only on its text: one per
        message, and within a message one per blank-line-ended block (the context,
        the question, the task, ...), then the answer's prefix. Cached tokens are
        reused only up to a segment boundary. llama.cpp's results depend slightly on
        how a prompt is split into batches, so reusing
        whatever prefix happened to be cached would make a sample's scores depend on
        the sample before it, or on where a run resumed.
        """
        llm = self._llm
        cuts = set(fixed_cuts) | {i + 1 for i, token in enumerate(tokens[:-1]) if self._ends_blank_line(token)}
        cuts = sorted(c for c in cuts if 0 < c < len(tokens))
        cached = llm.longest_token_prefix(llm._input_ids, tokens)
        start = max([0, *(c for c in cuts if c <= cached)])
        llm.n_tokens = start
        later = [c for c in cuts if c > start]
        for begin, end in zip([start, *later], [*later, len(tokens)]):
            llm.eval(tokens[begin:end])
        return len(tokens) - start

    def _complete(self, messages: list[Message], prefix: str, grammar: Any, max_tokens: int) -> tuple[str, Usage]:
        """Greedy decoding under `grammar`, continuing the answer from `prefix`."""
        started = time.perf_counter()
        tokens, fixed_cuts = self._tokens(messages, prefix)
        evaluated = self._load(tokens, fixed_cuts)
        # The whole prompt is cached now with fresh logits: generation starts at once.
        out = self._llm.create_completion(prompt=tokens, grammar=grammar, temperature=0.0, max_tokens=max_tokens, seed=self.seed)
        choice = out["choices"][0]  # type: ignore[index]
        if choice.get("finish_reason") == "length":
            raise JudgeError(f"the judge's answer reached {max_tokens} tokens without finishing")
        return str(choice["text"]), Usage(
            prompt_tokens=len(tokens),
            prompt_evaluated=evaluated,
            completion_tokens=int(out["usage"]["completion_tokens"]),  # type: ignore[index]
            seconds=time.perf_counter() - started,
        )

    def ask(self, messages: list[Message], schema: type[T], max_tokens: int = ANSWER_MAX_TOKENS) -> tuple[T, Usage]:
        """Greedy decoding under the schema's grammar; the answer always parses."""
        text, usage = self._complete(messages, "", self._grammar(schema), max_tokens)
        return parse_answer(text, schema), usage

    def write_string(self, messages: list[Message], prefix: str, max_chars: int) -> tuple[str, Usage]:
        """The contents of the JSON string the answer's `prefix` opens (it ends with the
        opening quote), at most `max_chars` characters, decoded.

        Used after `choose` has fixed a verdict: the reason is written for that verdict,
        under a grammar that admits only a JSON string, so it always decodes.
        """
        # max_tokens: a token is at least one character, so the grammar ends first.
        text, usage = self._complete(messages, prefix, self._string_grammar(max_chars), max_chars + 8)
        return str(json.loads('"' + text, strict=False)), usage

    def _option_token(self, option: str) -> int:
        tokens = self._llm.tokenize(option.encode("utf-8"), add_bos=False, special=False)
        if len(tokens) != 1:
            raise JudgeError(f"the option {option!r} is not a single token for {self.model_path.name}")
        return int(tokens[0])

    def choose(self, messages: list[Message], prefix: str, options: Sequence[str]) -> tuple[list[float], Usage]:
        """The probabilities of each option as the next token after the answer's `prefix`.

        One forward pass over the part of the prompt that is not cached yet, then
        the logits at the last position, restricted to the options and normalised.
        Reading the probability instead of sampling the argmax lets the caller
        choose its own decision threshold.
        """
        started = time.perf_counter()
        option_ids = [self._option_token(option) for option in options]
        tokens, fixed_cuts = self._tokens(messages, prefix)
        evaluated = self._load(tokens, fixed_cuts)
        logits = np.ctypeslib.as_array(self._llm._ctx.get_logits(), shape=(self._llm.n_vocab(),))[option_ids].astype(np.float64)
        weights = np.exp(logits - logits.max())
        usage = Usage(prompt_tokens=len(tokens), prompt_evaluated=evaluated, completion_tokens=0, seconds=time.perf_counter() - started)
        return [float(w) for w in weights / weights.sum()], usage

    def describe(self) -> dict[str, Any]:
        """Provenance for the results: which weights, which settings."""
        if self._sha256 is None:
            self._sha256 = file_sha256(self.model_path)
        return {
            "model": self.catalog_name or self.model_path.name,
            "file": self.model_path.name,
            "sha256": self._sha256,
            "n_ctx": self.context_size,
            "n_threads": self.n_threads,
            "seed": self.seed,
            "temperature": 0.0,
            "thresholds": dict(self.thresholds),
            "llama_cpp_python": self._llama_cpp.__version__,
        }
