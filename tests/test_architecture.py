"""The layers of docs/ARCHITECTURE.md hold: import-linter checks the contracts in pyproject.toml."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(project: Path) -> subprocess.CompletedProcess[str]:
    """import-linter over the package found in `project`, with `project`'s pyproject.toml."""
    return subprocess.run([str(LINT_IMPORTS), "--config", str(project / "pyproject.toml"), "--no-cache"],
                          cwd=project, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(project)})


def test_every_layer_contract_is_kept() -> None:
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.mark.parametrize(("module", "line", "contract"), [
    ("render/output.py", "from leader_election_cli.operations import elect  # noqa: F401",
     "Renderers see only reports"),
    ("sandbox/scenarios.py", "from leader_election_cli.cluster import admin  # noqa: F401",
     "The sandbox imports no client layer"),
    ("cli/toolkit.py", "from leader_election_cli.operations import execution  # noqa: F401",
     "Click commands call operations"),
    ("planning/batches.py", "from leader_election_cli.reports import election  # noqa: F401",
     "Data flows one way"),
])
def test_a_forbidden_import_breaks_its_contract(tmp_path: Path, module: str, line: str, contract: str) -> None:
    """The check can fail: one planted import breaks the contract it is about."""
    shutil.copytree(ROOT / "leader_election_cli", tmp_path / "leader_election_cli",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    planted = tmp_path / "leader_election_cli" / module
    planted.write_text(planted.read_text() + "\n" + line + "\n")
    done = lint_imports(tmp_path)
    assert done.returncode != 0
    broken = done.stdout.split("Broken contracts")[1]
    assert contract in " ".join(broken.split())


def test_no_two_modules_import_each_other() -> None:
    """Every import counts (inside functions and under TYPE_CHECKING too): two modules that need each
    other are one module split in two, or a third one missing."""
    import grimp

    graph = grimp.build_graph("leader_election_cli")
    pairs = sorted({tuple(sorted((importer, imported))) for importer in graph.modules
                    for imported in graph.find_modules_directly_imported_by(importer)
                    if importer in graph.find_modules_directly_imported_by(imported)})
    assert pairs == []


def test_the_commands_ask_the_output_rule_instead_of_comparing_modes() -> None:
    """`render.modes` says what each output mode means; no click command compares the mode's word itself."""
    literal = re.compile(r"""\boutput\s*[!=]=\s*(["']json["']|JSON\b)""")
    found = [f"{path.name}:{number}" for path in sorted((ROOT / "leader_election_cli" / "cli").glob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), 1) if literal.search(line)]
    assert found == []
