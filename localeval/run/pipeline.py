"""One scoring run, from a JSON Lines file to a results file, a summary and reports: `score_file`.

This is what `localeval score` does, as a library call, so the Python API can do
everything the command line can (the CLI parses options into RunSettings and
calls this). In order:

1. check the paths: the input exists; no output names a file the run reads (`files_read`), another
   output, or standard output twice; with --qrels, INPUT is a run file, read into samples first
   (localeval.run.retrieval_files);
2. build the metrics and the summary (gates for metrics not scored are refused); hash the input,
   describe the metrics (a missing embedding model stops here) and refuse a resume of another
   input or other metrics, all before the judge loads; load the judge if a metric needs one;
3. open the results file under an exclusive lock; on --resume, check that it was
   written by the same run (input, metrics, options, judge), count its rows into
   the summary and skip their lines;
4. stream: read a line, score it, append its row (flushed), add it to the summary;
5. decide the exit code, and write the summary JSON and the reports (each to a file, or one to
   standard output) from the rows on disk (a second pass, so memory does not grow with the file).
"""

from __future__ import annotations

import hashlib
import io
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from localeval.calibration.combination import checked_calibration
from localeval.data.files import CHUNK, STDIO, atomic_text, cannot_write, diverted_stdout, is_regular_or_new, locked_for_writing, refuse_overlaps
from localeval.data.jsonl import MAX_LINE_BYTES, Record, read_records
from localeval.data.results import ResultRow, RunHeader, dumps_json, parse_line
from localeval.data.samples import LEGACY_LIST_REFERENCE, LEGACY_NAMES, Sample, mapped_field
from localeval.errors import ConfigError, Interrupted, LocalevalError
from localeval.graders.verifier_cache import verifier_answers_kept
from localeval.interrupts import watching_ctrl_c
from localeval.judge import Judge
from localeval.judge.backends import checked_spec, open_backend
from localeval.judge.cache import cache_path
from localeval.judge.spec import JudgeSpec
from localeval.metrics import DEFAULT_METRICS, REGISTRY, Metric, calibration_tasks, create_metric, is_metric_name
from localeval.models import store as model_store
from localeval.reports.junit import write_junit
from localeval.reports.markdown import write_markdown
from localeval.run.provenance import describe_run, resume_differences
from localeval.run.rank_lines import rank_rows, ranks_only
from localeval.run.retrieval_files import check_retrieval_files, samples_from_run_files
from localeval.run.runner import score
from localeval.run.settings import LOCAL_RAY, RunSettings
from localeval.stats.figures import SummaryFigures
from localeval.stats.human_scores import RELEVANCE, Gold, read_gold, relevance_units
from localeval.stats.summary import Summary

SPOOL_BYTES = 8 << 20  # rows kept in memory for the reports when there is no results file


@dataclass
class RunOutcome:
    """What a run concluded: the summary as --summary-json writes it (with the run's provenance
    under "run"), the exit code it calls for, how many rows this run wrote, and the summary's
    figures typed (what the command line and the reports read)."""

    summary: dict[str, Any]
    exit_code: int
    written: int
    figures: SummaryFigures


class _DoneLines:
    """Line numbers already scored (from a resumed file), one bit each."""

    def __init__(self) -> None:
        self._bits = bytearray()
        self.count = 0

    def add(self, line: int) -> None:
        index, bit = divmod(line, 8)
        if index >= len(self._bits):
            self._bits.extend(bytes(index + 1 - len(self._bits)))
        if not self._bits[index] >> bit & 1:
            self._bits[index] |= 1 << bit
            self.count += 1

    @property
    def bits(self) -> bytes:
        """The bitmap itself: bit n of byte n // 8 is line n (what a Ray worker filters by)."""
        return bytes(self._bits)

    def __contains__(self, line: object) -> bool:
        if not isinstance(line, int):
            return False
        index, bit = divmod(line, 8)
        return index < len(self._bits) and bool(self._bits[index] >> bit & 1)


