"""JudgeSpec: every judge setting, declared once.

A setting's name, bounds and help live here and nowhere else: the config file's keys
(`FileSettings` inherits them), the command-line flags of `score` and `calibrate` (generated
from the fields by `judge_flags`), what a run, `calibrate` and a Ray worker load a judge with
(`JudgeSpec.load`). Adding a judge option is one field here and the backend that uses it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from localeval.errors import ConfigError

if TYPE_CHECKING:
    from localeval.judge import Judge

MIN_CONTEXT = 512  # tokens: below this no judge prompt fits
MAX_CONTEXT = 1 << 20
MAX_THREADS = 512


class JudgeSpec(BaseModel):
    """Which judge, and how it runs. `identity: False` marks a setting that changes how fast a
    judge answers, not what it says (a resume may change it)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    model: str | None = Field(None, description="Judge: a GGUF path or catalog name (default: $LOCALEVAL_MODEL, else the catalog default).")
    n_ctx: int | None = Field(None, ge=MIN_CONTEXT, le=MAX_CONTEXT, description=f"Judge context window in tokens (default 4096, at least {MIN_CONTEXT}).")
    threads: int | None = Field(None, ge=1, le=MAX_THREADS, description="Judge CPU threads (default: number of cores, at most 8).", json_schema_extra={"identity": False})
    seed: int | None = Field(None, ge=0, description="Judge seed (default 0; decoding is greedy either way).")
    gpu_layers: int | None = Field(None, ge=-1, description="Judge layers to offload to the GPU (-1: all); needs llama-cpp-python built for CUDA or Metal.")
    calibration: str | None = Field(None, description="Use this calibration file (written by `localeval calibrate`) instead of the catalog's.")
    judge_url: str | None = Field(None, description="Use the judge on this OpenAI-compatible server (e.g. http://127.0.0.1:8000/v1); --model names the served model.")
    judge_concurrency: int | None = Field(None, ge=1, le=256, description="Requests kept in flight to a judge server (default 4).", json_schema_extra={"identity": False})

    @classmethod
    def of(cls, values: Any, where: str = "judge settings") -> JudgeSpec:
        """The spec of `values` (a mapping, or settings that carry these fields), ConfigError naming `where` when one is out of range."""
        data = values if isinstance(values, dict) else {name: getattr(values, name) for name in cls.model_fields}
        try:
            return cls.model_validate({k: v for k, v in data.items() if k in cls.model_fields})
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ConfigError(f"{where}: '{'.'.join(str(p) for p in first['loc'])}': {first['msg']}") from None

    def load(self, calibration: Any = None) -> Judge:
        """The judge this spec names; `calibration` is the file `calibration` names, read and
        checked (localeval.calibration.read_calibration_file), whose tables replace the catalog's."""
        from localeval.judge import load_judge

        return load_judge(
            self.model, n_ctx=self.n_ctx, n_threads=self.threads, seed=self.seed, gpu_layers=self.gpu_layers,
            judge_url=self.judge_url, concurrency=self.judge_concurrency, calibration=calibration,
        )


def flag_name(field: str) -> str:
    return "--" + field.replace("_", "-")


F = TypeVar("F", bound=Callable[..., Any])


def judge_flags(*fields: str) -> Callable[[F], F]:
    """Click options for the named JudgeSpec fields (all of them when none are named), with the
    spec's help; values are validated by the spec, so the bounds are written once."""
    import click

    chosen = fields or tuple(JudgeSpec.model_fields)

    def decorate(command: F) -> F:
        decorated: Any = command
        for name in reversed(chosen):
            info = JudgeSpec.model_fields[name]
            kind: Any = int if int in getattr(info.annotation, "__args__", ()) else None
            if name == "calibration":
                kind = click.Path(dir_okay=False)
            decorated = click.option(flag_name(name), name, type=kind, help=info.description)(decorated)
        return decorated  # type: ignore[no-any-return]

    return decorate


NOT_IN_IDENTITY = frozenset(name for name, info in JudgeSpec.model_fields.items() if isinstance(info.json_schema_extra, dict) and info.json_schema_extra.get("identity") is False)
