"""Every module of the package imports on its own, first: a tool or script that uses one module
(`import viewer.export`) must not depend on another having been imported before it to break an
import cycle (viewer.tools imports the formats package, whose adapters use viewer.tools)."""

import pkgutil
import subprocess
import sys

import viewer

SCRIPT = """
import importlib, sys
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "viewer" or m.startswith("viewer.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as e:
        failed.append(f"{name}: {type(e).__name__}: {e}")
print("\\n".join(failed))
"""


def test_each_module_imports_first_in_a_new_interpreter():
    names = sorted(m.name for m in pkgutil.walk_packages(viewer.__path__, "viewer.")
                   if not m.name.endswith(".__main__"))  # (that one runs the command line)
    assert "viewer.export" in names and "viewer.formats.gemini_cli" in names
    out = subprocess.run([sys.executable, "-c", SCRIPT, *names], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""
