"""The test tree as a toolkit: what tests share lives in ``conftest.py`` or ``tests/helpers/``, never in a test module;
and the tree mirrors the package: each test module lives in the folder of the layer it tests.

A test module that imports another one runs that module's fixtures and tests under a second name, and
hides where a helper lives; pytest finds fixtures in ``conftest.py`` without an import at all.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers import ROOT

TESTS = ROOT / "tests"
SOURCES = sorted([*TESTS.rglob("*.py"), *(ROOT / "bench").glob("*.py")])


def imported_modules(path: Path) -> list[str]:
    """Every module ``path`` imports by absolute name, at any depth (inside functions too)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def is_test_module(module: str) -> bool:
    """Whether ``module`` names a test module or a conftest (``test_x``, ``tests.test_x``, ``conftest``)."""
    parts = module.split(".")
    if parts[0] == "tests":
        parts = parts[1:]
    return bool(parts) and (parts[0].startswith("test_") or parts[0] == "conftest")


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_module_imports_a_test_module(path: Path):
    """No file under tests/ or bench/ imports a test module or a conftest; shared code comes from tests/helpers/."""
    assert [m for m in imported_modules(path) if is_test_module(m)] == []


def test_the_check_sees_an_import_of_a_test_module(tmp_path: Path):
    """An import of a test module, even one inside a function, is what the check above finds."""
    source = tmp_path / "test_example.py"
    source.write_text("import json\nfrom helpers.html import parse\n\ndef f():\n    from test_site import parse\n")
    assert [m for m in imported_modules(source) if is_test_module(m)] == ["test_site"]


# Folders of tests/ that hold no test module: what tests share, the data they read, the plug-ins they install.
SHARED = {"helpers", "fixtures", "plugins"}
# The one folder not named after a layer: checks on the repository as a whole (docs, layers, packaging, tasks).
PROJECT = "project"


def test_every_test_module_is_in_a_layer_folder():
    """Each test module sits one folder down, in a folder named after a layer of evals/ (or tests/project/)."""
    layers = {p.parent.name for p in (ROOT / "evals").glob("*/__init__.py")}
    misplaced = [
        p.relative_to(TESTS).as_posix()
        for p in TESTS.rglob("test_*.py")
        if not p.is_relative_to(TESTS / "fixtures") and (p.parent.parent != TESTS or p.parent.name not in layers | {PROJECT})
    ]
    assert misplaced == []


def test_every_layer_has_a_test_folder():
    """Each layer of evals/ has its folder of tests, and tests/ holds no folder but those, the project's and the shared."""
    layers = {p.parent.name for p in (ROOT / "evals").glob("*/__init__.py")}
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))}
    assert folders == layers | {PROJECT} | SHARED


def test_test_module_names_are_unique_across_folders():
    """No two test modules share a file name: pytest imports each by its bare name (no __init__.py in tests/)."""
    names = sorted(p.name for p in TESTS.rglob("test_*.py") if not p.is_relative_to(TESTS / "fixtures"))
    assert sorted({n for n in names if names.count(n) > 1}) == []


# -- tests reach the code through public names ------------------------------------------------------

