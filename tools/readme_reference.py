"""Write the README's CLI reference and metric options from the code, so they cannot go stale.

The text between `<!-- NAME:start -->` and `<!-- NAME:end -->` markers is generated:
`cli-reference` from the click commands (usage, every option, its help), and
`metric-options` from the metrics' parameter models (name, type, default, help).
tests/test_docs.py fails when the README differs from what this script writes.

    python tools/readme_reference.py          # rewrite README.md in place
    python tools/readme_reference.py --check  # exit 1 when README.md is stale
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

README = Path(__file__).resolve().parents[1] / "README.md"
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


SECTIONS = {"cli-reference": cli_reference, "metric-options": metric_options}


def render(readme: str) -> str:
    for name, build in SECTIONS.items():
        pattern = re.compile(f"(<!-- {name}:start -->\n)(?:.*?\n)?(<!-- {name}:end -->)", re.S)
        if not pattern.search(readme):
            raise SystemExit(f"README.md has no <!-- {name}:start --> ... <!-- {name}:end --> section")
        text = build()
        readme = pattern.sub(lambda m, text=text: m.group(1) + text + "\n" + m.group(2), readme)
    return readme


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="exit 1 if README.md is not what this script would write")
    args = parser.parse_args()
    current = README.read_text(encoding="utf-8")
    wanted = render(current)
    if args.check:
        if current != wanted:
            sys.exit("README.md is stale: run python tools/readme_reference.py")
        return
    README.write_text(wanted, encoding="utf-8")


if __name__ == "__main__":
    main()
