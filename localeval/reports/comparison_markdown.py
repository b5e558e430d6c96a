"""`localeval compare --markdown`: the comparison as a pull-request comment that fits.

A comment is read in a list of others, and GitHub refuses one over 65,536 characters. So the
first line is the verdict (which metrics got worse, by how much, and the gates' outcome), then one
compact table (the columns a comment shows without scrolling sideways), the notes, and the samples
that moved folded in `<details>` blocks, each sample's contexts and response shown once however
many metrics it moved in. The whole stays under MAX_MARKDOWN_CHARS whatever the run's size: detail
is dropped step by step (fewer changes per sample, shorter quotes, fewer samples, then whole
blocks), and the comment says what it left out and where the rest is (`--json`, the page).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from localeval.comparison.compare import Comparison, MetricComparison
from localeval.comparison.movers import MAX_CHANGES, Mover
from localeval.reports import number
from localeval.reports.comparison import (
    MAX_UNPAIRED_LISTED,
    difference_interval,
    gate_words,
    metric_notes,
    mover_tables,
    preamble,
    signed,
    smallest_shown_words,
    verdict_line,
)
from localeval.reports.escaping import markdown_cell

MAX_MARKDOWN_CHARS = 60_000  # GitHub refuses a comment over 65,536; room for a heading a CI step adds
NOTICE_ROOM = 1_500  # kept free for the note on what was left out
MAX_NOTE_CHARS = 1_000


@dataclass(frozen=True)
class Detail:
    """How much of the movers a rendering keeps: changes per sample and metric, characters per
    change, and samples per list (None: all)."""

    changes: int
    chars: int
    movers: int | None


# Tried in order until the comment fits; the last one keeps each sample's scores only.
DETAIL_STEPS = (
    Detail(MAX_CHANGES + 1, 400, None),
    Detail(4, 240, None),
    Detail(2, 160, None),
    Detail(1, 120, None),
    Detail(1, 120, 50),
    Detail(1, 120, 20),
    Detail(1, 120, 10),
    Detail(1, 120, 5),
    Detail(0, 0, 5),
    Detail(0, 0, 3),
)


def _verdict_cell(m: MetricComparison) -> str:
    verdict = m.verdict.value
    cell = f"**{verdict}**" if verdict == "worse" else verdict
    if m.gate is not None:
        cell += "; gate " + ("met" if m.gate.ok else "**NOT met**")
    return cell


def _table(comparison: Comparison, budget: int) -> str:
    """The paired table, one row per metric, cut (and said so) where it would pass `budget`."""
    lines = ["| metric | n | base → candidate | difference (95% interval) | verdict | smallest change shown |", "|---|---|---|---|---|---|"]
    used = sum(len(line) + 1 for line in lines)
    names = list(comparison.metrics)
    for shown, (name, m) in enumerate(comparison.metrics.items()):
        d = m.difference
        row = (
            f"| {markdown_cell(name)} | {d.count} | {number(d.base_mean)} → {number(d.candidate_mean)} | {signed(d.mean, d.decimals)} ({difference_interval(d.ci95, d.decimals)}) | "
            f"{_verdict_cell(m)} | {'±' + number(d.smallest_shown, d.decimals) if d.smallest_shown else '-'} |"
        )
        if used + len(row) + 1 > budget:
            lines.append(f"\n... and {len(names) - shown} more metrics: `--json` has them all.")
            break
        lines.append(row)
        used += len(row) + 1
    return "\n".join(lines) + "\n"


def _notes(comparison: Comparison) -> list[str]:
    notes = []
    for name, m in comparison.metrics.items():
        d = m.difference
        counts = f"{d.down} down, {d.up} up, {d.level} level"
        reach = smallest_shown_words(m)
        notes.append(f"{name}: {m.sentence()}; {counts}" + (f"; {reach}" if reach else ""))
    notes += [note for m in comparison.metrics.values() for note in metric_notes(m)]
    notes += [gate_words(name, m.gate, m.lower_is_better) for name, m in comparison.metrics.items() if m.gate is not None]
    return notes


def _head(comparison: Comparison, budget: int) -> str:
    """Everything before the movers: the verdict, the table, the setup and pairing, the notes, the unpaired samples."""
    parts = [f"**localeval compare**: {markdown_cell(verdict_line(comparison), 2000)}\n\n"]
    parts.append(_table(comparison, budget // 2))
    parts.append(f"\nBase `{markdown_cell(comparison.base)}`, candidate `{markdown_cell(comparison.candidate)}`.\n\n")
    parts.append("".join(f"{'  - ' if line.startswith('  ') else '- '}{markdown_cell(line.strip(), MAX_NOTE_CHARS)}\n" for line in preamble(comparison)))
    parts.append("".join(f"- {markdown_cell(note, MAX_NOTE_CHARS)}\n" for note in _notes(comparison)))
    if comparison.unpaired:
        parts.append(f"\n<details><summary>{len(comparison.unpaired)} sample(s) not paired (a --max-drop gate fails on them)</summary>\n\n| id | line | side | why not paired |\n|---|---|---|---|\n")
        parts += [f"| {markdown_cell(u.id)} | {u.line} | {u.side} | {markdown_cell(u.why)} |\n" for u in comparison.unpaired[:MAX_UNPAIRED_LISTED]]
        if len(comparison.unpaired) > MAX_UNPAIRED_LISTED:
            parts.append(f"\n... and {len(comparison.unpaired) - MAX_UNPAIRED_LISTED} more (`--json` lists them all).\n")
        parts.append("\n</details>\n")
    head = "".join(parts)
    if len(head) > budget:  # thousands of setup differences or notes: cut at a line, the rest is in the JSON
        head = head[: head.rfind("\n", 0, budget) + 1] + "\n... the rest of the notes left out: `--json` has them all.\n"
    return head


def _changes(mover: Mover, detail: Detail, first_seen: dict[str, str], where: str) -> str:
    """What changed in one mover, as one cell: the input's changes (contexts, response) only the
    first time its sample is listed, a pointer there after."""
    key = repr(mover.id)
    texts = []
    of_input = [change for change in mover.changes if change.of_input]
    if of_input and key in first_seen:
        texts.append(f"contexts and response: as under {first_seen[key]}")
        changes = [change for change in mover.changes if not change.of_input]
    else:
        if of_input:
            first_seen[key] = where
        changes = list(mover.changes)
    texts += [markdown_cell(change.text, detail.chars) for change in changes[: detail.changes]]
    if len(changes) > detail.changes and detail.changes:
        texts.append(f"... {len(changes) - detail.changes} more (`--json`)")
    return "<br>".join(texts) or "no change recorded in the details"


def _movers_block(name: str, label: str, movers: Sequence[Mover], detail: Detail, first_seen: dict[str, str]) -> str:
    kept = movers if detail.movers is None else movers[: detail.movers]
    where = f"{name}, {label}"
    lines = [f"<details><summary>{markdown_cell(name)}: {label} ({len(movers)})</summary>\n"]
    if detail.changes:
        lines.append("| id | line | base → candidate | what changed |\n|---|---|---|---|")
        lines += [
            f"| {markdown_cell(m.id)} | {m.base_line} | {number(m.base)} → {number(m.candidate)} | {_changes(m, detail, first_seen, markdown_cell(where))} |" for m in kept
        ]
    else:
        lines.append("| id | line | base → candidate |\n|---|---|---|")
        lines += [f"| {markdown_cell(m.id)} | {m.base_line} | {number(m.base)} → {number(m.candidate)} |" for m in kept]
    if len(kept) < len(movers):
        lines.append(f"\n... and {len(movers) - len(kept)} more (`--json`)")
    return "\n".join(lines) + "\n\n</details>\n"


def _left_out(detail: Detail, blocks_left: Sequence[str]) -> str:
    """What a shortened comment left out, and where the rest is."""
    cuts = []
    if detail.changes == 0:
        cuts.append("what changed in each sample")
    elif detail.changes <= MAX_CHANGES:
        cuts.append(f"each sample's changes past the first {detail.changes}, each cut to {detail.chars} characters")
    if detail.movers is not None:
        cuts.append(f"the samples past the first {detail.movers} of each list")
    if blocks_left:
        cuts.append("the lists " + ", ".join(blocks_left[:10]) + (f" and {len(blocks_left) - 10} more" if len(blocks_left) > 10 else ""))
    if not cuts:
        return ""
    return (
        f"\n_Left out to keep this comment under {MAX_MARKDOWN_CHARS:,} characters (GitHub's limit is 65,536): {'; '.join(cuts)}. "
        "Every figure and every listed sample with all its changes: `localeval compare --json`; every pair: the page (`localeval compare --html`)._\n"
    )


def comparison_markdown(comparison: Comparison, limit: int = MAX_MARKDOWN_CHARS) -> str:
    """The comment, at most `limit` characters."""
    head = _head(comparison, limit - NOTICE_ROOM)
    moved = mover_tables(comparison)
    if not moved:
        return head
    title = "\n### What moved\n\n"
    for detail in DETAIL_STEPS:
        first_seen: dict[str, str] = {}
        blocks = "".join(_movers_block(name, label, movers, detail, first_seen) for name, label, movers in moved)
        text = head + title + blocks + _left_out(detail, [])
        if len(text) <= limit:
            return text
    # Even the scores alone do not fit: whole lists, in order, while they do; the rest named.
    kept: list[str] = []
    left: list[str] = []
    used = len(head) + len(title) + NOTICE_ROOM
    first_seen = {}
    for name, label, movers in moved:
        block = _movers_block(name, label, movers, DETAIL_STEPS[-1], first_seen)
        if not left and used + len(block) <= limit:
            kept.append(block)
            used += len(block)
        else:
            left.append(markdown_cell(f"{name} {label}", 80))
    return head + (title + "".join(kept) if kept else "") + _left_out(DETAIL_STEPS[-1], left)


def write_comparison_markdown(out: IO[str], comparison: Comparison) -> None:
    """A Markdown comparison for a pull-request comment or a CI job summary."""
    out.write(comparison_markdown(comparison))
