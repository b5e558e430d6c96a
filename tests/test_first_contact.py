"""What a first run meets before any score: every --help ends with one real example line, `localeval
score` without a file names the bundled example, and a run that needs a model not yet pulled says the
command that pulls it (exit 2, one line, no traceback)."""

from pathlib import Path

import click
from click.testing import CliRunner

from localeval.cli import EXAMPLE_SCORE, cli
from localeval.models import store

ROOT = Path(__file__).resolve().parents[1]


def _command_paths(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and group under `group`, as the words that name it (the root is ())."""
    paths = [prefix]
    for name in group.list_commands(click.Context(group)):
        command = group.get_command(click.Context(group), name)
        if isinstance(command, click.Group):
            paths += _command_paths(command, (*prefix, name))
        elif command is not None:
            paths.append((*prefix, name))
    return paths


def test_every_help_shows_one_example_line_of_its_own_command():
    for words in _command_paths(cli):
        result = CliRunner().invoke(cli, [*words, "--help"])
        assert result.exit_code == 0, words
        examples = [line.strip() for line in result.output.splitlines() if line.strip().startswith("Example:")]
        assert len(examples) == 1, f"localeval {' '.join(words)} --help: {examples}"
        assert examples[0].startswith("Example: localeval " + " ".join(words)), examples[0]


def test_score_without_a_file_suggests_the_bundled_example():
    result = CliRunner().invoke(cli, ["score"])
    assert result.exit_code == 2
    assert EXAMPLE_SCORE in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr
    assert (ROOT / EXAMPLE_SCORE.split()[2]).is_file()


def test_a_run_that_needs_a_model_not_pulled_names_the_pull_command(tmp_path, monkeypatch):
    monkeypatch.setenv(store.HOME_ENV, str(tmp_path / "empty-store"))
    monkeypatch.delenv(store.MODEL_ENV, raising=False)
    output = tmp_path / "results.jsonl"
    result = CliRunner().invoke(cli, ["score", str(ROOT / "examples" / "rag_samples.jsonl"), "-m", "context_recall", "--no-verifier", "-o", str(output)])
    assert result.exit_code == 2, result.output
    assert f"localeval models pull {store.DEFAULT_MODEL}" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