def check_paths(settings: RunSettings) -> None:
    """The paths, before anything is read or written: the input is a file; no output names a file the
    run reads (`files_read`), another output, or standard output twice."""
    if settings.input != STDIO:
        path = Path(settings.input)
        if not path.exists():
            raise ConfigError(f"input file not found: {settings.input}")
        if path.is_dir():
            raise ConfigError(f"input is a directory, not a file: {settings.input}")
    if settings.resume:
        if settings.output in (None, STDIO) or not is_regular_or_new(settings.output or STDIO):
            raise ConfigError("--resume needs --output FILE: it continues that file")
        if settings.input == STDIO or not Path(settings.input).is_file():
            raise ConfigError("--resume needs the input to be a regular file: its SHA-256 is checked against the results")
    if settings.labels is not None and (settings.labels == STDIO or not Path(settings.labels).is_file()):
        raise ConfigError(f"the labels file {settings.labels} (--labels) is not a file: labels are read from a file, before scoring")
    outputs = {option: getattr(settings, key) or "" for key, option in OUTPUT_OPTIONS.items()}
    to_stdout = [option for option, path in outputs.items() if path == STDIO]
    if len(to_stdout) > 1:
        raise ConfigError(f"{', '.join(to_stdout[:-1])} and {to_stdout[-1]} name standard output ('-'), which carries one stream: give the others a file")
    refuse_overlaps(files_read(settings), outputs)


def files_read(settings: RunSettings) -> dict[str, str]:
    """Every file the run reads, by the option that names it: the input, the config, the labels,
    the calibration, each rubric, the verdict cache, and the model files (the judge named, the store's): none of them
    may be an output, which would be truncated before (or while) it is read."""
    read = {
        "INPUT": settings.input if settings.input != STDIO else "",
        "the config file": (settings.config_source or {}).get("file", ""),
        "--labels": settings.labels or "",
        "--calibration": settings.calibration or "",
        "--qrels": settings.qrels or "",
        "--queries": settings.queries or "",
    }
    for metric, options in settings.options.items():
        rubric = options.get("rubric")
        if isinstance(rubric, str) and rubric:
            read[f"--option {metric}.rubric"] = rubric
    verdicts = cache_path(settings.cache)
    if verdicts is not None:
        read["the verdict cache"] = str(verdicts)
    return {**read, **model_store.files_a_run_reads(settings.model)}


def build_metrics(settings: RunSettings) -> list[Metric[Any]]:
    """The selected metrics (the built-ins of DEFAULT_METRICS by default: the others, and a metric
    from another package, run when they are named) with their options."""
    names = list(settings.metrics or DEFAULT_METRICS)
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"metric selected twice: {', '.join(duplicates)}")
    for name in settings.options:
        if name not in names and not is_metric_name(name):
            raise ConfigError(f"an option is set for '{name}', which is no metric; known metrics: {', '.join(sorted(REGISTRY))}")
    # Options for a known metric that is not selected are left aside: a config file may set options
    # for every metric, and `-m` on the command line narrows the run.
    return [create_metric(name, settings.options.get(name)) for name in names]


def read_labels_for(path: str, metrics: Sequence[Metric[Any]]) -> Gold:
    """The labels file's human scores, context_relevance's counted in the selected metric's
    own unit and language."""
    relevance = next((m for m in metrics if m.name == RELEVANCE), None)
    return read_gold(path, relevance_units(relevance.params.model_dump(), "--option context_relevance") if relevance is not None else None)


@dataclass(frozen=True)
class _InputHash:
    """The input file's SHA-256 and how many bytes it covers: the run reads those bytes and no
    more, so a file that grows while it is scored is hashed as it was read."""

    sha256: str
    size: int


def _rereadable(settings: RunSettings) -> bool:
    """The input is a regular file: it can be hashed, and read again (standard input and a pipe give their lines once)."""
    return settings.input != STDIO and Path(settings.input).is_file()


