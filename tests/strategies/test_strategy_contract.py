"""The strategy contract: the registry, options, plug-ins by entry point or reference, and the contract checks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import ROOT
from helpers.plugins import dist_info
from helpers.strategies import KeepsTurns

from evals.cli import cli
from evals.run.evaluate import RunConfig, evaluate
from evals.strategies import BuildContext, Record, Registry, StrategyError, StrategySpec
from evals.strategies.contract import check_strategy, run_checks

EXAMPLE = ROOT / "examples" / "keyword-overlap"
BUILT_INS = ["bm25", "full_history", "mneme", "no_memory", "random_k", "recency", "summary_buffer"]


# -- deliberately broken strategies, each breaking one promise (each class is its own factory) ------


class _Base(KeepsTurns):
    name = "broken"


class IgnoresK(_Base):
    def retrieve(self, query, k):
        return list(self.turns)


class NeverForgets(_Base):
    def reset(self):
        pass


class ReturnsNumbers(_Base):
    def retrieve(self, query, k):
        return [len(t) for t in self.turns[-k:]]


class NamesFutureTurns(_Base):
    def retrieve(self, query, k):
        return [Record(t, turn=99) for t in self.turns[-k:]]


class NoTurnKeyword(_Base):
    def add(self, role, content):
        self.turns.append(content)


class Random(_Base):
    def retrieve(self, query, k):
        import random

        return random.sample(self.turns, min(k, len(self.turns)))


class BadContext(_Base):
    def context_for(self, query, k):
        return "\n".join(self.turns)


unserialisable = StrategySpec(
    name="unserialisable",
    build=lambda options, context: _Base(),
    describe=lambda options, context: {"name": "unserialisable", "tags": {"a", "b"}},
)


def good():
    return _Base()


# -- the registry --------------------------------------------------------------------------------


def test_built_ins_register_through_entry_points():
    """The built-in strategies are found the way a plug-in is: as entry points, marked built-in."""
    registry = Registry()
    assert set(BUILT_INS) <= set(registry.names())
    assert {registry.get(name).source for name in BUILT_INS} == {"built-in"}


def test_configuration_is_known_without_building():
    """mneme's configuration comes from its options alone, and equals what the built strategy uses."""
    planned = Registry().plan("mneme", {"backend": "sqlite"}, BuildContext())
    assert planned.configuration == {
        "name": "mneme", "backend": "SQLiteBackend", "embedder": "HashEmbedder", "dimensions": 16, "model": "hash-16",
    }  # fmt: skip
    strategy = planned.build()
    assert type(strategy._backend).__name__ == planned.configuration["backend"]
    assert type(strategy._embedder).__name__ == planned.configuration["embedder"]


def test_unknown_option_is_named(corpus_small):
    """--option with a name the strategy does not take is an error naming it and the options it has."""
    with pytest.raises(StrategyError, match=r"--option colour: unknown option of mneme \(its options: backend, embedder\)"):
        evaluate(RunConfig(strategy="mneme", corpus=corpus_small, options={"colour": "red"}))


def test_bad_option_value_is_named(corpus_small):
    """A value the options model refuses is an error naming the option and the value."""
    with pytest.raises(StrategyError, match=r"--option max_recent_turns=0: Input should be greater than or equal to 1"):
        evaluate(RunConfig(strategy="summary_buffer", corpus=corpus_small, options={"max_recent_turns": "0"}))


def test_options_change_the_configuration(corpus_small):
    """An option is part of the run's configuration, so it is a configuration of its own on the leaderboard."""
    run = evaluate(RunConfig(strategy="summary_buffer", corpus=corpus_small, options={"max_recent_turns": "3"})).run
    assert run.strategy == {"name": "summary_buffer", "max_recent_turns": 3, "summarize_fn": "concatenate_summary"}


def test_unknown_strategy_lists_the_registered_ones():
    """A name nobody registered is an error listing the names that are."""
    registered = "unknown strategy 'nope'; registered: bm25, chroma, chroma_mempalace_text, cognee, full_history"
    with pytest.raises(StrategyError, match=registered):
        Registry().get("nope")


def test_a_factory_reference_runs(corpus_small):
    """package.module:function names a strategy without registering it; the name is the reference."""
    run = evaluate(RunConfig(strategy="test_strategy_contract:good", corpus=corpus_small)).run
    assert run.strategy == {"name": "test_strategy_contract:good"}
    assert run.strategy_source == "test_strategy_contract:good"


