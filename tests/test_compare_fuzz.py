"""Property test: any two results files (any rows a results file can hold, crafted headers) go
through `compare` and every comparison format without a traceback and without markup of their own."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localeval import compare
from localeval.data.results import ROW
from localeval.errors import InputError
from localeval.reports.comparison import comparison_text, write_comparison_junit
from localeval.reports.comparison_html import write_comparison_html
from localeval.reports.comparison_markdown import MAX_MARKDOWN_CHARS, write_comparison_markdown
from tests.test_reports_fuzz import NASTY, TagCollector, json_values, rows

headers = st.fixed_dictionaries(
    {"input": st.none() | st.fixed_dictionaries({"path": st.sampled_from(NASTY), "sha256": st.sampled_from(["a", "b"])}), "metrics": json_values, "judge": json_values},
    optional={"plugins": json_values, "localeval": json_values},
)
ALLOWED = {
    "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "code", "ul", "li", "table", "thead", "tbody", "tr", "th", "td",
    "span", "div", "figure", "figcaption", "details", "summary", "label", "input", "select", "option", "script",  # the page's own, one script
    "svg", "line", "circle", "rect", "text",  # the plots
}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(base_rows=st.lists(rows, max_size=5), candidate_rows=st.lists(rows, max_size=5), base_run=headers, candidate_run=headers, drop=st.floats(0, 1))
def test_any_two_results_files_compare_and_report_without_markup(tmp_path, base_rows, candidate_rows, base_run, candidate_run, drop):
    paths = []
    for name, run, data in (("base", base_run, base_rows), ("candidate", candidate_run, candidate_rows)):
        path = tmp_path / f"{name}.jsonl"
        lines = [json.dumps({"format": "localeval-results", "version": 1, "run": run})] + [ROW.validate_python(row).to_line().rstrip("\n") for row in data]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    try:
        found = compare(*paths)
    except InputError as error:  # a line the results reader refuses (a lone surrogate): a clear error naming its file
        assert str(error).startswith(tuple(str(p) for p in paths))
        return
    shared = list(found.metrics)
    gated = compare(*paths, max_drop={name: drop for name in shared[:1]}, allow_setup_change=True)
    for comparison in (found, gated):
        assert "\x1b" not in comparison_text(comparison) and "\x00" not in comparison_text(comparison)  # no terminal control
        markdown, junit, html = io.StringIO(), io.StringIO(), io.StringIO()
        write_comparison_markdown(markdown, comparison)
        assert "<script>" not in markdown.getvalue() and "<img" not in markdown.getvalue() and len(markdown.getvalue()) <= MAX_MARKDOWN_CHARS
        write_comparison_junit(junit, comparison)
        ET.fromstring(junit.getvalue().encode("utf-8"))
        write_comparison_html(html, comparison)
        parser = TagCollector()
        parser.feed(html.getvalue())
        sortable = any(m.pairs for m in comparison.metrics.values())  # the one script sorts and filters the table of pairs, when there is one
        assert set(parser.tags) <= ALLOWED and parser.tags.count("script") == int(sortable) and not parser.handlers
        json.dumps(comparison.to_json_dict())
        assert comparison.exit_code in (0, 1, 2)