def _input_hash(settings: RunSettings) -> _InputHash | None:
    if not _rereadable(settings):
        return None
    digest = hashlib.sha256()
    size = 0
    with open(settings.input, "rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
            size += len(block)
    return _InputHash(digest.hexdigest(), size)


def _tell_if_grown(path: str, hashed: _InputHash, on_message: Callable[[str], None]) -> None:
    """Say so when the input grew while it was scored: what was added is neither scored nor hashed."""
    try:
        now = Path(path).stat().st_size
    except OSError:
        return
    if now > hashed.size:
        on_message(f"{path} grew by {now - hashed.size} bytes during the run: its first {hashed.size} bytes were scored and hashed, the rest was not (score it again to include it)")


def _check_map(settings: RunSettings) -> None:
    """--map names a field localeval reads (a ragas field or a legacy name for one): a misspelt
    target would otherwise pass the key through as an unknown field, and the metric would say
    the field is missing on every line."""
    known = [*Sample.model_fields, *LEGACY_NAMES, LEGACY_LIST_REFERENCE]
    read_from: dict[str, str] = {}  # ragas field -> the key mapped onto it
    for key, field in settings.map.items():
        if field not in known:
            raise ConfigError(f"--map {key}={field}: '{field}' is not a field localeval reads; the fields are {', '.join(Sample.model_fields)}")
        other = read_from.setdefault(mapped_field(field), key)
        if other != key:
            raise ConfigError(f"--map {other}=... and --map {key}={field} both read the field '{mapped_field(field)}'; keep one")


def _read_previous(handle: IO[bytes], path: str, provenance: dict[str, Any], summary: Summary, done: _DoneLines, last_line: int) -> None:
    """Check a results file against this run and count its rows; cut a torn last line off.
    A row for a line the input cannot have (beyond `last_line`, its size in bytes + 1) is refused
    before it is marked done: a crafted `"line": 2**40` would otherwise take memory line/8."""
    handle.seek(0)
    header_seen = False
    good_end = 0
    for number, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""), start=1):
        if len(raw) > MAX_LINE_BYTES:
            raise ConfigError(f"cannot resume {path}: line {number} is longer than {MAX_LINE_BYTES >> 20} MiB, so it is not a localeval result")
        if not raw.endswith(b"\n"):
            break  # a write cut off by a kill: scored again
        good_end = handle.tell()
        if raw.isspace():
            continue
        item = parse_line(raw, path, number)
        if isinstance(item, RunHeader):
            differences = resume_differences(item.run, provenance)
            if differences:
                raise ConfigError(f"cannot resume {path}: it was written by a different run ({'; '.join(differences)}). Write to a new file, or drop --resume to start over")
            header_seen = True
            continue
        if not header_seen:
            raise ConfigError(f"cannot resume {path}: it does not start with a localeval run header (line {number}), so what produced it is unknown")
        if item.line > last_line:
            raise ConfigError(f"cannot resume {path}: line {number} is a result for input line {item.line}, which the input does not have")
        if item.line not in done:
            done.add(item.line)
            summary.add(item)
    handle.truncate(good_end)
    handle.seek(good_end)
    if good_end and not header_seen:
        raise ConfigError(f"cannot resume {path}: it has no localeval run header")
    if not good_end:
        _write_header(handle, provenance, path)


def _write_header(handle: IO[bytes], provenance: dict[str, Any], path: str) -> None:
    try:
        handle.write(RunHeader(run=provenance).to_line().encode("utf-8"))
        handle.flush()  # on disk before the first row: a killed run is still resumable
    except OSError as error:  # a full disk: exit 3, naming the file, as for the rows
        raise cannot_write("results to", path, error) from None


def _open_stream(output: str) -> IO[bytes]:
    """A device or pipe named by -o (/dev/null, a FIFO): written as a stream, without the run
    header, a lock or resume (standard output is `files.diverted_stdout`'s)."""
    try:
        return open(output, "wb")
    except OSError as error:
        raise ConfigError(f"cannot write results to {output}: {error.strerror}") from None


