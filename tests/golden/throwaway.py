"""Run a script inside a throwaway virtual environment with a library installed: how the golden
scripts get files written by the real libraries without touching the project's own venv."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path


def run_with(python: str, requirements: list[str], script: str, *args: str) -> None:
    """Create a venv with `python`, pip-install `requirements`, run `script` (source) with `args`.
    PYTHONHASHSEED is pinned so set iteration order, and so the output, is reproducible."""
    with tempfile.TemporaryDirectory(prefix="golden-") as tmp:
        work = Path(tmp)
        venv = work / "venv"
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        py = venv / "bin" / "python"
        subprocess.run([str(py), "-m", "pip", "install", "-q", *requirements], check=True)
        inner = work / "inner.py"
        inner.write_text(script, encoding="utf-8")
        subprocess.run([str(py), str(inner), *args], check=True, cwd=work,
                       env={**os.environ, "PYTHONHASHSEED": "0"})
