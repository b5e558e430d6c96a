"""The fence around llama-cpp-python: every use of its API, public or private, is here.

localeval needs four things llama-cpp-python has no public API for: setting the
cached prefix length (to evaluate a prompt in canonical segments, see
`LlamaJudge._load`), reading the last position's logits without logits_all,
loading with llama.cpp's extra buffer types off, and saving and restoring the
cache's keys and values for a prefix (`snapshot`, `restore`). They live in this one module,
and the installed version is checked against the range they were written for.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import re
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from localeval.errors import ModelError

# The versions whose private state (n_tokens, _input_ids, _ctx, _model) this module
# was written against and tested with.
SUPPORTED = ((0, 3, 30), (0, 4, 0))  # >= first, < second
SUPPORTED_TEXT = ">=0.3.30,<0.4"
CPUINFO = Path("/proc/cpuinfo")
WAIT_POLICY = "OMP_WAIT_POLICY"


def wait_passively(environ: MutableMapping[str, str] = os.environ) -> None:
    """OMP_WAIT_POLICY=PASSIVE before llama.cpp's OpenMP runtime loads, unless the user set it.

    Why: llama.cpp built with OpenMP (how pip builds it on Linux) meets its threads at a barrier
    after almost every operation, many times a token, and libgomp's threads spin there by default.
    Where other work keeps the cores busy (a CI runner, a laptop), a spinning thread burns the
    time slice that the thread it waits for needs. Measured on this project's 2-core machine with
    another llama.cpp process busy on both cores (docs/PERFORMANCE.md), the default judge on two
    threads generated 2.0 tokens a second spinning and 5.3 waiting passively; idle, the two are
    within run-to-run noise. libgomp reads the setting once, when it loads, so it is set before
    llama_cpp is imported; it changes how threads wait, never what they compute."""
    environ.setdefault(WAIT_POLICY, "PASSIVE")


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def check_version() -> str:
    """The installed llama-cpp-python version, or a ModelError naming the supported range."""
    try:
        installed = metadata.version("llama_cpp_python")
    except metadata.PackageNotFoundError:
        raise ModelError("the judge needs llama-cpp-python: pip install 'localeval[judge]'") from None
    low, high = SUPPORTED
    if not low <= _version_tuple(installed) < high:
        raise ModelError(f"llama-cpp-python {installed} is installed; localeval supports {SUPPORTED_TEXT} (pip install 'localeval[judge]')")
    return installed


def cpu_has_amx(cpuinfo: Path | None = None) -> bool:
    """Whether the CPU advertises Intel AMX (Linux; elsewhere, no)."""
    try:
        return "amx_tile" in (cpuinfo or CPUINFO).read_text(errors="replace")
    except OSError:
        return False


def cpu_kind(cpuinfo: Path | None = None) -> str:
    """The CPU's architecture and instruction-set flags, hashed: llama.cpp picks its kernels by
    them, and two kernels may round a logit differently, so a verdict cache copied to another
    kind of machine is not read there."""
    import hashlib
    import platform

    flags = ""
    try:
        for line in (cpuinfo or CPUINFO).read_text(errors="replace").splitlines():
            if line.startswith(("flags", "Features")):
                flags = " ".join(sorted(line.partition(":")[2].split()))
                break
    except OSError:
        pass
    return platform.machine() + ":" + hashlib.sha256(flags.encode()).hexdigest()[:16]


@contextmanager
def _extra_buffer_types_off(llama_cpp: Any) -> Iterator[None]:
    """Load with llama.cpp's "extra buffer types" (the AMX and repacked-weight kernels) off.

    On Intel CPUs with AMX (Sapphire Rapids), llama.cpp's AMX matmul segfaulted in
    the first decode (ggml_backend_amx_mul_mat, seen with 0.3.36), so on those CPUs
    only the default parameters are wrapped for the duration of the load:
    llama-cpp-python has no argument for `use_extra_bufts`.
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


@contextmanager
def safe_loading(llama_cpp: Any) -> Iterator[bool]:
    """Every model llama-cpp-python loads inside this block loads with the settings this CPU
    needs (extra buffer types off on AMX CPUs); yields whether they are on. The in-process
    judge wraps its one load; `localeval serve` wraps its whole server, which may reload."""
    if not cpu_has_amx():
        yield True
        return
    with _extra_buffer_types_off(llama_cpp):
        yield False


