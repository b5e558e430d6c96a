"""Property tests: any rows a results file can hold go through every report format without a
traceback and without one piece of markup of their own; any bytes go through the results
reader as rows or as errors naming their line."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localeval.data.results import ROW, ResultRow, parse_line, read_results, rows_only
from localeval.errors import InputError
from localeval.reports.html import BINS, worst_rows, write_html
from localeval.reports.junit import write_junit
from localeval.reports.markdown import write_markdown
from localeval.reports.table import summary_table
from localeval.stats.summary import Summary

NASTY = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "\u202eevil", "a\r\nb", "|", "\x00\x01\x1b[31m", "![x](http://t/p)", "&amp;", "]]>", "\ud800"]
text = st.text(max_size=30) | st.sampled_from(NASTY)
metric_names = st.sampled_from(["context_recall", "context_relevance", "nonllm_context_recall", "id_context_recall"]) | text
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3), max_leaves=10)
shares = st.none() | st.floats(min_value=0, max_value=1)

rows = st.builds(
    lambda id_, line, scores, details, errors, extra: {"id": id_, "line": line, "scores": scores, "details": details, "errors": errors, "extra": extra},
    st.none() | st.integers() | text,
    st.integers(min_value=1, max_value=10**6),
    st.dictionaries(metric_names, shares, max_size=3),
    st.dictionaries(metric_names, st.dictionaries(text, json_values, max_size=3), max_size=3),
    st.dictionaries(metric_names | st.just("input"), text, max_size=2),
    st.dictionaries(text, json_values, max_size=2),
)

ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "table", "thead", "tbody", "tr", "th", "td", "div", "figure", "figcaption", "svg", "rect", "text", "line", "details", "summary", "ul", "li", "b", "pre", "script"}


class TagCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.handlers: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.handlers += [name for name, _ in attrs if name.startswith("on")]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.lists(rows, max_size=6))
def test_every_report_format_takes_any_rows_and_adds_no_markup(data):
    parsed = [ROW.validate_python(row) for row in data]
    names = list(dict.fromkeys(name for row in parsed for name in row.scores)) or ["id_context_recall"]
    summary = Summary(names, {names[0]: 0.5})
    for row in parsed:
        summary.add(row)
    figures = summary.figures()

    page = io.StringIO()
    shown, total = worst_rows(iter(parsed), names, 1000)
    write_html(page, shown, total, figures, {n: summary.distribution(n).histogram(BINS) for n in names}, title=NASTY[1])
    collector = TagCollector()
    collector.feed(page.getvalue())
    assert set(collector.tags) <= ALLOWED_TAGS and collector.tags.count("script") == 1
    assert collector.handlers == []

    junit = io.StringIO()
    write_junit(junit, iter(parsed), figures)
    ET.fromstring(junit.getvalue().encode("utf-8", "backslashreplace"))

    markdown = io.StringIO()
    write_markdown(markdown, iter(parsed), figures)
    body = markdown.getvalue()
    assert "<" not in body and "\r" not in body and "![" not in body
    table_lines = [line for line in body.splitlines() if line.startswith("| ")]
    columns = {line.count(" | ") for line in table_lines if not line.startswith("| metric") and not line.startswith("| id ")}
    assert columns <= {5, 10}  # no cell added a column (failing samples 6 cells, metrics 11)

    assert "\x1b" not in summary_table(figures)


@settings(max_examples=200, deadline=None)
@given(raw=st.binary(max_size=200) | st.lists(json_values, max_size=1).map(lambda v: json.dumps(v[0] if v else {}).encode()) | rows.map(lambda r: json.dumps(r).encode()))
def test_the_results_reader_takes_any_bytes(raw):
    try:
        item = parse_line(raw, "r.jsonl", 7)
    except InputError as error:
        assert str(error).startswith("r.jsonl:7: ")
    else:
        assert isinstance(item, ResultRow) or item.format == "localeval-results"


def test_a_results_file_with_bad_lines_yields_every_good_row(tmp_path: Path):
    path = tmp_path / "r.jsonl"
    good = {"id": "a", "line": 1, "scores": {"m": 0.5}, "details": {}, "errors": {}}
    path.write_bytes(b"\n".join([json.dumps(good).encode(), b"\xff\xfe", b"[1, 2]", b'{"line": "x"}', json.dumps({**good, "line": 5}).encode()]) + b"\n")
    problems: list[InputError] = []
    assert [row.line for row in rows_only(read_results(path, on_error=problems.append))] == [1, 5]
    assert [problem.line for problem in problems] == [2, 3, 4]
