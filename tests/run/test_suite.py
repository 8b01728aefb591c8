"""`evals run-suite`: a suite file's benchmarks x strategies x options, run or reused through the store.

The shipped default suite (evals.toml) must plan exactly the runs `python3 tasks.py run` made before
it (`evals run --runner NAME` for each available strategy), and a run made either way is reused by
the other. A two-benchmark suite fetches both (stand-ins from a local HTTP server) and runs each.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import FIXTURES, ROOT
from helpers.benchmark_server import BenchmarkServer

from evals.benchmarks import BENCHMARKS
from evals.cli import cli
from evals.run.config import RunConfig
from evals.run.suite import plan_runs, read_suite
from evals.store import Store

CHEAP = ("no_memory", "full_history", "bm25")


def invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, list(args), env=env or {}, catch_exceptions=False)


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        check=True,
        capture_output=True,
    )


def test_the_default_suite_plans_the_runs_tasks_py_made(monkeypatch):
    """evals.toml: the starter corpus, every available strategy in `evals strategies --names --available`
    order, every setting at `evals run`'s default: the same RunConfig as `evals run --runner NAME`."""
    monkeypatch.chdir(ROOT)
    names = invoke("strategies", "--names", "--available").output.split()
    planned = plan_runs(read_suite(Path("evals.toml")), {})
    with_minilm = not read_suite(Path("evals.toml")).matrices[-1].missing()
    minilm = [RunConfig(strategy="mneme", options={"embedder": "minilm"})] if with_minilm else []
    assert [run.config for run in planned] == [RunConfig(strategy=name, options={}) for name in names] + minilm
    assert {run.config.corpus for run in planned} == {Path("corpus")}


def test_a_matrix_runs_only_where_its_extras_are_installed(tmp_path, monkeypatch):
    """`requires` skips a matrix whose extra is missing here (and names an unknown extra as an error)."""
    import evals.run.suite as suite

    (tmp_path / "s.toml").write_text(
        '[[matrix]]\ncorpora = ["c"]\nstrategies = ["mneme"]\nrequires = ["minilm"]\n'
        '[matrix.options.mneme]\nembedder = "minilm"\n'
    )
    monkeypatch.setitem(suite.EXTRAS, "minilm", ("no_such_module_here",))
    assert plan_runs(read_suite(tmp_path / "s.toml"), {}) == []
    monkeypatch.setitem(suite.EXTRAS, "minilm", ("json",))
    assert [r.config.options["embedder"] for r in plan_runs(read_suite(tmp_path / "s.toml"), {})] == ["minilm"]
    (tmp_path / "bad.toml").write_text('[[matrix]]\ncorpora = ["c"]\nrequires = ["gpu"]\n')
    with pytest.raises(suite.SuiteError, match="requires\\[0\\]: no extra called 'gpu'"):
        read_suite(tmp_path / "bad.toml")


def test_tasks_py_runs_the_suite_then_builds_the_site():
    text = (ROOT / "tasks.py").read_text()
    assert 'sh(BIN / "evals", "run-suite")' in text and 'sh(BIN / "evals", "build-site")' in text
    workflow = (ROOT / ".github" / "workflows" / "pages.yml").read_text()
    assert 'evals run-suite --suite "$SUITE"' in workflow


@pytest.fixture
def repo(clean_repo: Path, monkeypatch) -> Path:
    """A clean commit holding a corpus and a suite of three cheap strategies over it; the working directory."""
    shutil.copytree(FIXTURES / "corpus_small", clean_repo / "corpus")
    (clean_repo / "evals.toml").write_text(f'[[matrix]]\ncorpora = ["corpus"]\nstrategies = {json.dumps(list(CHEAP))}\n')
    git(clean_repo, "add", "-A")
    git(clean_repo, "commit", "-q", "-m", "corpus and suite")
    monkeypatch.chdir(clean_repo)
    return clean_repo


def run_ids(store: Path) -> list[str]:
    with Store.open(store, read_only=True) as opened:
        return sorted(s.run_id for s in opened.runs())


def test_run_suite_reuses_what_evals_run_made(repo, tmp_path):
    store = tmp_path / "a.duckdb"
    for name in CHEAP:
        assert invoke("run", "--runner", name, "--store", str(store)).exit_code == 0
    made = run_ids(store)
    result = invoke("run-suite", "--store", str(store))
    assert result.exit_code == 0, result.output
    assert result.output.count("cached: run ") == 3 and "3 runs, 0 made now, 3 reused" in result.output
    assert "[1/3] no_memory on corpus" in result.output
    assert run_ids(store) == made


