"""Hostile plug-in strategies: option values the store cannot keep, retrieve returning a
generator, faults on the local executor, names from the registry, edited plug-ins, over-long retrievals.

Every refused action leaves the store byte for byte as it was, and no input gives a traceback: the CLI
prints ``Error: …`` naming the file and field and exits 1 (2 for a bad option, as click does).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT
from helpers.cli import CORPUS_SMALL, evals
from helpers.errors import one_line_error
from helpers.hostile import answers_run
from helpers.plugins import dist_info
from helpers.stores import kept_as_failed, unchanged

from evals.store import Store

# -- plug-ins: values, records per retrieve, faults, names, edits, and how a module is found --


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """Writes a plug-in module and returns the name it imports as (fresh for each call); forgets it afterwards."""
    import importlib
    import sys
    import textwrap
    import uuid

    folder = tmp_path / "plugins"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    written: list[str] = []

    def write(source: str, name: str | None = None) -> str:
        name = name or f"plugin_{uuid.uuid4().hex[:12]}"
        header = "from evals.strategies import FullHistory, Record, Recency, StrategySpec\n"
        (folder / f"{name}.py").write_text(header + textwrap.dedent(source), encoding="utf-8")
        importlib.invalidate_caches()
        written.append(name)
        return name

    yield write
    for name in written:
        sys.modules.pop(name, None)


def run_ids(store: Path) -> list[str]:
    """The stored runs' ids, newest first."""
    result = evals("runs", "--store", store, "--format", "json")
    assert result.exit_code == 0, result.output
    return [row["run_id"] for row in json.loads(result.output)]


def stored_points(store: Path, run_id: str) -> list:
    """The test points of a stored run, as the store gives them back."""

    with Store.open(store, read_only=True) as opened:
        return [p for c in opened.get_run(run_id).run.conversations for p in c.test_points]


# -- option values the store cannot read back ----------------------------------


@pytest.mark.parametrize(("runner", "option"), [("random_k", "seed"), ("summary_buffer", "max_recent_turns")])
def test_huge_built_in_option_is_refused_and_the_store_stays_readable(tmp_path, store, runner, option):
    """A 30-digit built-in option is refused in one line; the store is unchanged and export and build-site still work."""
    with unchanged(store):
        line = one_line_error(
            evals("run", "--runner", runner, "--corpus", CORPUS_SMALL, "--store", store, "--option", f"{option}={'1' * 30}")
        )
    assert line.startswith(f"Error: --option {option}=") and "less than or equal to" in line
    assert evals("export", run_ids(store)[0], "--store", store, "--output", tmp_path / "e.json").exit_code == 0
    assert evals("build-site", "--store", store, "--out", tmp_path / "site").exit_code == 0


@pytest.mark.parametrize(
    ("option", "says"),
    [
        (f"n={'9' * 30}", "beyond what the store keeps"),
        (f"n=-{'9' * 30}", "beyond what the store keeps"),
        ("x=nan", "not a finite number"),
        ("x=inf", "not a finite number"),
        ("s=\udcff", "lone surrogate"),
        (f"s={'a' * 5000}", "longer than the 4,096"),
    ],
)
def test_plugin_option_the_store_cannot_keep_is_refused(store, plugin, option, says):
    """Any plug-in option beyond 64-bit ints, finite floats, valid and bounded text is refused before the run."""
    ref = plugin("def make(n: int = 0, x: float = 0.0, s: str = ''):\n    return Recency()\n") + ":make"
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store, "--option", option))
    assert line.startswith(f"Error: --option {option[0]}: ") and says in line


def test_plugin_configuration_the_store_cannot_keep_is_refused(store, plugin):
    """A StrategySpec whose describe() gives a 70-bit integer is refused naming the field; the store is unchanged."""
    ref = plugin("""
        SPEC = StrategySpec(
            name="plugin_big", build=lambda o, c: Recency(), describe=lambda o, c: {"name": "plugin_big", "limit": 2**70}
        )
    """) + ":SPEC"
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store))
    assert line.startswith("Error: strategy plugin_big: its configuration cannot be stored: limit: ")


# -- retrieve returning a generator or a dict -----------------------------------


LAZY_RETRIEVALS = {
    "generator": "(t['content'] for t in self._turns[-k:])",
    "dict": "{t['content']: 1.0 for t in self._turns[-k:]}",
}


