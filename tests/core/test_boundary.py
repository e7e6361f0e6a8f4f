"""The core/app boundary: the library never imports the app or Streamlit."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).parent.parent.parent / "budgetdag_core"
APP_ONLY = ("streamlit", "ui", "pages")


def test_importing_the_core_imports_no_streamlit_and_no_ui():
    code = (
        "import sys, budgetdag_core, budgetdag_core.cli, budgetdag_core.plotting;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{APP_ONLY!r}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_no_core_module_names_the_app_in_an_import():
    offenders = []
    for path in sorted(CORE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            offenders += [
                f"{path.name}:{node.lineno} {n}"
                for n in names
                if n.split(".")[0] in APP_ONLY
            ]
    assert offenders == []
