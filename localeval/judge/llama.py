"""LlamaJudge: a local GGUF model through llama-cpp-python, answering in grammar-constrained JSON.

The only module that imports llama_cpp, and only when a judge is built, so a run
with the non-LLM metrics alone never pays for (or needs) llama.cpp. The model stays
loaded for the whole run, and llama-cpp-python keeps the tokens of the previous
prompt: a call whose prompt starts like the last one evaluates only the new
suffix. Prompts are laid out for that (see prompts.py).
"""

from __future__ import annotations

import atexit
import json
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel, ValidationError

from localeval.errors import JudgeError, ModelError
from localeval.judge import Message, T, Usage
from localeval.models import check_gguf, file_sha256

DEFAULT_CONTEXT = 4096  # tokens: a HotpotQA sample (~1,400 tokens) and most RAG prompts fit
DEFAULT_SEED = 0
ANSWER_MAX_TOKENS = 512  # a ceiling only: schemas bound every field, so answers end well before


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
    ) -> None:
        check_gguf(model_path)
        import llama_cpp  # deferred: see the module docstring

        self._llama_cpp = llama_cpp
        self.model_path = model_path
        self.catalog_name = catalog_name
        self.seed = seed
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

    def _perf(self) -> tuple[int, int]:
        data = self._llama_cpp.llama_perf_context(self._llm._ctx.ctx)
        return int(data.n_p_eval), int(data.n_eval)

    def ask(self, messages: list[Message], schema: type[T], max_tokens: int = ANSWER_MAX_TOKENS) -> tuple[T, Usage]:
        """Greedy decoding under the schema's grammar; the answer always parses."""
        before_prompt, _ = self._perf()
        started = time.perf_counter()
        out = self._llm.create_chat_completion(
            messages=messages,  # type: ignore[arg-type]
            grammar=self._grammar(schema),
            temperature=0.0,
            max_tokens=max_tokens,
            seed=self.seed,
        )
        seconds = time.perf_counter() - started
        after_prompt, _ = self._perf()
        choice = out["choices"][0]  # type: ignore[index]
        text = choice["message"]["content"] or ""
        if choice.get("finish_reason") == "length":
            raise JudgeError(f"the judge's answer reached {max_tokens} tokens without finishing")
        answer = parse_answer(text, schema)
        usage = out["usage"]  # type: ignore[index]
        return answer, Usage(
            prompt_tokens=int(usage["prompt_tokens"]),
            prompt_evaluated=max(0, after_prompt - before_prompt),
            completion_tokens=int(usage["completion_tokens"]),
            seconds=seconds,
        )

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
            "llama_cpp_python": self._llama_cpp.__version__,
        }