def lazy_plugin(kind: str) -> str:
    """A plug-in module whose strategy's retrieve() gives a ``kind`` of LAZY_RETRIEVALS, made by ``make()``."""
    return f"""
        class Lazy(Recency):
            def retrieve(self, query, k=5):
                return {LAZY_RETRIEVALS[kind]}

        def make():
            return Lazy()
    """


@pytest.mark.parametrize("kind", LAZY_RETRIEVALS)
def test_retrieve_returning_a_generator_or_dict_is_refused(store, plugin, kind):
    """A retrieve() giving a generator (its first record lost) or a dict (its keys) stops the run in one line; the
    run is kept as a failed run, never a figure."""
    ref = plugin(lazy_plugin(kind)) + ":make"
    with kept_as_failed(store):
        line = one_line_error(evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store))
    assert line.startswith(f"Error: strategy {ref}: retrieve(question, k=5) returned a {kind}, not a list")


@pytest.mark.parametrize("kind", LAZY_RETRIEVALS)
def test_check_strategy_catches_a_generator_or_dict(plugin, kind):
    """`evals check-strategy` fails its records check on a retrieve() giving a generator or a dict."""
    from evals.strategies.contract import run_checks

    ref = plugin(lazy_plugin(kind)) + ":make"
    problems = {c.name: c.problem for c in run_checks(ref) if c.problem}
    assert problems.get("records are str or Record", "").startswith(f"retrieve() returned a {kind}; return a list")


# -- plug-in faults on the local executor ---------------------------------------


PLUGIN_FAULTS = {
    "factory returns None": ("def make():\n    return None\n", "its factory returned None, not a memory strategy"),
    "factory returns an int": ("def make():\n    return 3\n", "its factory returned an int, not a memory strategy"),
    "retrieve returns None": (
        "class S(Recency):\n    def retrieve(self, query, k=5):\n        return None\n\ndef make():\n    return S()\n",
        "retrieve(question, k=5) returned None, not a list of str or Record, at conversation '001_editor', turn 5",
    ),
    "retrieve raises": (
        "class S(Recency):\n    def retrieve(self, query, k=5):\n        raise RuntimeError('boom\\nsecond line')\n\n"
        "def make():\n    return S()\n",
        "retrieve(question, k=5) raised RuntimeError: boom second line, at conversation '001_editor', turn 5",
    ),
    "add raises": (
        "class S(Recency):\n    def add(self, role, content, *, turn=None):\n        raise ValueError('nope')\n\n"
        "def make():\n    return S()\n",
        "add() raised ValueError: nope, at conversation '001_editor', turn 0",
    ),
    "reset raises": (
        "class S(Recency):\n    def reset(self):\n        raise OSError('disk')\n\ndef make():\n    return S()\n",
        "reset() raised OSError: disk, at conversation '001_editor'",
    ),
    "lone surrogate in a record": (
        "class S(Recency):\n    def retrieve(self, query, k=5):\n        return ['bad \\udc80 text']\n\n"
        "def make():\n    return S()\n",
        "retrieve() returned a record holding a lone surrogate (\\udc80)",
    ),
    "sys.exit(0) in retrieve": (
        "import sys\nclass S(Recency):\n    def retrieve(self, query, k=5):\n        sys.exit(0)\n\n"
        "def make():\n    return S()\n",
        "retrieve(question, k=5) raised SystemExit(0)",
    ),
    "sys.exit(0) in the factory": ("import sys\ndef make():\n    sys.exit(0)\n", "could not be built: SystemExit(0)"),
}


@pytest.mark.parametrize("case", PLUGIN_FAULTS)
def test_plugin_fault_is_one_line_naming_the_strategy_and_call(store, plugin, case):
    """A broken plug-in (a bad factory, a call that raises or exits, a bad record) fails in one line, exit 1: a fault
    in the play keeps the run as a failed run (no figure), a factory's stores nothing (no run began)."""
    source, says = PLUGIN_FAULTS[case]
    ref = plugin(source) + ":make"
    with unchanged(store) if case.startswith(("factory", "sys.exit(0) in the factory")) else kept_as_failed(store):
        line = one_line_error(evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store))
    assert line.startswith(f"Error: strategy {ref}") and says in line, line