def test_evals_run_reuses_what_run_suite_made(repo, tmp_path):
    store = tmp_path / "b.duckdb"
    first = invoke("run-suite", "--store", str(store))
    assert first.exit_code == 0 and "3 runs, 3 made now, 0 reused" in first.output
    made = run_ids(store)
    for name in CHEAP:
        assert invoke("run", "--runner", name, "--store", str(store)).output.startswith("cached: run ")
    again = invoke("run-suite", "--store", str(store))
    assert "3 runs, 0 made now, 3 reused" in again.output
    assert run_ids(store) == made


def test_a_two_benchmark_suite_fetches_both_and_runs_each(repo, tmp_path, monkeypatch):
    """Stand-ins for LoCoMo and LongMemEval oracle from a local server: both fetched and imported,
    each strategy run on each, the site built with both corpora; a second run-suite downloads
    nothing and reuses every run."""
    locomo_bytes = (FIXTURES / "importers" / "locomo_small.json").read_bytes()
    lme_bytes = (FIXTURES / "importers" / "longmemeval_small.json").read_bytes()
    stand_in = b"# stand-in\n"
    digest = hashlib.sha256(stand_in).hexdigest()
    with BenchmarkServer() as server:
        for name in ("locomo", "longmemeval_oracle"):
            entry = BENCHMARKS[name]
            sources = tuple(replace(s, sha256=digest) for s in entry.sources)
            data = (
                replace(entry.data, sha256=hashlib.sha256(locomo_bytes).hexdigest(), size=len(locomo_bytes))
                if name == "locomo"
                else entry.data
            )
            monkeypatch.setitem(BENCHMARKS, name, replace(entry, data=data, sources=sources))
            server.files.update({s.relative: stand_in for s in sources})
        server.files.update({"locomo10.json": locomo_bytes, "longmemeval_oracle.json": lme_bytes})
        suite = repo / "benchmarks.toml"
        suite.write_text(
            '[[matrix]]\nbenchmarks = ["locomo", "longmemeval_oracle"]\nstrategies = ["bm25", "full_history"]\nk = 3\n'
        )
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "benchmarks suite")
        store, downloads, lock = tmp_path / "s.duckdb", tmp_path / "downloads", tmp_path / "benchmarks.lock"
        env = {"EVALS_MIRROR": server.mirror(), "EVALS_DOWNLOADS": str(downloads), "EVALS_BENCHMARKS_LOCK": str(lock)}
        result = invoke("run-suite", "--suite", str(suite), "--store", str(store), env=env)
        assert result.exit_code == 0, result.output
        assert "4 runs, 4 made now, 0 reused" in result.output
        assert "[3/4] bm25 on longmemeval_oracle" in result.output
        with Store.open(store, read_only=True) as opened:
            runs = opened.runs()
        assert sorted((s.strategy, Path(s.corpus_dir).name, s.k) for s in runs) == sorted(
            (strategy, corpus, 3) for strategy in ("bm25", "full_history") for corpus in ("locomo", "longmemeval_oracle")
        )
        assert json.loads(lock.read_text())["files"][BENCHMARKS["longmemeval_oracle"].data.url]["size"] == len(lme_bytes)

        server.requests.clear()
        again = invoke("run-suite", "--suite", str(suite), "--store", str(store), env=env)
        assert "4 runs, 0 made now, 4 reused" in again.output and server.requests == []

    site = tmp_path / "site"
    built = invoke("build-site", "--store", str(store), "--out", str(site))
    assert built.exit_code == 0, built.output
    index = (site / "index.html").read_text()
    assert "locomo" in index and "longmemeval_oracle" in index


