"""Write the CLI reference and the metric options in docs/ from the code, so they cannot go stale.

The text between `<!-- NAME:start -->` and `<!-- NAME:end -->` markers is generated:
`cli-reference` in docs/cli.md from the click commands (usage, every option, its help), and
`metric-options` in docs/metrics.md from the metrics' parameter models (name, type, default, help).
tests/test_docs.py fails when a page differs from what this script writes.

    python tools/readme_reference.py          # rewrite docs/cli.md and docs/metrics.md in place
    python tools/readme_reference.py --check  # exit 1 when either is stale
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import click

from localeval.cli import cli
from localeval.metrics import list_metrics

ROOT = Path(__file__).resolve().parents[1]
WIDTH = 38  # the column where option help starts


def _option_line(param: click.Parameter) -> str | None:
    if not isinstance(param, click.Option) or param.hidden or param.name == "help":
        return None
    names = ", ".join(param.opts)
    if param.secondary_opts:
        names += " / " + ", ".join(param.secondary_opts)
    if not param.is_flag and not param.count:
        metavar = param.metavar or (param.type.name.upper() if not isinstance(param.type, click.Choice) else "[" + "|".join(map(str, param.type.choices)) + "]")
        names += f" {metavar}"
    text = " ".join((param.help or "").split())
    return f"  {names:<{WIDTH - 2}}{text}" if len(names) < WIDTH - 3 else f"  {names}\n  {'':<{WIDTH - 2}}{text}"


def _commands(group: click.Group, prefix: str) -> list[tuple[str, click.Command]]:
    found = []
    for name in group.list_commands(click.Context(group)):
        command = group.get_command(click.Context(group), name)
        if isinstance(command, click.Group):
            found += _commands(command, f"{prefix} {name}")
        elif command is not None:
            found.append((f"{prefix} {name}", command))
    return found


def cli_reference() -> str:
    blocks = []
    for path, command in _commands(cli, "localeval"):
        arguments = " ".join(p.human_readable_name for p in command.params if isinstance(p, click.Argument))
        summary = " ".join((command.short_help or command.get_short_help_str(200)).split())
        lines = [f"{path} {arguments}".rstrip() + "  # " + summary]
        lines += [f"  {line}" for line in (command.epilog or "").replace("\b", "").splitlines() if line.strip()]
        lines += [line for p in command.params if (line := _option_line(p))]
        blocks.append("\n".join(lines))
    return "```\n" + "\n\n".join(blocks) + "\n```"


def _default(value: Any) -> str:
    return "-" if value is None else f"`{str(value).lower() if isinstance(value, bool) else value}`"


def metric_options() -> str:
    rows = ["| option | type | default | what it does |", "|---|---|---|---|"]
    for metric in list_metrics(builtin_only=True):
        for key, option in metric["options"].items():
            rows.append(f"| `{metric['name']}.{key}` | {option['type']} | {_default(option['default'])} | {option['description']} |")
    return "\n".join(rows)


def judge_options() -> str:
    from localeval.judge.backends import list_backend_options

    rows = ["| backend | option | default | part of a run's identity | what it does |", "|---|---|---|---|---|"]
    for backend, options in list_backend_options().items():
        for key, option in options.items():
            identity = "yes" if option["identity"] else "no (speed only)"
            rows.append(f"| {backend} | `{key}` | {_default(option['default'])} | {identity} | {option['description']} |")
    return "\n".join(rows)


# Each generated section, the page it lives in, and what writes it.
SECTIONS = {
    "cli-reference": (ROOT / "docs" / "cli.md", cli_reference),
    "metric-options": (ROOT / "docs" / "metrics.md", metric_options),
    "judge-options": (ROOT / "docs" / "judges.md", judge_options),
}


def render(page: Path, text: str) -> str:
    """`text` (the content of `page`) with every section that lives in `page` written anew."""
    for name, (where, build) in SECTIONS.items():
        if where != page:
            continue
        pattern = re.compile(f"(<!-- {name}:start -->\n)(?:.*?\n)?(<!-- {name}:end -->)", re.S)
        if not pattern.search(text):
            raise SystemExit(f"{page.relative_to(ROOT)} has no <!-- {name}:start --> ... <!-- {name}:end --> section")
        generated = build()
        text = pattern.sub(lambda m, generated=generated: m.group(1) + generated + "\n" + m.group(2), text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is not what this script would write")
    args = parser.parse_args()
    stale = []
    for page in dict.fromkeys(where for where, _ in SECTIONS.values()):
        current = page.read_text(encoding="utf-8")
        wanted = render(page, current)
        if current == wanted:
            continue
        if args.check:
            stale.append(str(page.relative_to(ROOT)))
        else:
            page.write_text(wanted, encoding="utf-8")
    if stale:
        sys.exit(f"stale: {', '.join(stale)}; run python tools/readme_reference.py")


if __name__ == "__main__":
    main()
