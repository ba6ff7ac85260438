"""The README's Python API example runs as it is and prints what the README shows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def test_the_python_api_example_prints_what_the_readme_shows(tmp_path: Path) -> None:
    section = README.split("## Python API", 1)[1]
    code, shown = re.findall(r"```(?:python|text)\n(.*?)```", section, re.S)[:2]
    script = tmp_path / "example.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == shown
