"""The benchmark suite keeps up with the package: every bench module and tool imports, every name they
import from ``evals`` exists, every bench module declares its benchmarks, and the suite's runner keeps and
compares figures per commit.

The benchmarks are run by hand (``python bench/suite.py run``), not by the tests, so a moved name would
otherwise go unnoticed until someone wants a figure.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

BENCH = ROOT / "bench"
TOOLS = ROOT / "tools"
SCRIPTS = sorted([*BENCH.glob("*.py"), *TOOLS.glob("*.py")])


def evals_imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) of every ``from evals… import name`` in ``path``, wherever it stands."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "evals"
        for alias in node.names
    ]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_name_a_bench_script_imports_exists(script: Path):
    """Each ``from evals.x import y`` in a bench script names a module and an attribute (or submodule) that exist."""
    missing = []
    for module, name in evals_imports(script):
        found = importlib.import_module(module)
        if not hasattr(found, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                missing.append(f"{module}.{name}")
    assert missing == []


# -- bench/_common.py: the one child-process runner every bench script measures with ----------------


@pytest.fixture(scope="module")
def bench_path():
    """bench/ on sys.path, as the scripts and the suite import each other."""
    sys.path.insert(0, str(BENCH))
    try:
        yield
    finally:
        sys.path.remove(str(BENCH))


@pytest.fixture(scope="module")
def common(bench_path):
    """bench/_common.py, imported as the scripts import it."""
    return importlib.import_module("_common")


@pytest.fixture(scope="module")
def suite(bench_path):
    """bench/suite.py, the suite's runner."""
    return importlib.import_module("suite")


# -- the suite: discovery, results per commit, compare -----------------------------------------------


@pytest.mark.parametrize("module", sorted(p.stem for p in BENCH.glob("bench_*.py")))
def test_every_bench_module_imports_and_declares_a_benchmark(suite, module: str):
    """Each bench/bench_*.py imports and declares at least one ``@benchmark`` the suite finds."""
    assert [b.name for b in suite.discover(rf"^{module}\.")] != []


def test_the_suite_finds_benchmarks_by_pattern_with_their_marks(suite):
    """Discovery by pattern gives each benchmark's full name, what it needs, its targets and whether it is slow."""
    (found,) = suite.discover(r"bench_site_build\.")
    assert (found.name, found.needs, found.slow) == ("bench_site_build.ten_locomo_runs", ("locomo",), True)
    targets = {t.figure: str(t) for t in found.targets}
    assert targets == {"full_over_old": "≤ 0.7", "noop_over_old": "≤ 0.5", "full_over_floor": "≤ 3"}


def test_a_target_is_met_on_its_side_of_the_bound(bench_path):
    """A ``<=`` target is met at or below its bound, a ``>=`` target at or above it; any other operator is refused."""
    from _suite import benchmark

    @benchmark(targets={"ratio": ">= 3", "seconds": "<= 1.5"})
    def measured(ctx):
        return {}

    above, below = measured.__benchmark__.targets
    assert (above.met(3.0), above.met(2.9), below.met(1.5), below.met(1.6)) == (True, False, True, False)
    with pytest.raises(ValueError, match="'<=' or '>='"):
        benchmark(targets={"ratio": "> 3"})


def test_a_benchmark_whose_data_is_absent_is_skipped_naming_what_to_set(bench_path, monkeypatch, tmp_path):
    """``Context.data`` of a corpus not under $EVALS_BENCH_DATA raises Skip naming the variable and the folder."""
    from _suite import Context, Skip

    monkeypatch.setenv("EVALS_BENCH_DATA", str(tmp_path))
    with pytest.raises(Skip, match=r"EVALS_BENCH_DATA/locomo"):
        Context(work=tmp_path).data("locomo")
    (tmp_path / "locomo").mkdir()
    assert Context(work=tmp_path).data("locomo") == tmp_path / "locomo"


def test_compare_sets_each_figure_beside_the_base_s_with_the_ratio(suite, tmp_path, capsys):
    """``compare BASE HEAD`` reads both commits' results files and prints each figure of HEAD, BASE's and the ratio."""
    for commit, value in (("aaaa", 2.0), ("bbbb", 3.0)):
        measured = {"bench_x.y": {"figures": {"wall_s": value}, "load": "1.0"}}
        document = {"commit": commit, "date": "2026-12-07", "benchmarks": measured}
        (tmp_path / f"{commit}.json").write_text(json.dumps(document), encoding="utf-8")
    assert suite.main(["compare", "aaaa", "bbbb", "--results", str(tmp_path)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("bench_x.y"))
    assert row.split()[:5] == ["bench_x.y", "wall_s", "2", "3", "1.500"]


@pytest.mark.slow
def test_a_run_keeps_its_figures_under_the_commit_and_adds_to_them(tmp_path):
    """``run -b NAME`` writes the benchmark's figures into <results>/<commit>.json, keeping what the file held."""
    results = tmp_path / "results"
    command = [sys.executable, str(BENCH / "suite.py"), "run", "-b", "bench_store.size", "--quick", "--results", str(results)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (kept,) = results.glob("*.json")
    figures = json.loads(kept.read_text(encoding="utf-8"))["benchmarks"]["bench_store.size"]["figures"]
    assert 0 < figures["store_mb"] < 20


def test_run_child_keeps_stdout_and_stderr_apart(common):
    """Without ``merged`` the child's stdout and stderr come back separately, with its exit code."""
    code = "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"
    child = common.run_child([sys.executable, "-c", code], timeout=120)
    assert (child.returncode, child.stdout, child.stderr, child.timed_out) == (3, "out\n", "err\n", False)


def test_run_child_merges_output_and_gives_its_last_line(common):
    """With ``merged`` stderr joins stdout, and ``last_line`` is the last line the child printed."""
    code = "import sys; print('first', flush=True); print('last', file=sys.stderr)"
    child = common.run_child([sys.executable, "-c", code], timeout=120, merged=True)
    assert (child.stdout, child.stderr, child.last_line) == ("first\nlast\n", "", "last")


def test_run_child_reports_the_child_s_own_peak_memory(common):
    """The peak is the child's own (os.wait4): a child holding 200 MB reports at least that."""
    child = common.run_child([sys.executable, "-c", "x = b'x' * (200 * 1024 * 1024)"], timeout=120)
    assert child.returncode == 0 and child.peak_mib >= 200


def test_run_checked_raises_the_given_error_naming_a_failed_command(common):
    """A child that exits non-zero raises the error asked for, with its exit code and the end of its stderr."""
    command = [sys.executable, "-c", "import sys; print('gone wrong', file=sys.stderr); sys.exit(4)"]
    with pytest.raises(SystemExit) as raised:
        common.run_checked(command, error=SystemExit, timeout=120)
    assert str(raised.value) == f"failed (exit 4): {' '.join(command)}\ngone wrong\n"