def test_plugin_exiting_on_import_is_one_line(store, plugin):
    """A plug-in module calling sys.exit(0) as it is imported is an error (exit 1), not a silent success."""
    ref = plugin("import sys\nsys.exit(0)\n") + ":make"
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store))
    assert line.startswith(f"Error: --runner {ref}: cannot import ") and "SystemExit(0)" in line


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("raise KeyError('ctx')", "context_for() raised KeyError: 'ctx'"),
        ("return 'one string'", "context_for() must return a list"),
    ],
)
def test_plugin_context_for_fault_with_answers_is_one_line(store, plugin, body, says):
    """With answers on, a context_for() that raises or gives no messages fails in one line; the run is kept as a
    failed run, never a figure."""
    from helpers.llm_server import LLMServer

    ref = (
        plugin(f"class S(Recency):\n    def context_for(self, query, k=5):\n        {body}\n\ndef make():\n    return S()\n")
        + ":make"
    )
    with LLMServer() as server, kept_as_failed(store):
        line = one_line_error(answers_run(server, store, runner=ref))
    assert f"strategy {ref}: " in line and says in line, line


# -- names from the registry, printed values escaped ----------------------------


def test_an_option_called_name_cannot_rename_a_strategy(store, plugin):
    """A factory option named `name` is refused: it would put the run on the leaderboard as another strategy."""
    ref = plugin("def make(name: str = 'full_history'):\n    return Recency()\n") + ":make"
    with unchanged(store):
        line = one_line_error(
            evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store, "--option", "name=full_history")
        )
    assert (
        line
        == f"Error: strategy {ref}: an option may not be called 'name': "
        "a run is named by the registry (rename the factory's parameter)"
    )


def test_describe_cannot_rename_a_strategy(tmp_path, plugin):
    """A StrategySpec whose describe() names another strategy is stored under its own name."""
    ref = plugin("""
        SPEC = StrategySpec(name="plugin_own", build=lambda o, c: Recency(), describe=lambda o, c: {"name": "full_history"})
    """) + ":SPEC"
    store = tmp_path / "s.duckdb"
    assert evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store).exit_code == 0
    rows = json.loads(evals("runs", "--store", store, "--format", "json").output)
    assert [(r["strategy"], r["strategy_config"]["name"]) for r in rows] == [("plugin_own", "plugin_own")]


def test_a_spec_cannot_take_a_registered_name(store, plugin):
    """A module's StrategySpec named like a registered strategy is refused, not run under that name."""
    ref = plugin('SPEC = StrategySpec(name="full_history", build=lambda o, c: Recency())\n') + ":SPEC"
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store))
    assert line.startswith(f"Error: --runner {ref}: its StrategySpec is named 'full_history', which is registered")


def test_a_newline_in_an_option_value_cannot_forge_lines(tmp_path, plugin):
    """An option value holding a newline is printed escaped in the Markdown leaderboard, never as a line of its own."""
    ref = plugin("def make(note: str = ''):\n    return Recency()\n") + ":make"
    store = tmp_path / "s.duckdb"
    for note in ("a\n| forged | row |", "b"):
        assert (
            evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store, "--option", f"note={note}").exit_code == 0
        )
    output = evals("leaderboard", "--store", store, "--format", "markdown").output
    assert not any(line.startswith("| forged") for line in output.splitlines())
    assert "note=a\\x0a" in output


# -- an edited plug-in is not answered from the store --------------------------


def test_an_edited_plugin_module_is_computed_again(tmp_path, plugin, clean_repo):
    """A `module:factory` plug-in edited between two runs on a clean commit is computed again, not `cached:`."""
    import sys

    name = plugin("def make():\n    return Recency()\n")
    store = tmp_path / "s.duckdb"
    run = ("run", "--runner", f"{name}:make", "--corpus", CORPUS_SMALL, "--store", store, "--repo", clean_repo)
    assert evals(*run).exit_code == 0
    assert evals(*run).output.startswith("cached: ")  # unchanged code: reused
    plugin("def make():\n    return FullHistory()  # the oracle now\n", name=name)
    sys.modules.pop(name)  # as a new process would import it
    again = evals(*run)
    assert again.exit_code == 0 and not again.output.startswith("cached: "), again.output
    assert "keyword hit@5 1.000" in again.output