class _Sink:
    """Where rows go: the results file or a stream, and a spool for the reports when the
    rows are not otherwise on disk. `nowhere`: none of these, and the source makes each row what
    writing it would make it (rank_lines), so rows are not encoded at all."""

    def __init__(self, results: IO[bytes] | None, stream: IO[bytes] | None, need_rows: bool, timing: bool, name: str, rows_as_written: bool = False) -> None:
        self.name = name
        self.results = results
        self.stream = stream
        self.timing = timing
        self.spool: IO[bytes] | None = None
        if need_rows and results is None:
            self.spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)
        self.nowhere = rows_as_written and results is None and stream is None and self.spool is None

    def write(self, row: ResultRow) -> ResultRow:
        """Append a row, as it can be read back (`ResultRow.writable`: never a line longer than a
        results line may be), and return it as written; a disk that is full (or fails) ends the
        run with exit 3, naming the file, with the rows before it kept (a resume continues them).
        A reader of standard output that left (BrokenPipeError) is the CLI's to handle."""
        if self.nowhere:
            return row
        row, line = row.writable(timing=self.timing)
        data = line.encode("utf-8")
        try:
            if self.results is not None:
                self.results.write(data)
                self.results.flush()
            if self.stream is not None:
                self.stream.write(data)
                self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise cannot_write("results to", self.name, error) from None
        if self.spool is not None:
            self.spool.write(data)
        return row

    def rows(self) -> Iterator[ResultRow]:
        """Every row of the run, in line order, read back from disk."""
        source = self.results if self.results is not None else self.spool
        if source is None:
            return
        source.flush()
        source.seek(0)
        for number, raw in enumerate(iter(source.readline, b""), start=1):
            if raw.strip():
                item = parse_line(raw, "<results>", number)
                if isinstance(item, ResultRow):
                    yield item


OUTPUT_OPTIONS = {"output": "-o", "summary_json": "--summary-json", "junit_xml": "--junit-xml", "markdown": "--markdown"}


def writes_to_stdout(settings: RunSettings) -> bool:
    """Whether an output is standard output ('-'): then whatever else writes there goes to standard error."""
    return any(getattr(settings, key) == STDIO for key in OUTPUT_OPTIONS)


@contextmanager
def _report_file(path: str, what: str, stdout: IO[bytes] | None) -> Iterator[IO[str]]:
    """Where a report goes: the file at `path` (`atomic_text`), or standard output for '-'."""
    if path != STDIO or stdout is None:
        with atomic_text(path, what) as out:
            yield out
        return
    text = io.TextIOWrapper(stdout, encoding="utf-8", newline="", write_through=True)
    try:
        yield text
        text.flush()
    finally:
        text.detach()  # the stream stays open for whoever owns it


def _write_reports(settings: RunSettings, figures: SummaryFigures, report: dict[str, Any], sink: _Sink, stdout: IO[bytes] | None, fail_on_error: bool) -> None:
    """The reports from `figures`; --summary-json is `report`, the figures' JSON with the run's
    provenance; the Markdown headline says what the run's exit code says."""
    if settings.junit_xml:
        with _report_file(settings.junit_xml, "--junit-xml", stdout) as out:
            write_junit(out, sink.rows(), figures)
    if settings.markdown:
        with _report_file(settings.markdown, "--markdown", stdout) as out:
            write_markdown(out, sink.rows(), figures, fail_on_error=fail_on_error)
    if settings.summary_json:
        with _report_file(settings.summary_json, "--summary-json", stdout) as out:
            out.write(dumps_json(report, indent=2) + "\n")


class _LocalSource:
    """Rows scored in this process: the input read line by line, the judge loaded here."""

    def __init__(self, settings: RunSettings, metrics: Sequence[Metric[Any]], judge: Judge | None, on_message: Callable[[str], None] | None, gold: Gold | None) -> None:
        self.settings = settings
        self.metrics = metrics
        self.on_message = on_message
        # Labels are checked against the samples they name by a second reading of the input before
        # the run (_run); an input read once is checked as it is read, each sample before its row.
        self.gold = gold if not _rereadable(settings) else None
        # A run of rank metrics alone reads its common lines without the per-sample pipeline, each row made as it is written.
        self.rows_as_written = self.gold is None and not settings.map and ranks_only(metrics)
        self.owned = judge is None and any(m.uses_judge() for m in metrics)
        self.judge = judge
        if judge is not None and settings.calibration is not None:
            raise ConfigError("a loaded judge brings its own calibration: pass the calibration file to load_judge(calibration=...)")
        if self.owned:
            self.judge = open_backend(JudgeSpec.of(settings), checked_calibration(settings.calibration, metrics, calibration_tasks()))

    def describe_judge(self) -> dict[str, Any] | None:
        return self.judge.describe() if self.judge is not None else None

    @property
    def cache_file(self) -> Path | None:
        """The verdict cache the judge reads, if it has one."""
        found = getattr(self.judge, "cache_file", None)
        return found if isinstance(found, Path) else None

    def rows(self, done: _DoneLines, limit: int | None) -> Iterator[ResultRow]:
        """The rows of the lines not yet `done`, from the input's first `limit` bytes (those hashed);
        a run of rank metrics alone reads its common lines without the per-sample pipeline (rank_lines)."""
        if self.rows_as_written:
            return rank_rows(self.settings.input, self.metrics, done=done, limit=limit, strict=self.settings.strict_input)
        records = read_records(self.settings.input, strict=self.settings.strict_input, field_map=self.settings.map, limit=limit)
        return score(self._noticed(r for r in records if r.line not in done), self.metrics, judge=self.judge)

    def _noticed(self, records: Iterator[Record]) -> Iterator[Record]:
        """The records, passing the first line's notice (a --map that replaced a field) to
        `on_message`, once: every such line is read the same way; each sample a label names is
        checked against its labels here when the input cannot be read twice."""
        told = self.on_message is None
        for record in records:
            if self.gold is not None and record.sample is not None:
                self.gold.check(record.sample, record.line)
            if record.notice is not None and not told and self.on_message is not None:
                self.on_message(f"{record.notice}; said once, every such line is read the same way")
                told = True
            yield record

    def close(self) -> None:
        if self.owned and self.judge is not None:
            self.judge.close()


