"""The README's Layout lists every module of the package, each under its own folder."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "leader_election_cli"


def listed_modules() -> dict[str, set[str]]:
    """Folder ("" for the package itself) -> the module names the Layout block lists under it: a line
    indented by two spaces is a folder (`cli/`) or a module of the package itself, deeper lines belong to
    the folder above them."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Layout", 1)[1].split("```", 2)[1]
    listed: dict[str, set[str]] = {}
    folder = ""
    lines = block.splitlines()
    for line in lines[lines.index("leader_election_cli/") + 1:]:
        if line.startswith("  ") and not line.startswith("   "):
            first = line.split()[0]
            folder = first.rstrip("/") if first.endswith("/") else ""
        elif not line.startswith(" "):
            break  # benchmarks/: not the package
        listed.setdefault(folder, set()).update(re.findall(r"\b(\w+)\.py\b", line))
    return listed


def test_every_module_is_in_the_layout() -> None:
    listed = listed_modules()
    missing = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "__init__.py" and path.parent != PACKAGE:
            continue
        folder = "" if path.parent == PACKAGE else path.parent.relative_to(PACKAGE).as_posix()
        if path.stem not in listed.get(folder, set()):
            missing.append(path.relative_to(PACKAGE).as_posix())
    assert not missing, f"README Layout does not list: {sorted(missing)}"


def test_the_layout_lists_no_module_that_is_gone() -> None:
    gone = [f"{folder}/{name}.py".lstrip("/") for folder, names in listed_modules().items() for name in names
            if not (PACKAGE / folder / f"{name}.py").exists()]
    assert not gone, f"README Layout lists modules that do not exist: {gone}"
