"""A retrieval-only `python -m evals` run imports only what it uses: no OpenAI client, Jinja, DuckDB,
NLTK or numpy (each costs start-up time the original harness never paid)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT

GOLDEN = FIXTURES / "golden"
UNNEEDED = ("openai", "jinja2", "duckdb", "nltk", "numpy")

# Runs the legacy CLI in a fresh interpreter, then writes the top-level packages it imported.
PROBE = """
import json, sys
from evals.cli import main
try:
    main(sys.argv[2:], legacy=True)
except SystemExit as exc:
    assert not exc.code, exc.code
with open(sys.argv[1], "w") as out:
    json.dump(sorted({name.split(".")[0] for name in sys.modules}), out)
"""


def imported(tmp_path: Path, *args: str) -> set[str]:
    listing = tmp_path / "modules.json"
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(listing), *args], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(listing.read_text()))


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
    assert set(json.loads(listing.read_text())).isdisjoint(UNNEEDED)
