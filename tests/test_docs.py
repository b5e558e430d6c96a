"""The README's CLI reference and metric options are generated from the code
(tools/readme_reference.py); this fails when they are stale."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_reference_sections_match_the_code():
    completed = subprocess.run([sys.executable, str(ROOT / "tools" / "readme_reference.py"), "--check"], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr + "\nRun: python tools/readme_reference.py"