# The test modules that may import a private (``_``-prefixed) module or name of evals, and which. Everything
# else goes through a package's public names. An entry is a private unit with no public surface that its
# test needs to reach, each said why; a new one needs a reason as good.
PRIVATE_ALLOWED: dict[str, tuple[str, ...]] = {
    # Fault injection: a second fetch while the first downloads or imports, and a full disk as the lock is
    # replaced: seams inside the fetch and the lock that no public call can reach in time.
    "tests/benchmarks/test_hostile_fetch.py": ("evals.benchmarks._fetch", "evals.benchmarks._lock"),
    # The play-through's collector: what a protocol's prompts are built from (records, evidence turns), as a run
    # collects it, compared with LoCoMo-Plus's rule without a whole answered run against a server.
    "tests/benchmarks/test_locomo_plus_evidence.py": ("evals.run.executors._play",),
    # Counts the calls the registry makes to evals.judge.retrieval: how often a point is scored shows nowhere else.
    "tests/judge/test_metrics.py": ("evals.judge.metrics._registry",),
    # The docs check reads the site's page models where docs/layout.md says they live.
    "tests/project/test_docs.py": ("evals.site._pages",),
    # A Ray worker's cache: only a Ray task sees it.
    "tests/run/test_memory.py": ("evals.run.executors._worker_cache",),
    # The heartbeat the CLI prints during long work, at a 10 ms beat no command can be made to run at.
    "tests/run/test_say_what_happened.py": ("evals.cli._base",),
    # The site's renderer internals: anchors, charts, text highlighting, page models, publishers and the build
    # loop with its own publisher list, the passage layout, the fragment cache; the site's public name is
    # build_site alone, and these are its units.
    "tests/site/test_compare_js.py": ("evals.site._pairs",),
    "tests/site/test_fragment_key.py": ("evals.site._drilldown", "evals.site._text"),
    # A test point's section rendered alone, to read what its records cost.
    "tests/site/test_site_compact_records.py": ("evals.site._drilldown", "evals.site._fragments", "evals.site._render"),
    "tests/site/test_hostile_site.py": ("evals.site._leaderboard", "evals.site._render"),  # claims rows, rendered alone
    "tests/site/test_site_benchmarks.py": ("evals.site._suspects",),
    "tests/site/test_site_computed.py": (
        "evals.site._build",
        "evals.site._computed",
        "evals.site._publisher",
        "evals.site._render",
    ),
    "tests/site/test_site_pairs.py": ("evals.site._pairs",),
    "tests/site/test_site_publishers.py": (
        "evals.site._build",
        "evals.site._output",
        "evals.site._pages",
        "evals.site._publisher",
        "evals.site._registry",
    ),
    "tests/site/test_site_qa.py": ("evals.site._drilldown", "evals.site._qa", "evals.site._render"),
    "tests/site/test_site_scale.py": (
        "evals.site._build",
        "evals.site._fragments",
        "evals.site._layout",
        "evals.site._registry",
        "evals.site._run",
    ),
    "tests/site/test_site_screens.py": ("evals.site._charts",),
    "tests/site/test_site_units.py": (
        "evals.site._charts",
        "evals.site._drilldown",
        "evals.site._history",
        "evals.site._registry",
        "evals.site._render",
        "evals.site._retrieval",
        "evals.site._text",
        "evals.site._views",
    ),
    "tests/site/test_site_widths.py": ("evals.site._retrieval", "evals.site._views"),
    # Fault injection: another process making the store between the directory check and the connect.
    "tests/store/test_hostile_paths.py": ("evals.store._store",),
    # The store's encoding of rows (conversation digests, run and corpus batches, summaries kept as references):
    # units of the store's file format below Store, each also checked through Store in the same test.
    "tests/store/test_store_streaming.py": ("evals.store._records",),
    # The store's memory limits (DuckDB's, a migration's, the write's) and its migration step, lowered or
    # counted to show what happens past them.
    "tests/store/test_store_rows.py": ("evals.store._connect", "evals.store._store", "evals.store._write"),
}


def _private(parts: list[str]) -> bool:
    return parts[0] == "evals" and any(p.startswith("_") and not p.startswith("__") for p in parts)


def private_imports(path: Path) -> set[str]:
    """The private modules (and names) of evals that ``path`` imports, at any depth: ``evals.site._charts`` for
    ``from evals.site._charts import x``, ``from evals.site import _charts`` or ``import evals.site._charts``;
    ``evals.judge.metrics._percentile`` for ``from evals.judge.metrics import _percentile``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if _private(alias.name.split("."))}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.split(".")[0] == "evals":
            if _private(node.module.split(".")):
                found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names if _private(["evals", a.name])}
    return found


def test_tests_import_no_private_module_but_those_allowed():
    """No module under tests/ imports a private module or name of evals, but those PRIVATE_ALLOWED lists for it."""
    extra = {
        name: sorted(found - set(PRIVATE_ALLOWED.get(name, ())))
        for path in sorted(TESTS.rglob("*.py"))
        if (found := private_imports(path)) and (name := path.relative_to(ROOT).as_posix())
    }
    assert {name: modules for name, modules in extra.items() if modules} == {}


def test_every_allowed_private_import_is_still_made():
    """Each entry of PRIVATE_ALLOWED is still imported by its test module: an import no longer made leaves the list."""
    stale = {
        name: sorted(set(modules) - private_imports(ROOT / name)) if (ROOT / name).exists() else ["(no such file)"]
        for name, modules in PRIVATE_ALLOWED.items()
    }
    assert {name: modules for name, modules in stale.items() if modules} == {}


def test_the_check_sees_every_form_of_a_private_import(tmp_path: Path):
    """Private modules imported in any form, even inside a function, are what the check finds; public ones are not."""
    source = tmp_path / "test_example.py"
    source.write_text(
        "import evals.store._store as m\nfrom evals.store import Store, _records\nfrom evals.cli import __main__\n"
        "from evals.benchmarks.kit import importing as _alias\n\n"
        "def f():\n    from evals.site._charts import line_chart\n    from evals.judge.metrics import _percentile\n"
    )
    assert private_imports(source) == {
        "evals.store._store",
        "evals.store._records",
        "evals.site._charts",
        "evals.judge.metrics._percentile",
    }