def test_options_are_axes_and_settings_apply_to_every_run(tmp_path):
    suite = tmp_path / "s.toml"
    suite.write_text(
        'description = "x"\n[[matrix]]\ncorpora = ["c"]\nstrategies = ["mneme", "bm25"]\nk = 10\ncutoffs = [1, 10]\n'
        '[matrix.options.mneme]\nembedder = ["hash", "minilm"]\nbackend = "memory"\n'
    )
    planned = plan_runs(read_suite(suite), {})
    assert [(r.config.strategy, r.config.options) for r in planned] == [
        ("mneme", {"embedder": "hash", "backend": "memory"}),
        ("mneme", {"embedder": "minilm", "backend": "memory"}),
        ("bm25", {}),
    ]
    assert {(r.config.k, r.config.cutoffs, r.config.corpus) for r in planned} == {(10, (1, 10), tmp_path / "c")}


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('[[matrix]]\ncorpora = ["c"]\nstrategy = "bm25"\n', "matrix[0].strategy: unknown key"),
        ('[[matrix]]\ncorpora = "c"\n', "matrix[0].corpora: expected an array"),
        ('[[matrix]]\nbenchmarks = ["locomoo"]\n', "matrix[0].benchmarks[0]: no benchmark called 'locomoo'"),
        ('[[matrix]]\nbenchmarks = ["locomo", "convomem"]\n', "matrix[0].benchmarks[1]: convomem is not importable yet"),
        ('[[matrix]]\ncorpora = ["c"]\nk = 0\n', "matrix[0].k: "),
        (
            '[[matrix]]\ncorpora = ["c"]\nstrategies = ["bm25"]\n[matrix.options.mneme]\nembedder = "hash"\n',
            "matrix[0].options.mneme: options of a strategy",
        ),
        ("description = 1\n[[matrix]]\ncorpora = ['c']\n", "description: expected a string"),
        ("[[matrix]\n", "not valid TOML"),
        ("description = 'no runs'\n", "matrix: expected at least one"),
    ],
)
def test_a_bad_suite_file_is_one_line_naming_the_file_and_key(tmp_path, text, where):
    suite = tmp_path / "bad.toml"
    suite.write_text(text)
    result = CliRunner().invoke(cli, ["run-suite", "--suite", str(suite), "--store", str(tmp_path / "s.duckdb")])
    assert result.exit_code == 1, result.output
    assert result.output.startswith(f"Error: {suite}: ") and where in result.output and result.output.count("\n") == 1
    assert not (tmp_path / "s.duckdb").exists()


def test_a_missing_suite_file_is_named(tmp_path):
    result = CliRunner().invoke(cli, ["run-suite", "--suite", str(tmp_path / "none.toml")])
    assert result.exit_code == 1 and "none.toml: no such suite file" in result.output


def test_the_publishing_suite_reads(monkeypatch):
    """suites/benchmarks.toml: LoCoMo and LongMemEval_s (cleaned), every available strategy, the lock at the root."""
    suite = read_suite(ROOT / "suites" / "benchmarks.toml")
    assert suite.benchmarks == ["locomo", "longmemeval_s_cleaned"]
    assert suite.lock.resolve() == ROOT / "benchmarks.lock"


def test_a_matrix_naming_mneme_s_embedder_as_a_setting_is_told_where_it_goes(tmp_path):
    """`embedder = "minilm"` beside a matrix's settings (where it once went) is refused, naming [matrix.options.mneme]."""
    from evals.run.suite import SuiteError

    (tmp_path / "s.toml").write_text('[[matrix]]\ncorpora = ["c"]\nstrategies = ["mneme"]\nembedder = "minilm"\n')
    with pytest.raises(SuiteError, match=r"embedder is Mneme's option now: \[matrix.options.mneme\] embedder = 'minilm'"):
        read_suite(tmp_path / "s.toml")


def test_a_failed_run_is_kept_and_the_suite_goes_on(tmp_path, monkeypatch):
    """A run that fails is stored as a failed run and the suite makes the rest; it then exits 1 with a summary naming
    each failure (its run and why), after the count of the runs made."""
    from helpers import PLUGINS

    monkeypatch.syspath_prepend(str(PLUGINS))
    shutil.copytree(FIXTURES / "corpus_small", tmp_path / "c")
    suite = tmp_path / "s.toml"
    suite.write_text('[[matrix]]\ncorpora = ["c"]\nstrategies = ["declaring_strategy:FAILING", "bm25"]\n')
    store = tmp_path / "s.duckdb"
    result = CliRunner().invoke(cli, ["run-suite", "--suite", str(suite), "--store", str(store)])
    assert result.exit_code == 1, result.output
    with Store.open(store, read_only=True) as opened:
        (failed,) = opened.failed_runs()
        assert [s.strategy for s in opened.runs()] == ["bm25"]
    assert "[2/2] bm25 on " in result.output and "2 runs, 1 made now, 0 reused, 1 failed" in result.output
    assert f"failed: declaring_strategy:FAILING on {tmp_path / 'c'} (failed run {failed.run_id}): " in result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("Error: 1 of 2 runs failed: declaring_strategy:FAILING on ") and failed.run_id in last, last
    assert "retrieve(question, k=5) raised RuntimeError" in last and "kept in the store" not in last
