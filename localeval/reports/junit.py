"""JUnit XML for CI: one test case per sample and metric; a failure carries score, threshold and reason.
A --min-mean or --max-mean gate is a test case of its own, after the samples: a gate not met is a
<failure>, so a CI test tab shows what failed the run (a property alone is shown by none).

Written in one pass over the rows: each metric's cases go to a spooled temporary
file while its counts are tallied, and the suites are assembled at the end, so
memory stays bounded however many samples there are.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Mapping
from typing import IO, Any

from localeval.data.results import Outcome, ResultRow
from localeval.reports import explain, number, score_text
from localeval.reports.escaping import xml_attribute, xml_text
from localeval.stats.figures import MetricFigures, SummaryFigures
from localeval.stats.gates import MeanGate

SPOOL_BYTES = 1 << 20  # a suite's cases stay in memory up to this size, then go to disk


def _properties(figures: MetricFigures) -> dict[str, Any]:
    """A suite's figures as JUnit properties: the mean with its standard error and 95% interval,
    the prediction-powered ones where there are labels, and a min_mean or max_mean gate's verdict."""
    ci95 = figures.ci95 or (None, None)
    found = {"mean": figures.mean, "stderr": figures.stderr, "ci95_low": ci95[0], "ci95_high": ci95[1], "median": figures.median}
    ppi = figures.ppi
    if ppi is not None:
        bounds = ppi.ci95 or (None, None)
        found.update(ppi_labelled=ppi.labelled, ppi_mean=ppi.mean, ppi_stderr=ppi.stderr, ppi_ci95_low=bounds[0], ppi_ci95_high=bounds[1])
        found.update(ppi_lambda=ppi.weight, ppi_width_ratio=ppi.width_ratio)
    if figures.threshold is not None:
        found.update(threshold=figures.threshold.minimum, pass_rate=figures.threshold.pass_rate)
    if figures.gate is not None:
        found.update(figures.gate.to_json_dict())  # the gate's figures under the summary's names
    return found


def _gate_case(name: str, gate: MeanGate) -> str:
    """The mean gate's test case: a <failure> when it is not met, naming its bound, the figure it read and why."""
    bound = f"{gate.kind.replace('_', '-')} {number(gate.bound)}"
    read = f"read on the {gate.figure} {number(gate.value)}" + (f": {gate.reason}" if gate.reason else "")
    body = "" if gate.ok else f'<failure message={xml_attribute(f"{bound} not met, {read}")} type="{gate.kind}">{xml_text(f"{bound} not met, {read}")}</failure>'
    output = f"<system-out>{xml_text(f'{bound}: {read}')}</system-out>"
    return f"    <testcase classname={xml_attribute(f'localeval.{name}')} name={xml_attribute(f'{gate.kind} gate')}>{body}{output}</testcase>\n"


class _Suite:
    def __init__(self, name: str, threshold: float | None, properties: Mapping[str, Any], gate: MeanGate | None = None) -> None:
        self.name = name
        self.threshold = threshold
        self.properties = properties
        self.gate = gate
        self.counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        self.cases: IO[str] = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES, mode="w+", encoding="utf-8")

    def add(self, row: ResultRow) -> None:
        outcome = row.outcome(self.name, self.threshold)
        reason = explain(row, self.name)
        score = score_text(row, self.name)
        self.counts["tests"] += 1
        body = ""
        if outcome is Outcome.FAIL:
            self.counts["failures"] += 1
            message = f"score {score} < threshold {self.threshold}: {reason}"
            body = f'<failure message={xml_attribute(message)} type="threshold">{xml_text(message)}</failure>'
        elif outcome is Outcome.ERROR and self.threshold is not None:
            self.counts["failures"] += 1  # a gate fails on what it could not score
            body = f'<failure message={xml_attribute("not scored: " + reason)} type="error">{xml_text(reason)}</failure>'
        elif outcome is Outcome.ERROR:
            self.counts["errors"] += 1
            body = f'<error message={xml_attribute(reason)} type="error">{xml_text(reason)}</error>'
        elif outcome is Outcome.NAN:
            self.counts["skipped"] += 1
            body = f"<skipped message={xml_attribute('score undefined (NaN): ' + reason)}/>"
        name = xml_attribute(f"{row.id} (line {row.line})")
        classname = xml_attribute(f"localeval.{self.name}")
        output = f"<system-out>{xml_text(f'score {score}: {reason}')}</system-out>"
        self.cases.write(f"    <testcase classname={classname} name={name}>{body}{output}</testcase>\n")

    def write_to(self, out: IO[str]) -> None:
        if self.gate is not None:
            self.cases.write(_gate_case(self.name, self.gate))
            self.counts["tests"] += 1
            self.counts["failures"] += not self.gate.ok
        c = self.counts
        out.write(
            f"  <testsuite name={xml_attribute(self.name)} tests=\"{c['tests']}\" failures=\"{c['failures']}\" "
            f"errors=\"{c['errors']}\" skipped=\"{c['skipped']}\">\n"
        )
        out.write("    <properties>\n")
        for key, value in self.properties.items():
            out.write(f"      <property name={xml_attribute(key)} value={xml_attribute(number(value, 6, missing=''))}/>\n")
        out.write("    </properties>\n")
        self.cases.seek(0)
        shutil.copyfileobj(self.cases, out)
        self.cases.close()
        out.write("  </testsuite>\n")


def write_junit(out: IO[str], rows: Iterable[ResultRow], summary: SummaryFigures) -> None:
    """Write the JUnit XML document for `rows` (one pass) to `out`."""
    suites = [_Suite(name, figures.threshold.minimum if figures.threshold else None, _properties(figures), figures.gate) for name, figures in summary.metrics.items()]
    for row in rows:
        for suite in suites:
            suite.add(row)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="localeval">\n')
    for suite in suites:
        suite.write_to(out)
    out.write("</testsuites>\n")