class LlamaRuntime:
    """A loaded GGUF model: tokens in, logits and completions out. Close it (or use `with`)."""

    def __init__(self, model_path: Path, *, n_ctx: int, n_threads: int, seed: int, gpu_layers: int = 0, extra: Mapping[str, Any] | None = None) -> None:
        """`extra`: more llama_cpp.Llama arguments (the gguf backend's options), passed as they are."""
        self.version = check_version()
        # Imported here (nothing pays for llama.cpp until a judge is loaded) and typed as
        # Any: this module uses its private state on purpose, behind the version check.
        wait_passively()
        llama_cpp: Any = importlib.import_module("llama_cpp")
        self._llama_cpp = llama_cpp
        self.gpu_offload = bool(llama_cpp.llama_supports_gpu_offload())
        if gpu_layers and not self.gpu_offload:
            raise ModelError(
                f"--gpu-layers {gpu_layers} asks for GPU offload, but the installed llama-cpp-python was built without a GPU "
                "backend; reinstall it with CMAKE_ARGS (see docs/scaling.md), or drop --gpu-layers"
            )
        arguments = dict(
            model_path=str(model_path),
            n_ctx=n_ctx,
            n_threads=n_threads,
            n_threads_batch=n_threads,
            n_gpu_layers=gpu_layers,
            seed=seed,
            flash_attn=True,  # about +25% prefill on CPU here
            verbose=False,
        )
        arguments.update(extra or {})
        try:
            with safe_loading(llama_cpp) as self.extra_buffer_types:
                self._llm: Any = llama_cpp.Llama(**arguments)
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(f"llama.cpp could not load {model_path}: {exc}") from None
        self.n_vocab = int(self._llm.n_vocab())
        self.metadata: dict[str, str] = dict(self._llm.metadata)

    @property
    def context_size(self) -> int:
        """The tokens a prompt may hold: llama.cpp pads the window it was asked for (576 becomes
        768), while llama-cpp-python's token buffer keeps the size asked for, and a prompt longer
        than that buffer fails inside llama-cpp-python; the smaller of the two."""
        return min(int(self._llm.n_ctx()), len(self._llm.input_ids))

    def tokenize(self, text: str, *, bos: bool = False, special: bool = False) -> list[int]:
        return list(self._llm.tokenize(text.encode("utf-8"), add_bos=bos, special=special))

    def token_text(self, token: int) -> bytes:
        return bytes(self._llm.detokenize([token], special=True))

    def special_token_text(self, which: str) -> str:
        """The text of the model's "bos" or "eos" token (for the chat template)."""
        token = self._llm.token_bos() if which == "bos" else self._llm.token_eos()
        return str(self._llm._model.token_get_text(token))

    def cached(self) -> Sequence[int]:
        """The tokens whose keys and values are in llama.cpp's cache, in order."""
        return list(self._llm._input_ids)

    def keep(self, count: int) -> None:
        """Keep the first `count` cached tokens; the next `evaluate` continues after them."""
        self._llm.n_tokens = count

    def evaluate(self, tokens: Sequence[int]) -> None:
        """Append `tokens` to the cache, in one call (llama.cpp batches it as n_batch allows)."""
        self._llm.eval(tokens)

    def snapshot(self) -> bytes:
        """The keys and values of every cached token (llama.cpp's sequence 0, the only one
        used), for `restore`: a few tens of KB per token, not the logits."""
        size = int(self._llama_cpp.llama_state_seq_get_size(self._llm._ctx.ctx, 0))
        buffer = (ctypes.c_uint8 * size)()
        written = int(self._llama_cpp.llama_state_seq_get_data(self._llm._ctx.ctx, buffer, size, 0))
        return bytes(buffer[:written])

    def restore(self, tokens: Sequence[int], state: bytes) -> None:
        """Make the cache hold `tokens` again from their `snapshot`, without evaluating them.
        The logits are not restored: evaluate at least one token before reading them."""
        buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if int(self._llama_cpp.llama_state_seq_set_data(self._llm._ctx.ctx, buffer, len(state), 0)) != len(state):
            raise ModelError("llama.cpp could not restore a cached prompt prefix")
        self._llm.input_ids[: len(tokens)] = tokens
        self._llm.n_tokens = len(tokens)

    def last_logits(self) -> np.ndarray:
        """The logits after the last evaluated token (a copy)."""
        return np.ctypeslib.as_array(self._llm._ctx.get_logits(), shape=(self.n_vocab,)).astype(np.float64)

    def grammar_from_json_schema(self, schema_json: str) -> Any:
        return self._llama_cpp.LlamaGrammar.from_json_schema(schema_json, verbose=False)

    def complete(self, tokens: list[int], grammar: Any, max_tokens: int, seed: int) -> tuple[str, int, bool]:
        """Greedy decoding from the cached `tokens` under `grammar`: the text, the number of
        tokens generated, and whether it stopped at max_tokens."""
        out: Any = self._llm.create_completion(prompt=tokens, grammar=grammar, temperature=0.0, max_tokens=max_tokens, seed=seed)
        choice = out["choices"][0]
        return str(choice["text"]), int(out["usage"]["completion_tokens"]), choice.get("finish_reason") == "length"

    def close(self) -> None:
        """Free llama.cpp's memory now (left to the garbage collector at exit, it prints
        "Exception ignored in __del__")."""
        llm = getattr(self, "_llm", None)
        if llm is not None:
            llm.close()
            self._llm = None

    def __enter__(self) -> LlamaRuntime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def chat_formatter(runtime: LlamaRuntime, generation_prompt: bool) -> Any:
    """The model's own chat template (the one create_chat_completion would use), as a function
    of the messages."""
    Jinja2ChatFormatter: Any = importlib.import_module("llama_cpp.llama_chat_format").Jinja2ChatFormatter

    template = runtime.metadata.get("tokenizer.chat_template")
    if not template:
        raise ModelError("the model has no chat template in its metadata")
    return Jinja2ChatFormatter(
        template=template,
        eos_token=runtime.special_token_text("eos"),
        bos_token=runtime.special_token_text("bos"),
        add_generation_prompt=generation_prompt,
    )
