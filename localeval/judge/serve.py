"""`localeval serve`: llama-cpp-python's OpenAI-compatible server, loaded as the in-process judge loads.

`python -m llama_cpp.server` loads a model with llama.cpp's defaults, which on Intel
CPUs with AMX crash in the first decode (see llama_runtime.safe_loading). This runs
the same server (the `server` extra) in this process with the model loaded under
the in-process judge's settings: extra buffer types off on AMX CPUs, the catalog's
name as the served model's name, the same context window and threads. Only the
settings given here apply: a CONFIG_FILE in the environment, which the server
would otherwise read, is ignored.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any

from localeval.errors import ConfigError, ModelError
from localeval.judge.llama import DEFAULT_CONTEXT, DEFAULT_SEED, default_threads
from localeval.judge.llama_runtime import check_version, safe_loading, wait_passively
from localeval.judge.spec import JudgeSpec

LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 8000


def _server_modules() -> tuple[Any, Any, Any, Any]:
    wait_passively()  # before llama.cpp's OpenMP runtime loads: the server's threads share the machine too
    try:
        app = importlib.import_module("llama_cpp.server.app")
        settings = importlib.import_module("llama_cpp.server.settings")
        uvicorn = importlib.import_module("uvicorn")
    except ImportError:
        raise ConfigError("localeval serve needs the server extra: pip install 'localeval[server]'") from None
    return importlib.import_module("llama_cpp"), app, settings, uvicorn


def serve(spec: JudgeSpec, *, host: str = LOOPBACK, port: int = DEFAULT_PORT, announce: Callable[[str], None] | None = None) -> None:
    """Serve `spec.model` (a catalog name or GGUF path; default: $LOCALEVAL_MODEL, else the
    default judge) until interrupted, loaded with the settings the in-process judge takes (the
    gguf backend's options included; a GPU offload that the installed build cannot do is
    refused, as there). The served name is the catalog name, else the file name. `announce`
    is told where it serves only once the options are checked and the model is loaded: a
    server that will not start never says it is serving."""
    from localeval.judge.backends import checked_options
    from localeval.models.store import check_gguf, resolve_model

    options = checked_options("gguf", spec.backend_options)
    gpu_layers, count = spec.gpu_layers, spec.threads or default_threads()
    path, catalog_name = resolve_model(spec.model)
    check_gguf(path)
    check_version()
    llama_cpp, app_module, settings_module, uvicorn = _server_modules()
    if gpu_layers and not llama_cpp.llama_supports_gpu_offload():
        raise ModelError(f"--gpu-layers {gpu_layers} asks for GPU offload, but the installed llama-cpp-python was built without a GPU backend; reinstall it with CMAKE_ARGS (see docs/scaling.md), or drop --gpu-layers")
    model_settings = settings_module.ModelSettings(
        model=str(path),
        model_alias=catalog_name or path.name,
        n_ctx=spec.n_ctx or DEFAULT_CONTEXT,
        **options.model_dump(),
        n_threads=count,
        n_threads_batch=count,
        seed=DEFAULT_SEED if spec.seed is None else spec.seed,
        n_gpu_layers=gpu_layers or 0,
        flash_attn=True,
        verbose=False,
    )
    server_settings = settings_module.ServerSettings(host=host, port=port)
    os.environ.pop("CONFIG_FILE", None)
    with safe_loading(llama_cpp):  # for the whole server's life: it may load the model again
        try:
            app = app_module.create_app(server_settings=server_settings, model_settings=[model_settings])
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(f"llama.cpp could not load {path}: {exc}") from None
        if announce is not None:
            announce(f"serving {catalog_name or path.name} at http://{host}:{port}/v1 (Ctrl-C stops)")
        uvicorn.run(app, host=host, port=port, log_level="warning")