def test_an_edited_entry_point_plugin_is_computed_again(tmp_path, monkeypatch, clean_repo):
    """An installed (entry point) plug-in whose package's helper module is edited is computed again, not `cached:`."""
    import importlib
    import sys
    import uuid

    package = f"pluginpkg_{uuid.uuid4().hex[:12]}"
    site = tmp_path / "site"
    dist_info(site, package, "1.0", {package: f"{package}.memory:make"})
    (site / package).mkdir()
    (site / package / "__init__.py").write_text("")
    (site / package / "memory.py").write_text(f"from {package}.helper import base\n\ndef make():\n    return base()\n")
    (site / package / "helper.py").write_text("from evals.strategies import Recency as base\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    importlib.invalidate_caches()
    store = tmp_path / "s.duckdb"
    run = ("run", "--runner", package, "--corpus", CORPUS_SMALL, "--store", store, "--repo", clean_repo)
    try:
        assert evals(*run).exit_code == 0
        assert evals(*run).output.startswith("cached: ")
        (site / package / "helper.py").write_text("from evals.strategies import FullHistory as base  # the oracle now\n")
        for module in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            sys.modules.pop(module)
        again = evals(*run)
        assert again.exit_code == 0 and not again.output.startswith("cached: "), again.output
    finally:
        for module in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            sys.modules.pop(module)


# -- no more records per retrieve than were asked for --------------------------


@pytest.mark.parametrize("prefix_stable", [True, False])
def test_a_retrieval_longer_than_asked_is_cut_and_warned_once(tmp_path, plugin, caplog, prefix_stable):
    """A plug-in returning 10,000 records keeps only what was asked for (k, the deepest cutoff), with one warning."""
    ref = plugin(f"""
        class Flood(Recency):
            def retrieve(self, query, k=5):
                return ["filler"] * 10_000

        SPEC = StrategySpec(name="plugin_flood", build=lambda o, c: Flood(), prefix_stable={prefix_stable})
    """) + ":SPEC"
    store = tmp_path / "s.duckdb"
    corpus = FIXTURES / "evidence_corpus"
    with caplog.at_level("WARNING", logger="evals.run.playthrough"):
        result = evals("run", "--runner", ref, "--corpus", corpus, "--store", store, "--cutoffs", "1,10")
    assert result.exit_code == 0, result.output
    points = stored_points(store, run_ids(store)[0])
    assert points and all(len(p.retrieved_records) == 5 for p in points)
    if prefix_stable:  # one ranking, at least as deep as the deepest cutoff (deeper to fill the budgets), read at every depth
        assert all(len(p.ranked_turns) >= 10 for p in points if p.ranked_turns is not None)
    warnings = [r.getMessage() for r in caplog.records if "plugin_flood" in r.getMessage()]
    assert len(warnings) == 1 and "returned 10000 records" in warnings[0], warnings


def test_full_history_is_kept_whole(tmp_path):
    """full_history, which ignores k by design, still keeps every earlier turn (the oracle is not cut)."""
    store = tmp_path / "s.duckdb"
    assert (
        evals(
            "run", "--runner", "full_history", "--corpus", CORPUS_SMALL, "--store", store, "--k", "1", "--cutoffs", "1"
        ).exit_code
        == 0
    )
    assert max(len(p.retrieved_records) for p in stored_points(store, run_ids(store)[0])) > 1


# -- how a plug-in module is found, as the docs say ------------------------------------------------


def test_an_unimportable_plugin_module_names_the_fix(store):
    """A `module:factory` whose module is not on the path is one line saying PYTHONPATH=. or pip install -e."""
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", "plugin_nowhere:make", "--corpus", CORPUS_SMALL, "--store", store))
    assert "no module named 'plugin_nowhere'" in line and "PYTHONPATH=." in line and "pip install -e" in line


def test_docs_say_how_a_plugin_module_is_found():
    """README and docs/strategies.md say a plug-in module is found through PYTHONPATH or an install."""
    root = ROOT
    for doc in ("README.md", "docs/strategies.md"):
        text = (root / doc).read_text(encoding="utf-8")
        assert "PYTHONPATH=." in text and "pip install -e" in text, doc
