"""The README is a front door a newcomer reads in minutes, and its one table of how good and how fast
is docs/measured.md's opening table, row for row, so the two cannot drift apart: a figure changes in
both or the suite fails."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MEASURED = ROOT / "docs" / "measured.md"
README_HEADING = "## How good, how fast"
MEASURED_HEADING = "## The figures that hold now"
SHARED_COLUMNS = 5  # metric, grader, figure, rows, seconds per sample

DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
ISSUE_NUMBER = re.compile(r"\bissues? #?\d+", re.I)


def _first_table_under(text: str, heading: str) -> list[list[str]]:
    """The cells of the first Markdown table after `heading`, header row first, separator left out."""
    lines = text.splitlines()
    start = lines.index(heading)
    first = next(i for i in range(start, len(lines)) if lines[i].startswith("|"))
    rows = []
    for line in lines[first:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not all(re.fullmatch(r":?-+:?", cell) for cell in cells):
            rows.append(cells)
    return rows


def test_the_table_reader_reads_cells_and_skips_the_separator():
    text = "# T\n\n## H\n\nProse.\n\n| a | b |\n|---|---|\n| 1 | x y |\n\n| other | table |\n"
    assert _first_table_under(text, "## H") == [["a", "b"], ["1", "x y"]]


def test_the_readmes_measured_table_is_measured_mds_opening_table():
    readme = _first_table_under(README.read_text(encoding="utf-8"), README_HEADING)
    measured = _first_table_under(MEASURED.read_text(encoding="utf-8"), MEASURED_HEADING)
    assert readme[0][:SHARED_COLUMNS] == measured[0][:SHARED_COLUMNS] == ["metric", "grader", "figure", "rows", "s / sample"]
    readme_rows = [row[:SHARED_COLUMNS] for row in readme[1:]]
    measured_rows = [row[:SHARED_COLUMNS] for row in measured[1:]]
    only_readme = [row for row in readme_rows if row not in measured_rows]
    only_measured = [row for row in measured_rows if row not in readme_rows]
    assert not only_readme and not only_measured, f"README only: {only_readme}\nmeasured.md only: {only_measured}"


def test_each_readme_row_links_to_its_section_of_measured_md():
    for row in _first_table_under(README.read_text(encoding="utf-8"), README_HEADING)[1:]:
        assert re.fullmatch(r"\[\w+\]\(docs/measured\.md#[\w-]+\)", row[-1]), row


def test_the_readme_is_short_with_no_dates_and_no_issue_numbers():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 170, f"README.md has {len(lines)} lines; move detail into docs/"
    long_lines = [number for number, line in enumerate(lines, 1) if len(line) > 200]
    assert not long_lines, f"README.md lines over 200 characters: {long_lines}"
    assert not [line for line in lines if DATE.search(line)], "dates belong in docs/HISTORY.md"
    assert not [line for line in lines if ISSUE_NUMBER.search(line)], "issue numbers belong in docs/HISTORY.md"