def _open_source(settings: RunSettings, metrics: Sequence[Metric[Any]], judge: Judge | None, on_message: Callable[[str], None] | None, gold: Gold | None) -> Any:
    """Where the rows come from: this process, or a Ray cluster (--ray: it reads a file)."""
    if settings.ray is None:
        return _LocalSource(settings, metrics, judge, on_message, gold)
    if judge is not None or settings.judge_url:
        raise ConfigError("--ray loads the judge on every worker from --model; it takes neither a loaded judge nor --judge-url")
    from localeval.run.distributed import RayScorer

    return RayScorer(settings, metrics, None if settings.ray == LOCAL_RAY else settings.ray)


def score_file(
    settings: RunSettings,
    *,
    judge: Judge | None = None,
    on_start: Callable[[int], None] | None = None,
    on_row: Callable[[ResultRow], None] | None = None,
    on_message: Callable[[str], None] | None = None,
) -> RunOutcome:
    """Score `settings.input` into `settings.output`; see the module docstring for the steps.

    `judge` overrides the one the settings name (load it once for many runs);
    `on_start(n)` is told how many lines a resume found done, `on_row` sees each new
    row, `on_message` each line that could not be read. Ctrl-C raises Interrupted,
    with the results so far on disk.
    """
    # With the results on standard output, whatever else writes there (a metric plugin's print, its
    # child process, C code) goes to standard error: stdout carries JSON lines and nothing else.
    with watching_ctrl_c():
        if writes_to_stdout(settings):
            with diverted_stdout() as stdout:
                return _score_file(settings, judge, stdout, on_start, on_row, on_message)
        return _score_file(settings, judge, None, on_start, on_row, on_message)


def _score_file(
    settings: RunSettings,
    judge: Judge | None,
    stdout: IO[bytes] | None,
    on_start: Callable[[int], None] | None,
    on_row: Callable[[ResultRow], None] | None,
    on_message: Callable[[str], None] | None,
) -> RunOutcome:
    check_paths(settings)
    check_retrieval_files(settings)
    if settings.qrels is not None:  # INPUT is a run file: its samples are scored, from a file of their own
        with samples_from_run_files(settings) as from_run:
            return _score_file(from_run, judge, stdout, on_start, on_row, on_message)
    _check_map(settings)
    metrics = build_metrics(settings)
    if settings.calibration is not None and not any(m.uses_judge() for m in metrics):
        raise ConfigError(
            f"--calibration {settings.calibration}: a calibration weighs the judge rule's features, and no selected metric decides with the judge "
            "(the verifier decides): drop --verifier to use it, or leave --calibration out"
        )
    if settings.backend_options and judge is None and not any(m.uses_judge() for m in metrics):
        checked_spec(JudgeSpec.of(settings))  # a typo in a judge option is refused on every run, judged or not
    summary = Summary(
        [m.name for m in metrics], settings.thresholds, settings.min_mean, max_mean=settings.max_mean,
        gate_on=settings.threshold_on, gold=read_labels_for(settings.labels, metrics) if settings.labels is not None else None,
    )
    hashed = _input_hash(settings)
    # Before the judge loads (seconds, and its file's SHA-256): the metrics' own models (a missing
    # embedding model stops here) and a resume of a run whose input or metrics differ.
    before_judge = describe_run(settings, metrics, None, hashed.sha256 if hashed is not None else None)
    if settings.resume and settings.output:
        _refuse_another_run(settings.output, before_judge)
    source = _open_source(settings, metrics, judge, on_message, summary.gold)
    try:
        # The verifier's answers go in the judge's verdict cache (a Ray worker's verifier keeps none).
        with verifier_answers_kept(cache_path(settings.cache) if settings.ray is None else None):
            return _run(settings, metrics, summary, source, hashed, stdout, on_start, on_row, on_message)
    finally:
        source.close()


