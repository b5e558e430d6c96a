"""JudgeSpec: every judge setting, declared once.

A setting's name, bounds and help live here and nowhere else: the config file's keys
(`FileSettings` inherits them), the command-line flags of `score` and `calibrate` (generated
from the fields by `judge_flags`), what a run, `calibrate` and a Ray worker load a judge with
(`localeval.judge.backends.open_backend(spec)`: the spec does not import its backends, the caller
that holds both links them). Adding a judge option shared by backends is one field here and the backend
that uses it; an option only one backend has is a field of that backend's own `Options` model,
given as `--judge-option KEY=VALUE` or in `[judge.backend_options]`, and touches nothing here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from localeval.errors import ConfigError

MIN_CONTEXT = 1024  # tokens: the statement prompt's instructions and worked examples take 508 (the default judge) to 556 (smollm2-135m), measured through their chat templates; this leaves a statement and its context sentences room
MAX_CONTEXT = 1 << 20
MAX_THREADS = 512
# A judge's description (Judge.describe) keeps the settings that change how fast it answers, not
# what it says, under this key; a resume compares everything else.
SPEED_KEY = "speed"


class JudgeSpec(BaseModel):
    """Which judge, and how it runs. `identity: False` marks a setting that changes how fast a
    judge answers, not what it says (a resume may change it)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    model: str | None = Field(None, description="Judge: a GGUF path or catalog name (default: $LOCALEVAL_MODEL, else the catalog default).")
    n_ctx: int | None = Field(None, ge=MIN_CONTEXT, le=MAX_CONTEXT, description=f"Judge context window in tokens (default 4096, at least {MIN_CONTEXT}).")
    threads: int | None = Field(None, ge=1, le=MAX_THREADS, description="Judge CPU threads (default: the cores this process may use, its affinity and container CPU quota, at most 8).", json_schema_extra={"identity": False})
    seed: int | None = Field(None, ge=0, description="Judge seed (default 0; decoding is greedy either way).")
    gpu_layers: int | None = Field(None, ge=-1, description="Judge layers to offload to the GPU (-1: all); needs llama-cpp-python built for CUDA or Metal.")
    calibration: str | None = Field(None, description="Use this calibration file (written by `localeval calibrate`) instead of the catalog's.")
    judge_url: str | None = Field(None, description="Use the judge on this OpenAI-compatible server (e.g. http://127.0.0.1:8000/v1); --model names the served model.")
    judge_concurrency: int | None = Field(None, ge=1, le=256, description="Requests kept in flight to a judge server (default 4).", json_schema_extra={"identity": False})
    cache: str | bool | None = Field(
        None, description="Keep the judge's answers in this file and reuse them on later runs (default: verdicts.sqlite next to the models, or $LOCALEVAL_CACHE); false or off: no cache (./false names a file).",
    )  # not in a judge's description, so not in a run's identity: a hit is the judge's own answer
    backend_options: dict[str, Any] = Field(
        default_factory=dict, description="A backend's own judge option, KEY=VALUE (repeatable; `localeval models options` lists them), validated by that backend."
    )

    @classmethod
    def of(cls, values: Any, where: str = "judge settings") -> JudgeSpec:
        """The spec of `values` (a mapping, or settings that carry these fields), ConfigError naming `where` when one is out of range."""
        data = values if isinstance(values, dict) else {name: getattr(values, name) for name in cls.model_fields}
        try:
            return cls.model_validate({k: v for k, v in data.items() if k in cls.model_fields and v is not None})  # None: not given
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ConfigError(f"{where}: '{'.'.join(str(p) for p in first['loc'])}': {first['msg']}") from None


def _not_true_or_false(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("expected a number, not true or false")
    return value


# A backend's numeric option: its Options model converts "5" from the command line, and would
# read a config's `retries = true` as 1 and `timeout = true` as one second; refused instead, as
# metric options and thresholds refuse booleans for numbers.
NOT_A_BOOL = BeforeValidator(_not_true_or_false)

BACKEND_OPTION_FLAG = "--judge-option"


def flag_name(field: str) -> str:
    return BACKEND_OPTION_FLAG if field == "backend_options" else "--" + field.replace("_", "-")


def _backend_options(context: Any, parameter: Any, values: tuple[str, ...]) -> dict[str, str] | None:
    """--judge-option KEY=VALUE pairs as a mapping (None when none is given, so a config's table stands)."""
    import click

    options: dict[str, str] = {}
    for pair in values:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise click.BadParameter(f"'{pair}' is not KEY=VALUE", context, parameter)
        if key.strip() in options:
            raise click.BadParameter(f"'{key.strip()}' is given twice", context, parameter)
        options[key.strip()] = value.strip()
    return options or None


F = TypeVar("F", bound=Callable[..., Any])


def judge_flags(*fields: str) -> Callable[[F], F]:
    """Click options for the named JudgeSpec fields (all of them when none are named), with the
    spec's help; values are validated by the spec, so the bounds are written once."""
    import click

    chosen = fields or tuple(JudgeSpec.model_fields)

    def decorate(command: F) -> F:
        decorated: Any = _with_no_cache(command) if "cache" in chosen else command
        for name in reversed(chosen):
            info = JudgeSpec.model_fields[name]
            kind: Any = int if int in getattr(info.annotation, "__args__", ()) else None
            if name == "cache":
                decorated = click.option("--no-cache", "no_cache", is_flag=True, help="Neither read nor keep judge answers in the verdict cache.")(decorated)
                decorated = click.option("--cache", "cache", metavar="PATH", type=click.Path(dir_okay=False), help=info.description)(decorated)
                continue
            if name == "backend_options":
                decorated = click.option(flag_name(name), name, multiple=True, metavar="KEY=VALUE", callback=_backend_options, help=info.description)(decorated)
                continue
            if name == "calibration":
                kind = click.Path(dir_okay=False)
            decorated = click.option(flag_name(name), name, type=kind, help=info.description)(decorated)
        return decorated  # type: ignore[no-any-return]

    return decorate


def _with_no_cache(command: Callable[..., Any]) -> Any:
    """The command with --no-cache folded into `cache` (False), as the config's `cache = false`."""
    import functools

    import click

    @functools.wraps(command)
    def folded(*args: Any, **kwargs: Any) -> Any:
        if kwargs.pop("no_cache", False):
            if kwargs.get("cache"):
                raise click.UsageError("--cache and --no-cache: give one")
            kwargs["cache"] = False
        return command(*args, **kwargs)

    return folded


def speed_only(model: type[BaseModel]) -> frozenset[str]:
    """The fields of a settings model marked `identity: False`: they change how fast a judge
    answers, not what it says, so a judge describes them under "speed" and a resume may change them."""
    return frozenset(name for name, info in model.model_fields.items() if isinstance(info.json_schema_extra, dict) and info.json_schema_extra.get("identity") is False)


NOT_IN_IDENTITY = speed_only(JudgeSpec)
