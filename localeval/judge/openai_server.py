"""The `openai` backend: a judge behind an OpenAI-compatible server on a URL the user gives.

Works with llama-cpp-python's server (`python -m llama_cpp.server`), llama.cpp's
`llama-server` and vLLM. The guarantees of the in-process judge, and where they differ:

- Verdicts are read from token log-probabilities (`logprobs`, `top_logprobs`) of a
  one-token answer at temperature 0. An option outside the server's top list is
  taken to be no more likely than the least likely token listed.
- `ask` sends the schema as the server's JSON-schema response format (OpenAI's
  `json_schema`, else llama-cpp-python's `json_object` with a schema) and validates
  the answer; `max_tokens` bounds it.
- Every request has a timeout and is retried on connection errors and 5xx answers;
  when the server cannot be reached the error says so and names the URL.
- The runner keeps `concurrency` requests in flight, so a GPU server stays busy.
- The only connection ever opened is to the URL given: proxies from the environment
  are ignored and redirects are refused.
- The weights: what the server's /v1/models says about the served model beyond its name
  (llama.cpp's `meta`: parameters, size, vocabulary; vLLM's `root` and `max_model_len`) is
  recorded in the results header and keys the verdict cache, so a server restarted with other
  weights under the same name and URL is another judge. A server that says nothing more
  (llama-cpp-python's, `localeval serve`) cannot be told apart: the header says so
  (WEIGHTS_UNSTATED), and its cached verdicts assume the server is unchanged.
- Not guaranteed: byte-identical scores with the in-process judge. A server may
  batch requests together, which changes logits slightly; token counts use the
  server's tokenize endpoint when it has one (else an estimate), so chunk
  boundaries can differ too. tests/test_server_judge.py measures the difference.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import math
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from localeval.errors import ConfigError, JudgeError, ModelError
from localeval.judge import Message, T, Usage
from localeval.judge.backends import calibration_source, calibration_tables
from localeval.judge.llama import DEFAULT_CONTEXT, parse_answer
from localeval.judge.spec import NOT_A_BOOL, SPEED_KEY, JudgeSpec

TIMEOUT_SECONDS = 300.0  # one request; a CPU server on a long prompt is slow
RETRIES = 3
BACKOFF_SECONDS = 1.0
TOP_LOGPROBS = 20  # what OpenAI's API allows at most
DEFAULT_CONCURRENCY = 4
ESTIMATED_CHARS_PER_TOKEN = 3  # when the server cannot tokenize: errs towards more tokens


MAX_RESPONSE_BYTES = 8 << 20  # a verdict or a claims list is a few kilobytes
# What a /v1/models entry says that is not about the weights: the name (in the key already), its
# owner, and what a server fills in at each request (llama-server's and vLLM's `created` is the
# time of the request; vLLM's `permission` has its own ids and times).
NOT_ABOUT_WEIGHTS = frozenset({"id", "object", "owned_by", "created", "permission", "permissions"})
MAX_WEIGHTS_CHARS = 2000  # what the header keeps of it; beyond, its SHA-256
WEIGHTS_UNSTATED = (
    "not stated: the server's /v1/models names the model only, so cached verdicts assume it still serves the weights it served when they were cached "
    "(after changing them: localeval cache clear, or --no-cache)"
)


class Options(BaseModel):
    """The openai backend's own settings (--judge-option KEY=VALUE). Both are speed and patience
    only: a server's answer does not depend on them, so a resume may change them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout: Annotated[float, NOT_A_BOOL] = Field(
        default=TIMEOUT_SECONDS, gt=0, le=86400, allow_inf_nan=False, description="Seconds one request may take, its answer included.", json_schema_extra={"identity": False}
    )
    retries: Annotated[int, NOT_A_BOOL] = Field(default=RETRIES, ge=0, le=20, description="Attempts again after a connection error or a 5xx answer.", json_schema_extra={"identity": False})


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> None:
        raise urllib.error.HTTPError(req.full_url, code, f"a redirect to {newurl[:200]}, refused: localeval talks only to the URL it was given", headers, None)


def _read_within(response: Any, deadline: float, limit: int = MAX_RESPONSE_BYTES) -> bytes:
    """The whole body, or TimeoutError once the request's deadline passes (a server trickling a
    byte at a time never trips a per-read timeout), or ModelError past `limit` bytes."""
    parts: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise TimeoutError("the answer did not arrive within the request's time limit")
        block = response.read1(1 << 16)
        if not block:
            return b"".join(parts)
        size += len(block)
        if size > limit:
            raise ModelError(f"the judge server's answer is larger than {limit >> 20} MiB; not a judge's answer")
        parts.append(block)


