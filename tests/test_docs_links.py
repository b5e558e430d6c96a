"""The documentation holds together: every relative link in the README and docs/*.md leads to a file
of this repository (and, with an anchor into a Markdown page, to one of its headings); the README
stays short with its two set-up commands near the top; those commands are the ones CI and the docs
use, and the CLI accepts them."""

import re
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]

# The README's quick start, word for word: command 1 scores the bundled example, command 2 runs the tests.
EXAMPLE_COMMAND = 'pip install -e ".[judge]" && localeval models pull && localeval score examples/rag_samples.jsonl -o results.jsonl'
TEST_COMMAND = 'pip install -e ".[test]" && python -m pytest'

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.S | re.M)
CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.M)
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$", re.M)
EXTERNAL = ("http://", "https://", "mailto:")


def _prose(text: str) -> str:
    """The text with fenced blocks blanked and code spans reduced to a word, so code is never read as a link."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return CODE_SPAN.sub("code", text)


def _links(page: Path) -> list[str]:
    prose = _prose(page.read_text(encoding="utf-8"))
    return INLINE_LINK.findall(prose) + REFERENCE_LINK.findall(prose)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, heading in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        slug = _slug(heading)
        found.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return found


def test_the_link_checker_reads_links_and_headings_as_github_does(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\n## CI: thresholds, exit codes, reports\n\n## The catalog and `localeval models`\n\n## Twice\n\n## Twice\n\n"
        "See [the CLI](cli.md#exit-codes), ![a picture](img/x.png \"title\") and [`a file`](../a.md).\n"
        "Not links: `[x](in-code.md)`, https://example.com, [web](https://example.com), [mail](mailto:a@b.c).\n"
        "```python\nrun.results[0](not_a_link.md)\n```\n\n[ref]: refs/target.md\n",
        encoding="utf-8",
    )
    assert _links(page) == ["cli.md#exit-codes", "img/x.png", "../a.md", "https://example.com", "mailto:a@b.c", "refs/target.md"]
    assert _anchors(page) == {"a-page", "ci-thresholds-exit-codes-reports", "the-catalog-and-localeval-models", "twice", "twice-1"}


def _broken(page: Path, root: Path = ROOT) -> list[str]:
    """Each relative link of `page` that does not lead to a file under `root` (or to a heading of it)."""
    broken, root = [], root.resolve()
    for target in _links(page):
        if target.startswith(EXTERNAL):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if root not in (resolved, *resolved.parents) or not resolved.exists():
            broken.append(f"{target}: no such file in the repository")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target}: {resolved.relative_to(root)} has no heading with the anchor #{anchor}")
    return broken


def test_the_link_checker_finds_missing_files_and_headings(tmp_path):
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "cli.md").write_text("# CLI\n\n## Exit codes\n", encoding="utf-8")
    (root / "data.csv").write_text("a\n", encoding="utf-8")
    (tmp_path / "elsewhere.md").write_text("x\n", encoding="utf-8")
    page = root / "README.md"
    page.write_text(
        "[ok](docs/cli.md#exit-codes) [ok](data.csv#L1) [ok](#top) [ok](docs/) [gone](docs/gone.md) [no heading](docs/cli.md#exit-code) "
        "[outside](../elsewhere.md)\n\n# Top\n",
        encoding="utf-8",
    )
    assert _broken(page, root) == [
        "docs/gone.md: no such file in the repository",
        "docs/cli.md#exit-code: docs/cli.md has no heading with the anchor #exit-code",
        "../elsewhere.md: no such file in the repository",
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = _broken(page)
    assert not broken, f"{page.relative_to(ROOT)}:\n" + "\n".join(broken)


def _quick_start() -> tuple[list[str], int]:
    """The commands of the README's quick-start block, and the line the block ends on."""
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index("## Quick start: two commands")
    opening = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    closing = next(i for i in range(opening + 1, len(lines)) if lines[i].startswith("```"))
    commands = [line for line in lines[opening + 1 : closing] if line.strip() and not line.lstrip().startswith("#")]
    return commands, closing + 1


def test_the_readme_is_short_and_opens_with_its_two_commands():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 350, f"README.md has {len(lines)} lines; move detail into docs/"
    commands, last_line = _quick_start()
    assert commands == [EXAMPLE_COMMAND, TEST_COMMAND]
    assert last_line <= 40, f"the quick-start block ends on line {last_line}"
    assert lines.index(EXAMPLE_COMMAND) < 40 and lines.index(TEST_COMMAND) < 40


def test_ci_runs_the_readmes_test_command():
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert TEST_COMMAND in [line.strip() for line in run if not line.lstrip().startswith("#")]


def test_the_docs_quote_the_readmes_commands_as_the_readme_has_them():
    """A page that repeats a quick-start command repeats it word for word."""
    for page in PAGES[1:]:
        for line in page.read_text(encoding="utf-8").splitlines():
            if "localeval models pull &&" in line:
                assert EXAMPLE_COMMAND in line, f"{page.relative_to(ROOT)}: {line}"
            if 'pip install -e ".[test]"' in line:
                assert TEST_COMMAND in line, f"{page.relative_to(ROOT)}: {line}"


def test_the_example_command_is_one_the_cli_accepts(monkeypatch):
    """Command 1's localeval steps parse (without running): the example file exists, the options are real."""
    from localeval.cli import cli

    monkeypatch.chdir(ROOT)
    steps = [step.split() for step in EXAMPLE_COMMAND.split(" && ") if step.startswith("localeval ")]
    assert [step[:2] for step in steps] == [["localeval", "models"], ["localeval", "score"]]
    assert (ROOT / "examples" / "rag_samples.jsonl").is_file()
    for words in steps:
        command: click.Command | None = cli
        rest = words[1:]
        while isinstance(command, click.Group):
            name, rest = rest[0], rest[1:]
            command = command.get_command(click.Context(command), name)
            assert command is not None, f"no command {name!r} in {' '.join(words)}"
        command.make_context(name, rest)


# A test named in docs/guarantees.md: `tests/x.py`, `tests/x.py::test_name`, or `::test_name` (in the file named last).
GUARANTEE_TEST = re.compile(r"`(tests/[\w/]+\.py)?(?:::(\w+))?`")


def test_every_test_that_guarantees_md_names_exists():
    """A promise is only as good as the test it names: a renamed or removed test must not leave
    guarantees.md pointing at nothing."""
    missing = []
    current = None
    for match in GUARANTEE_TEST.finditer((ROOT / "docs" / "guarantees.md").read_text(encoding="utf-8")):
        path, name = match.groups()
        if path:
            current = ROOT / path
            if not current.is_file():
                missing.append(path)
                continue
        if name and (current is None or not re.search(rf"^(async )?def {name}\(", current.read_text(encoding="utf-8"), re.M)):
            missing.append(f"{current and current.relative_to(ROOT)}::{name}")
    assert not missing, f"docs/guarantees.md names tests that do not exist: {missing}"
