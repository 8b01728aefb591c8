"""A retrieval-only `python -m evals` run imports only what it uses: no OpenAI client, Jinja, DuckDB,
NLTK or numpy (each costs start-up time the original harness never paid), no benchmark unit, and no more
modules in all than :data:`MODULE_BUDGET`."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT

GOLDEN = FIXTURES / "golden"
UNNEEDED = ("openai", "jinja2", "duckdb", "nltk", "numpy")
# Every module a no_memory run on the starter corpus loads (321 when set, 325 before: tomllib is loaded only to read
# prices; the interpreter's own included), with room for a few more: start-up is most of that run, and each module
# adds to it. Raise it only knowingly.
MODULE_BUDGET = 324

# Runs the legacy CLI in a fresh interpreter, then writes the top-level packages it imported.
PROBE = """
import json, sys
from evals.cli import main
try:
    main(sys.argv[2:], legacy=True)
except SystemExit as exc:
    assert not exc.code, exc.code
with open(sys.argv[1], "w") as out:
    json.dump(sorted(sys.modules), out)
"""


def modules(tmp_path: Path, *args: str) -> set[str]:
    """Every module the legacy CLI run with ``args`` has loaded when it ends."""
    listing = tmp_path / "modules.json"
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(listing), *args], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(listing.read_text()))


def imported(tmp_path: Path, *args: str) -> set[str]:
    """The top-level packages the legacy CLI run with ``args`` has loaded."""
    return {name.split(".")[0] for name in modules(tmp_path, *args)}


@pytest.mark.parametrize("runner", ["no_memory", "full_history", "summary_buffer", "mneme"])
def test_a_retrieval_run_imports_no_openai(runner: str, tmp_path: Path):
    """`python -m evals --runner R` (no answers, hash embedder) never imports openai."""
    modules = imported(tmp_path, "--runner", runner, "--corpus", str(GOLDEN), "--output", str(tmp_path / "o.json"))
    assert "openai" not in modules


@pytest.mark.parametrize("runner", ["no_memory", "full_history", "summary_buffer", "mneme"])
def test_a_retrieval_run_imports_nothing_it_does_not_use(runner: str, tmp_path: Path):
    """`python -m evals --runner R` imports none of openai, jinja2, duckdb, nltk or numpy."""
    modules = imported(tmp_path, "--runner", runner, "--corpus", str(GOLDEN), "--output", str(tmp_path / "o.json"))
    assert modules.isdisjoint(UNNEEDED), sorted(modules & set(UNNEEDED))


def test_the_starter_corpus_with_evidence_turns_needs_no_numpy(tmp_path: Path):
    """The starter corpus (evidence turns: retrieved records are mapped to turns) is played without numpy."""
    corpus = ROOT / "corpus"
    modules = imported(tmp_path, "--runner", "full_history", "--corpus", str(corpus), "--output", str(tmp_path / "o.json"))
    assert "numpy" not in modules


def test_help_imports_nothing_it_does_not_use(tmp_path: Path):
    """`python -m evals --help` imports none of openai, jinja2, duckdb, nltk or numpy."""
    listing = tmp_path / "modules.json"
    probe = PROBE.replace("assert not exc.code, exc.code", "pass")
    proc = subprocess.run([sys.executable, "-c", probe, str(listing), "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert {name.split(".")[0] for name in json.loads(listing.read_text())}.isdisjoint(UNNEEDED)


def test_a_no_memory_run_stays_within_its_module_budget(tmp_path: Path):
    """`python -m evals --runner no_memory` on the starter corpus loads at most MODULE_BUDGET modules."""
    loaded = modules(tmp_path, "--runner", "no_memory", "--corpus", str(ROOT / "corpus"), "--output", str(tmp_path / "o.json"))
    assert len(loaded) <= MODULE_BUDGET, len(loaded)


@pytest.mark.parametrize("runner", ["no_memory", "mneme"])
def test_a_plain_run_loads_no_benchmark_unit(runner: str, tmp_path: Path):
    """A run under the harness's own protocol loads no benchmark unit (BEAM's, LoCoMo's...): it needs none."""
    loaded = modules(tmp_path, "--runner", runner, "--corpus", str(GOLDEN), "--output", str(tmp_path / "o.json"))
    units = {name for name in loaded if name.startswith("evals.benchmarks.") and name != "evals.benchmarks._registry"}
    assert units == set()