def _refuse_another_run(path: str, before_judge: dict[str, Any]) -> None:
    """A results file whose header records another input, other metrics or another version is
    refused before any judge is loaded; the judge itself is compared once it is (`_read_previous`).
    A file without a readable header is left to that full check, which says what is wrong with it."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(MAX_LINE_BYTES + 1)
        item = parse_line(first, path, 1) if first.endswith(b"\n") else None
    except (OSError, LocalevalError):
        return
    if isinstance(item, RunHeader):
        differences = resume_differences(item.run, before_judge, judge=False)
        if differences:
            raise ConfigError(f"cannot resume {path}: it was written by a different run ({'; '.join(differences)}). Write to a new file, or drop --resume to start over")


def _run(
    settings: RunSettings,
    metrics: Sequence[Metric[Any]],
    summary: Summary,
    source: Any,
    hashed: _InputHash | None,
    stdout: IO[bytes] | None,
    on_start: Callable[[int], None] | None,
    on_row: Callable[[ResultRow], None] | None,
    on_message: Callable[[str], None] | None,
) -> RunOutcome:
    provenance = describe_run(settings, metrics, source.describe_judge(), hashed.sha256 if hashed is not None else None)
    if settings.timing and source.cache_file is not None:  # not part of a resume's identity; left out with the timing (byte-identical reruns)
        provenance["verdict_cache"] = str(source.cache_file)
    if summary.gold is not None:  # not part of a resume's identity: labels change the summary, never a score
        provenance["labels"] = {"path": summary.gold.path, "sha256": summary.gold.sha256}
        if hashed is not None:  # each label against the sample it names, before any row joins it (resumed rows too)
            summary.gold.check_records(read_records(settings.input, field_map=settings.map, limit=hashed.size))
    results_file = settings.output if settings.output and is_regular_or_new(settings.output) else None
    written = 0
    done = _DoneLines()
    opened: Any = locked_for_writing(results_file) if results_file else nullcontext(None)
    with opened as handle:
        if handle is not None:
            if settings.resume:
                _read_previous(handle, str(results_file), provenance, summary, done, Path(settings.input).stat().st_size + 1)
            else:
                handle.truncate(0)
                _write_header(handle, provenance, str(results_file))
        stream = stdout if settings.output == STDIO else _open_stream(settings.output) if settings.output and not results_file else None
        rows_as_written = getattr(source, "rows_as_written", False)  # a Ray source's rows are made as written by the sink
        sink = _Sink(handle, stream, bool(settings.junit_xml or settings.markdown), settings.timing, settings.output or "", rows_as_written)
        if on_start is not None:
            on_start(done.count)
        try:
            for scored in source.rows(done, hashed.size if hashed is not None else None):
                row = sink.write(scored)  # as written: the summary counts what the file holds
                written += 1
                summary.add(row)
                if row.unreadable and on_message is not None:
                    on_message(row.errors["input"])
                if on_row is not None:
                    on_row(row)
        except KeyboardInterrupt:
            where = f"; continue with --resume -o {settings.output}" if results_file else ""
            raise Interrupted(f"interrupted after {written} samples{where}") from None
        if hashed is not None and on_message is not None:
            _tell_if_grown(settings.input, hashed, on_message)
        figures = summary.figures()
        report = {**figures.to_json_dict(), "run": provenance}
        code = figures.exit_code(settings.fail_on_error)
        _write_reports(settings, figures, report, sink, stdout, settings.fail_on_error)
    return RunOutcome(report, code, written, figures)