def test_a_record_naming_its_turn_is_matched_by_that_turn(tmp_path):
    """Evidence recall follows a record's declared source turn even when its text is rewritten."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    turns = [
        {"role": "user", "content": "I adopted a cat called Biscuit."},
        {"role": "assistant", "content": "Nice."},
        {"role": "user", "content": "What is my cat called?", "test_at": {"question": "What is my cat called?",
         "expected_fact": "Biscuit", "expected_keywords": ["biscuit"], "evidence_turns": [0]}},
    ]  # fmt: skip
    (corpus / "rewrites.json").write_text(
        json.dumps({"schema_version": "1", "id": "rewrites", "description": "d", "turns": turns})
    )
    run = evaluate(RunConfig(strategy="test_strategy_contract:rewriting", corpus=corpus)).run
    point = run.conversations[0].test_points[0]
    assert point.retrieved_records == ["FACT: the user's cat is Biscuit"] and point.retrieved_turns == [0]


class Rewriting(_Base):
    def add(self, role, content, *, turn):
        if "Biscuit" in content:
            self.turns.append((turn, "FACT: the user's cat is Biscuit"))

    def retrieve(self, query, k):
        return [Record(text, turn=turn) for turn, text in self.turns[:k]]

    def context_for(self, query, k):
        return [{"role": "system", "content": text} for _, text in self.turns[:k]]


def rewriting():
    return Rewriting()


# -- the contract checks -------------------------------------------------------------------------


@pytest.mark.parametrize("name", BUILT_INS)
def test_every_built_in_keeps_the_contract(name):
    """check_strategy finds nothing wrong with a built-in."""
    assert check_strategy(name) == []


@pytest.mark.parametrize(
    ("factory", "check", "says"),
    [
        ("IgnoresK", "retrieve honours k", "returned 10 records; return at most k"),
        ("NeverForgets", "reset empties memory", "reset must forget everything"),
        ("ReturnsNumbers", "records are str or Record", "returned a int record"),
        ("NamesFutureTurns", "source turns are added turns", "names turn 99"),
        ("NoTurnKeyword", "members", "add() takes no `turn` keyword"),
        ("Random", "same inputs, same records", "seed any randomness"),
        ("BadContext", "context_for gives chat messages", "must return a list of"),
        ("unserialisable", "configuration is JSON and stable", "not JSON-serialisable"),
    ],
)
def test_a_broken_strategy_is_told_what_to_fix(factory, check, says):
    """Each broken promise fails its own check with a line saying what to fix."""
    problems = {c.name: c.problem for c in run_checks(f"test_strategy_contract:{factory}") if c.problem}
    assert check in problems and says in problems[check], problems


def test_check_strategy_command_exits_1_on_a_broken_strategy():
    """`evals check-strategy` prints each check and exits 1 when one fails."""
    result = CliRunner().invoke(cli, ["check-strategy", "test_strategy_contract:NeverForgets"])
    assert result.exit_code == 1 and "FAIL  reset empties memory" in result.output


def test_strategies_command_lists_options():
    """`evals strategies` names each strategy, where it comes from, and its options with defaults."""
    output = CliRunner().invoke(cli, ["strategies"]).output
    assert "mneme  (built-in)" in output and "--option backend=…  default 'memory'" in output
    assert CliRunner().invoke(cli, ["strategies", "--names"]).output.split() == Registry().names()


# -- the example plug-in, by entry point ---------------------------------------------------------


@pytest.fixture
def example_on_path(tmp_path: Path) -> dict[str, str]:
    """The example plug-in importable and registered: its source on the path with the metadata pip would write."""
    dist_info(tmp_path / "site", "mneme-evals-keyword-overlap", "0.1.0", {"keyword_overlap": "keyword_overlap:make_memory"})
    return {"PYTHONPATH": f"{tmp_path / 'site'}:{EXAMPLE / 'src'}"}


def test_example_plugin_runs_end_to_end(example_on_path, tmp_path, corpus_small):
    """Installed by entry point, the example strategy runs, is stored with its distribution, and passes the checks."""
    store = tmp_path / "results.duckdb"
    env = {**__import__("os").environ, **example_on_path}
    evals = [sys.executable, "-m", "evals"]
    listing = subprocess.run([*evals, "strategies"], env=env, capture_output=True, text=True, check=True).stdout
    assert "keyword_overlap  (mneme-evals-keyword-overlap 0.1.0)" in listing
    checked = subprocess.run([*evals, "check-strategy", "keyword_overlap"], env=env, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout
    run = subprocess.run(
        [*evals, "run", "--runner", "keyword_overlap", "--option", "min_shared=2",
         "--corpus", str(corpus_small), "--store", str(store)],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    rows = json.loads(
        subprocess.run(
            [*evals, "runs", "--format", "json", "--store", str(store)], env=env, capture_output=True, text=True, check=True
        ).stdout
    )
    assert rows[0]["strategy_config"] == {"name": "keyword_overlap", "min_shared": 2}
    assert rows[0]["strategy_source"] == "mneme-evals-keyword-overlap 0.1.0"
    site = tmp_path / "built"
    subprocess.run([*evals, "build-site", "--store", str(store), "--out", str(site)], env=env, capture_output=True, check=True)
    (board,) = site.glob("leaderboard-*.html")  # the corpus's benchmark's leaderboard (index.html lists the benchmarks)
    assert "plug-in: mneme-evals-keyword-overlap 0.1.0" in board.read_text()
    assert "mneme-evals-keyword-overlap 0.1.0" in (site / "runs" / f"{rows[0]['run_id']}.html").read_text()


def test_a_strategy_whose_extra_is_missing_says_which(corpus_small):
    """A strategy needing a module that is not installed is listed as such, left out of --available, and refused by name."""
    from evals.strategies import StrategySpec

    spec = StrategySpec(name="needs_extra", build=lambda o, c: None, requires=("no_such_module_here",), extra="nothing")
    registry = Registry([])
    registry._loaded["needs_extra"] = spec  # noqa: SLF001 - a registry of one hand-made spec
    with pytest.raises(StrategyError, match=r"needs no_such_module_here, which is not installed: pip install -e '.\[nothing\]'"):
        registry.plan("needs_extra", {}, BuildContext()).build()
    assert spec.missing() == ["no_such_module_here"]
    names = CliRunner().invoke(cli, ["strategies", "--names", "--available"]).output.split()
    assert names == [n for n in Registry().names() if not Registry().get(n).missing() and not Registry().get(n).needs_endpoint]