class ServerJudge:
    """A judge on an OpenAI-compatible server; thread-safe, so the runner can keep several calls in flight."""

    def __init__(
        self,
        base_url: str,
        model: str | None,
        *,
        context_size: int = DEFAULT_CONTEXT,
        seed: int = 0,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float = TIMEOUT_SECONDS,
        retries: int = RETRIES,
        calibration: Mapping[str, Mapping[str, Any]] | None = None,
        calibration_file: dict[str, str] | None = None,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"--judge-url must be an http(s) URL such as http://127.0.0.1:8000/v1, got '{base_url}'")
        self.base_url = base_url.rstrip("/")
        self.seed = seed
        self.concurrency = concurrency
        self.timeout = timeout
        self.retries = retries
        self._context_size = context_size
        self._calibration = dict(calibration or {})
        self._calibration_file = calibration_file
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirects())
        self.model, self.weights = self._served_model(model)
        self._tokenizer = self._find_tokenizer()
        self._response_format = "json_schema"

    # -- transport ---------------------------------------------------------

    def _request(self, url: str, payload: dict[str, Any] | None, retries: int | None = None) -> Any:
        """One request with a deadline for the whole answer, retried on connection errors,
        timeouts and 5xx answers; a 4xx or 3xx answer raises _ClientError at once."""
        retries = self.retries if retries is None else retries
        data = None if payload is None else json.dumps(payload).encode("utf-8")
        request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"}, method="GET" if data is None else "POST")
        last = ""
        for attempt in range(retries + 1):
            deadline = time.monotonic() + self.timeout
            try:
                with self._opener.open(request, timeout=self.timeout) as response:
                    body = _read_within(response, deadline)
            except urllib.error.HTTPError as error:
                detail = error.read().decode("utf-8", "replace")[:300] if error.fp else ""
                if error.code < 500 or retries == 0:
                    raise _ClientError(error.code, detail or str(error.reason)) from None
                last = f"HTTP {error.code}: {detail}"
            except (urllib.error.URLError, TimeoutError, ConnectionError, http.client.HTTPException) as error:
                last = str(getattr(error, "reason", error)) or type(error).__name__
            else:
                try:
                    return json.loads(body)
                except (ValueError, RecursionError):
                    raise ModelError(f"the judge server at {self.base_url} answered {url} with something that is not JSON ({body[:80]!r})") from None
            if attempt < retries:
                time.sleep(BACKOFF_SECONDS * 2**attempt)
        raise ModelError(f"the judge server at {self.base_url} did not answer ({last}) after {retries + 1} tries; is it running?")

    def _served_model(self, model: str | None) -> tuple[str, Any]:
        """The model to ask for (--model if the server serves it, else the only one it serves) and
        what the server says about its weights (`weights_stated`). Asking at load also tells a
        user at once when the server is not there."""
        try:
            answer = self._request(f"{self.base_url}/models", None)
        except _ClientError as error:
            raise ModelError(f"the judge server at {self.base_url} refused to list its models ({error})") from None
        listed = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(listed, list):
            raise ModelError(f"the judge server at {self.base_url} answered {self.base_url}/models without a list of models under 'data'; is it an OpenAI-compatible server?")
        entries = [item for item in listed if isinstance(item, dict)]
        names = [str(item.get("id")) for item in entries]
        if model is not None:
            if names and model not in names:
                raise ConfigError(f"the server at {self.base_url} does not serve '{model}'; it serves: {', '.join(names[:10])}")
        elif len(names) != 1:
            raise ConfigError(f"the server at {self.base_url} serves {len(names)} models ({', '.join(names[:5])}); name one with --model")
        chosen = model if model is not None else names[0]
        return chosen, weights_stated(next((item for item in entries if str(item.get("id")) == chosen), {}))

    def _find_tokenizer(self) -> tuple[str, str] | None:
        """The server's tokenize endpoint (URL, JSON key of the text), if it has one of the known ones."""
        root = self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url
        for url, key in ((f"{root}/extras/tokenize", "input"), (f"{root}/tokenize", "content"), (f"{root}/tokenize", "prompt")):
            try:
                answer = self._request(url, {key: "probe", "model": self.model}, retries=0)
            except (_ClientError, ModelError):
                continue
            if isinstance(answer, dict) and isinstance(answer.get("tokens"), list):
                return url, key
        return None

    # -- the Judge protocol -------------------------------------------------

    @property
    def context_size(self) -> int:
        return self._context_size

    @property
    def calibration(self) -> Mapping[str, Mapping[str, Any]]:
        return self._calibration

    def use_calibration(self, tables: Mapping[str, Mapping[str, Any]]) -> None:
        """Set the calibrations, once the served model is known (open_judge)."""
        self._calibration = dict(tables)

    def count_tokens(self, text: str) -> int:
        if self._tokenizer is None:
            return max(1, math.ceil(len(text) / ESTIMATED_CHARS_PER_TOKEN))
        url, key = self._tokenizer
        try:
            answer = self._request(url, {key: text, "model": self.model})
        except _ClientError as error:
            raise JudgeError(f"the judge server refused to count tokens: {error}") from None
        if not isinstance(answer, dict) or not isinstance(answer.get("tokens"), list):
            raise JudgeError(f"the judge server's tokenize answer has no list of tokens ({str(answer)[:80]})")
        return len(answer["tokens"])

    def _chat(self, messages: list[Message], retries: int | None = None, **fields: Any) -> tuple[dict[str, Any], Usage]:
        started = time.perf_counter()
        payload = {"model": self.model, "messages": messages, "temperature": 0.0, "seed": self.seed, **fields}
        answer = self._request(f"{self.base_url}/chat/completions", payload, retries)
        if not isinstance(answer, dict):
            raise JudgeError(f"the judge server's chat answer is a JSON {type(answer).__name__}, not an object")
        usage = answer.get("usage") or {}
        counts = [usage.get(key, 0) if isinstance(usage, dict) else None for key in ("prompt_tokens", "completion_tokens")]
        if not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c < 1 << 31 for c in counts):
            raise JudgeError(f"the judge server's token usage is not a pair of counts ({str(usage)[:80]})")
        prompt, completion = int(counts[0] or 0), int(counts[1] or 0)
        return answer, Usage(prompt_tokens=prompt, prompt_evaluated=prompt, completion_tokens=completion, seconds=time.perf_counter() - started)

    def choose(self, messages: list[Message], prefix: str, options: Sequence[str]) -> tuple[list[float], Usage]:
        """The options' probabilities as the first answer token, from the server's top log-probabilities."""
        if prefix:
            raise JudgeError("a judge server cannot continue a half-written answer; only first-token verdicts are read from it")
        try:
            answer, usage = self._chat(messages, max_tokens=1, logprobs=True, top_logprobs=TOP_LOGPROBS)
            listed = answer["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
            logprobs = [(str(item["token"]), float(item["logprob"])) for item in listed]
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise JudgeError(f"the judge server's answer has no token log-probabilities ({exc}); does it support logprobs?") from None
        except _ClientError as error:
            raise JudgeError(f"the judge server refused the request: {error}") from None
        return option_probabilities(logprobs, options), usage

    def _format(self, schema: type[T]) -> dict[str, Any]:
        body = schema.model_json_schema()
        if self._response_format == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": body, "strict": True}}
        return {"type": "json_object", "schema": body}

    def ask(self, messages: list[Message], schema: type[T], max_tokens: int = 512) -> tuple[T, Usage]:
        if self._response_format == "json_schema":
            try:  # OpenAI's format, which llama-server and vLLM take; one try tells
                answer, usage = self._chat(messages, 0, max_tokens=max_tokens, response_format=self._format(schema))
            except _ClientError as error:
                if "response_format" not in str(error) and "json_schema" not in str(error):
                    raise JudgeError(f"the judge server refused the request: {error}") from None
                self._response_format = "json_object"  # llama-cpp-python's server: a schema inside json_object
        if self._response_format == "json_object":
            try:
                answer, usage = self._chat(messages, max_tokens=max_tokens, response_format=self._format(schema))
            except _ClientError as error:
                raise JudgeError(f"the judge server refused the request: {error}") from None
        try:
            choice = answer["choices"][0]
            finish, content = choice.get("finish_reason"), choice["message"]["content"]
        except (KeyError, IndexError, TypeError, AttributeError):
            raise JudgeError("the judge server's answer has no choice with a message") from None
        if finish == "length":
            raise JudgeError(f"the judge's answer reached {max_tokens} tokens without finishing")
        return parse_answer(str(content), schema), usage

    def describe(self) -> dict[str, Any]:
        return {
            "backend": "openai",
            "url": self.base_url,
            "model": self.model,
            "n_ctx": self._context_size,
            "seed": self.seed,
            "temperature": 0.0,
            "weights": self.weights,  # in the verdict cache's key: other weights behind the same name are another judge
            SPEED_KEY: {"concurrency": self.concurrency, "timeout": self.timeout, "retries": self.retries},  # how fast, not what: a resume may change it
            "tokenizer": self._tokenizer[0] if self._tokenizer else f"estimate: {ESTIMATED_CHARS_PER_TOKEN} characters a token",
            "calibration": {k: dict(v) for k, v in self._calibration.items()},
            "calibration_file": self._calibration_file,
        }

    def close(self) -> None:
        """Nothing held between requests."""

    def __enter__(self) -> ServerJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def weights_stated(entry: Mapping[str, Any]) -> Any:
    """What a /v1/models entry (untrusted JSON) says about the served weights: its fields but
    the name, the owner and those a server fills in at each request; WEIGHTS_UNSTATED when it
    says nothing more, its SHA-256 when it says too much for a header."""
    stated = {str(k): v for k, v in entry.items() if str(k) not in NOT_ABOUT_WEIGHTS}
    if not stated:
        return WEIGHTS_UNSTATED
    text = json.dumps(stated, sort_keys=True, ensure_ascii=False, default=str)
    return stated if len(text) <= MAX_WEIGHTS_CHARS else {"sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def option_probabilities(logprobs: Sequence[tuple[str, float]], options: Sequence[str]) -> list[float]:
    """Each option's probability from a server's top log-probabilities, normalised over the options.

    A token counts for an option whatever its case and leading space ("Yes", " yes",
    "YES"). An option the list lacks is given what the list leaves unaccounted for
    (1 - the listed mass), at most the least likely listed token's probability: a
    confident "No" with "Yes" absent stays confident. A non-finite log-probability, or
    a list with none of the options, is an error for the sample, never a silent 50/50.
    """
    if not all(math.isfinite(value) or value == -math.inf for _, value in logprobs) or any(value > 0 for _, value in logprobs):
        raise JudgeError(f"the judge server answered log-probabilities that are not numbers <= 0: {logprobs[:5]}")
    listed = [(token.strip().lower(), math.exp(value)) for token, value in logprobs]
    found = [sum(p for token, p in listed if token == option.lower()) for option in options]
    if not any(found):
        raise JudgeError(f"none of {list(options)} is among the judge server's top {len(listed)} first tokens; its verdict cannot be read")
    unaccounted = max(0.0, 1.0 - sum(p for _, p in listed))
    least = min((p for _, p in listed), default=0.0)
    values = [p if p > 0 else min(unaccounted, least) for p in found]
    total = sum(values)
    return [v / total for v in values]


class _ClientError(Exception):
    """A 4xx answer: the request was wrong, so retrying it is pointless."""

    def __init__(self, code: int, body: str) -> None:
        super().__init__(f"HTTP {code}: {body}")


def open_judge(target: str | None, spec: JudgeSpec, options: Options, calibration: Any = None) -> ServerJudge:
    """The `openai` backend: `target` is the server's base URL (for example http://127.0.0.1:8000/v1)."""
    from localeval.models.store import CATALOG

    if not target:
        raise ConfigError("the openai backend needs a URL: --judge-url http://HOST:PORT/v1")
    if spec.gpu_layers:
        raise ConfigError("--gpu-layers applies to the in-process judge; a server decides its own GPU offload")
    judge = ServerJudge(
        target,
        spec.model if spec.judge_url else None,
        context_size=spec.n_ctx or DEFAULT_CONTEXT,
        seed=spec.seed or 0,
        concurrency=spec.judge_concurrency or DEFAULT_CONCURRENCY,
        timeout=options.timeout,
        retries=options.retries,
        calibration_file=calibration_source(calibration),
    )
    # The calibration of the model the server serves (the one asked for, or the only one it has):
    # the same judge gets the same calibration with --model or without it.
    judge.use_calibration(calibration_tables(CATALOG[judge.model].calibration if judge.model in CATALOG else {}, calibration))
    return judge
