"""The package's public surface is what ``evals/__init__.py`` promises: each name of ``__all__`` imports from
``evals``, is the object its own layer defines, is named in the docstring, and importing ``evals`` alone loads
none of them.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys

import evals


def test_every_promised_name_imports_from_evals():
    """``from evals import NAME`` works for every name of ``evals.__all__``."""
    namespace: dict[str, object] = {}
    exec(f"from evals import {', '.join(evals.__all__)}", namespace)  # noqa: S102 - the import statement is the test
    assert [name for name in evals.__all__ if name not in namespace] == []


def test_each_public_name_is_its_layers_own_object():
    """Each name but the version is the very object of the module the package says is its home."""
    homes = evals._HOMES
    assert sorted(homes) == sorted(set(evals.__all__) - {"__version__"})
    assert [n for n, module in homes.items() if getattr(evals, n) is not getattr(importlib.import_module(module), n)] == []


def test_the_docstring_names_exactly_the_public_names():
    """The package docstring's list names each name of ``__all__``, and nothing else."""
    listed = re.findall(r"^- ``(\w+)", evals.__doc__ or "", re.MULTILINE)
    assert sorted(listed) == sorted(evals.__all__)


def test_importing_evals_loads_no_layer():
    """``import evals`` loads no module of the package: the public names are imported on first use."""
    code = "import sys, evals; print(sorted(m for m in sys.modules if m.startswith('evals.')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"
