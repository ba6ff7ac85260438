"""scripts/generate_docs.py for the tests that check generated files (scripts/ is not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
REGENERATE = ".venv/bin/python scripts/generate_docs.py"


def generator() -> ModuleType:
    """The generator module, imported once by path."""
    if "generate_docs" not in sys.modules:
        spec = importlib.util.spec_from_file_location("generate_docs", ROOT / "scripts" / "generate_docs.py")
        assert spec is not None and spec.loader is not None
        sys.modules["generate_docs"] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules["generate_docs"]
