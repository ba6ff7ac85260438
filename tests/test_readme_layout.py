"""The README's Layout lists every module of the package, each under its own folder."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "leader_election_cli"


def listed_modules() -> dict[str, set[str]]:
    """Folder ("" for the package itself) -> the module names the Layout block lists under it: a line whose
    first word ends in `/` is a folder inside the nearest folder less indented above it (two spaces a level);
    other lines belong to the nearest folder less indented above them."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Layout", 1)[1].split("```", 2)[1]
    listed: dict[str, set[str]] = {}
    folders: list[tuple[int, str]] = [(0, "")]  # (indent, folder), the innermost last
    lines = block.splitlines()
    for line in lines[lines.index("leader_election_cli/") + 1:]:
        if not line.startswith(" "):
            break  # benchmarks/: not the package
        indent = len(line) - len(line.lstrip())
        first = line.split()[0] if line.strip() else ""
        if first.endswith("/") or indent < folders[-1][0] + 2:
            while len(folders) > 1 and folders[-1][0] >= indent:
                folders.pop()
        folder = folders[-1][1]
        if first.endswith("/"):
            folder = f"{folder}/{first.rstrip('/')}".lstrip("/")
            folders.append((indent, folder))
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
