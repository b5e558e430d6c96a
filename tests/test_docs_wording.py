"""The user's pages speak to users: no page under docs/ but the lab notebooks (HISTORY.md,
experiments.md) names an issue number or reads like working notes ("this afternoon", "last
session"). A user cannot look up issue 48, and "today" is wrong the day after it is written.
And the reference pages keep the rule a user needs findable: no paragraph of prose runs past
eight lines (split it, or make it a list or a table)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = {"HISTORY.md", "experiments.md"}
USER_PAGES = [page for page in sorted((ROOT / "docs").glob("*.md")) if page.name not in NOTEBOOKS]

ISSUE_NUMBER = re.compile(r"\bissues? #?\d+", re.I)
WORKING_NOTES = re.compile(
    r"\b(this (morning|afternoon|evening|session)|late afternoon|tonight|yesterday|today|last (time|session)|earlier sessions?)\b",
    re.I,
)

REFERENCE_PAGES = ["metrics.md", "results.md", "configuration.md", "judges.md"]
LONGEST_PARAGRAPH = 8
NOT_PROSE = ("|", "-", "*", "#", ">", "<", "```")


def long_paragraphs(text: str) -> list[str]:
    """The first line (numbered) of each run of more than LONGEST_PARAGRAPH prose lines: lines that
    are not a table, a list item or its continuation, a heading, a quote or code."""
    found, run, in_code = [], [], False
    for number, line in enumerate([*text.splitlines(), ""], 1):
        if line.startswith("```"):
            in_code = not in_code
        prose = not in_code and line.strip() and not line.startswith((" ", *NOT_PROSE)) and not re.match(r"\d+\. ", line)
        if prose:
            run.append(f"{number}: {line.strip()[:80]}")
            continue
        if len(run) > LONGEST_PARAGRAPH:
            found.append(run[0])
        run = []
    return found


def _offending_lines(text: str, pattern: re.Pattern[str]) -> list[str]:
    return [f"{number}: {line.strip()[:120]}" for number, line in enumerate(text.splitlines(), 1) if pattern.search(line)]


def test_the_checks_find_what_they_look_for():
    text = "Refitted for issue 48.\nMeasured this afternoon.\nissues 12 and 13\nThe tissue 4 sample.\nToday's run.\n"
    assert _offending_lines(text, ISSUE_NUMBER) == ["1: Refitted for issue 48.", "3: issues 12 and 13"]
    assert _offending_lines(text, WORKING_NOTES) == ["2: Measured this afternoon.", "5: Today's run."]
    nine = "\n".join(f"line {i}" for i in range(9))
    assert long_paragraphs(f"{nine}\n\n- a\n  b\n") == ["1: line 0"]
    assert long_paragraphs(nine.replace("line 4", "")) == [] and long_paragraphs(f"```\n{nine}\n```") == []


def test_user_pages_name_no_issue_number():
    found = {page.name: lines for page in USER_PAGES if (lines := _offending_lines(page.read_text(encoding="utf-8"), ISSUE_NUMBER))}
    assert not found, f"issue numbers on user pages (history belongs in docs/HISTORY.md): {found}"


def test_user_pages_carry_no_working_notes():
    found = {page.name: lines for page in USER_PAGES if (lines := _offending_lines(page.read_text(encoding="utf-8"), WORKING_NOTES))}
    assert not found, f"working-notes wording on user pages: {found}"


def test_reference_pages_have_no_paragraph_over_eight_lines():
    found = {name: lines for name in REFERENCE_PAGES if (lines := long_paragraphs((ROOT / "docs" / name).read_text(encoding="utf-8")))}
    assert not found, f"paragraphs over {LONGEST_PARAGRAPH} lines (split them, or make a list or a table): {found}"
