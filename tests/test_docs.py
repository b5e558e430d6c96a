"""The CLI reference (docs/cli.md) and the metric options (docs/metrics.md) are generated from the
code (tools/readme_reference.py); this fails when they are stale, or when what the README and the
docs pages both quote has drifted apart."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_generated_reference_sections_match_the_code():
    completed = subprocess.run([sys.executable, str(ROOT / "tools" / "readme_reference.py"), "--check"], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr + "\nRun: python tools/readme_reference.py"


def test_the_generated_sections_live_in_the_docs_pages_not_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page, name in (("cli.md", "cli-reference"), ("metrics.md", "metric-options")):
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        assert text.count(f"<!-- {name}:start -->") == 1 and text.count(f"<!-- {name}:end -->") == 1, page
        assert f"<!-- {name}:" not in readme


def test_the_config_example_is_the_same_in_the_readme_and_docs_configuration():
    """tests/test_judge_spec.py checks the README's example is a valid config; docs/configuration.md quotes it."""
    pattern = re.compile(r"```toml\n(# localeval.toml.*?)```", re.S)
    readme = pattern.search((ROOT / "README.md").read_text(encoding="utf-8"))
    page = pattern.search((ROOT / "docs" / "configuration.md").read_text(encoding="utf-8"))
    assert readme is not None and page is not None
    assert readme.group(1) == page.group(1)


def test_the_readme_names_every_exit_code_of_docs_cli():
    table = re.search(r"## Exit codes\n\n(.*?)(?:\n\n|\Z)", (ROOT / "docs" / "cli.md").read_text(encoding="utf-8"), re.S)
    assert table is not None
    codes = re.findall(r"^\| (\d+) \|", table.group(1), re.M)
    assert codes == ["0", "1", "2", "3", "130"]
    line = re.search(r"^Exit codes: (.*?)\n\n", (ROOT / "README.md").read_text(encoding="utf-8"), re.M | re.S)
    assert line is not None
    assert re.findall(r"(?:^|; )(\d+)\s", line.group(1)) == codes
