"""A benchmark is one unit: a toy one, declared in test code alone (tests/plugins/toy_benchmark: one module and
one entry point), is listed, importable, judged by its own rule and shown on the site, with no other change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import PLUGINS
from helpers.html import parse

from evals.benchmarks import BENCHMARKS, rule_of, units
from evals.cli import cli
from evals.model.corpus import benchmark_names, load_corpus

TOY = PLUGINS / "toy_benchmark"
ITEMS = [
    {"history": ["I adopted a cat named Miso", "Lovely name", "I moved to Lyon", "Nice city"], "question": "Where do I live?",
     "answer": "Lyon", "evidence": [2]},
    {"history": ["My sister is Ana", "Noted", "Ana plays cello", "Great"], "question": "What does Ana play?",
     "answer": "cello", "evidence": [2]},
]


@pytest.fixture
def toy(monkeypatch) -> None:
    """The toy unit's folder on sys.path for one test: its entry point is registered, then gone."""
    monkeypatch.syspath_prepend(str(TOY))


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def toy_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy file imported, two runs stored, the site built (the toy's folder on sys.path meanwhile), once for the
    tests that only read its pages; the site's folder."""
    folder = tmp_path_factory.mktemp("toy-site")
    source = folder / "toy.json"
    source.write_text(json.dumps(ITEMS))
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(TOY))
        patch.setenv("EVALS_CACHE", str(folder / "user-cache.duckdb"))
        invoke("import-corpus", "toy", str(source), "--out", str(folder / "toy"))
        for runner in ("oracle", "recency"):
            invoke("run", "--runner", runner, "--k", "1", "--corpus", str(folder / "toy"), "--store", str(folder / "s.duckdb"))
        invoke("build-site", "--store", str(folder / "s.duckdb"), "--out", str(folder / "site"))
    return folder / "site"


def test_the_built_ins_are_units_of_the_registry():
    """LoCoMo, LongMemEval and BEAM are units; every release evals fetch knows belongs to one."""
    assert {"locomo", "longmemeval", "beam"} <= set(units())
    assert set(BENCHMARKS) == {release.name for unit in units().values() for release in unit.releases}


def test_the_toy_is_unknown_without_its_entry_point():
    """Nothing of the toy leaks in from other tests: without its folder on the path it is no benchmark."""
    assert "toy" not in units() and "toy" not in benchmark_names()


def test_evals_benchmarks_lists_the_toy(toy):
    """`evals benchmarks` lists the toy's release from its unit alone."""
    assert "Toy benchmark (declared in test code)" in invoke("benchmarks")


def test_import_corpus_offers_the_toy(toy):
    """The toy is a FORMAT of `evals import-corpus`, named in its help with what it reads."""
    text = invoke("import-corpus", "--help")
    assert "toy" in text and "the toy benchmark's toy.json" in text


def test_the_toy_corpus_declares_it_and_is_judged_by_its_rule(toy, tmp_path):
    """The imported corpus's benchmark.json names the toy (the schema accepts it), and its rule is the toy's."""
    source = tmp_path / "toy.json"
    source.write_text(json.dumps(ITEMS))
    invoke("import-corpus", "toy", str(source), "--out", str(tmp_path / "toy"))
    assert load_corpus(tmp_path / "toy").benchmark == "toy" and rule_of("toy").name == "toy"


def test_the_methodology_page_states_the_toys_rule(toy_site):
    """about.html lists the toy's headline rule with the code it follows."""
    assert "the toy benchmark's imaginary evaluate.py" in parse(toy_site / "about.html").text()


def test_the_front_page_lists_the_toy(toy_site):
    """index.html lists the toy benchmark by its title, linking its leaderboard."""
    table = parse(toy_site / "index.html").find("table", "benchmarks")
    assert "Toy benchmark" in table.text() and "leaderboard-toy.html" in {a.attrs.get("href") for a in table.find_all("a")}


TOY_QA = PLUGINS / "toy_qa_benchmark"


def test_a_plugin_unit_brings_its_own_qa_protocol(monkeypatch, server, tmp_path):
    """A unit declared outside the package (tests/plugins/toy_qa_benchmark, written against the kit alone) with its
    own QA protocol: `evals run --protocol toyqa --with-answers --judge` asks with its prompt, judges with its judge
    model and prompt, scores words with its scorer, and the run page shows its figures."""
    from helpers.runs import evals_run, stored_runs

    monkeypatch.syspath_prepend(str(TOY))
    monkeypatch.syspath_prepend(str(TOY_QA))
    source = tmp_path / "toy.json"
    ana = {"history": ["Ana lives in Lyon now", "Noted"], "question": "Where does Ana live now?", "answer": "Lyon"}
    bo = {"history": ["Bo plays the cello daily", "Nice"], "question": "What does Bo play daily?", "answer": "cello"}
    items = [{**ana, "evidence": [0]}, {**bo, "evidence": [0]}]
    source.write_text(json.dumps(items))
    invoke("import-corpus", "toy", str(source), "--out", str(tmp_path / "toy"))
    store = tmp_path / "s.duckdb"
    ran = evals_run(server, store, tmp_path / "toy", "--k", "2", "--protocol", "toyqa", "--with-answers", "--judge")
    assert ran.exit_code == 0, (ran.output, ran.exception)
    asked = [b["messages"][0]["content"] for b in server.bodies]
    assert any(a.startswith("Answer the question from these memories.") for a in asked)
    judged = [b for b in server.bodies if b["messages"][0]["content"].startswith("[JUDGE-toyqa]")]
    assert len(judged) == 2 and {b["model"] for b in judged} == {"toy-judge"}
    (stored,) = stored_runs(store)
    answers = [a for conv in stored.answers.points for a in conv]
    assert stored.answers.protocol == "toyqa" and [a.correct for a in answers] == [True, True]
    assert stored.summary.metric("answer_f1").value == 1.0  # its own scorer (exact match): the harness's F1 is 1/3
    invoke("build-site", "--store", str(store), "--out", str(tmp_path / "site"))
    (page,) = [p for p in (tmp_path / "site" / "runs").rglob("*.html") if 'id="answers"' in p.read_text(encoding="utf-8")]
    html = page.read_text(encoding="utf-8")
    assert 'protocol <strong id="protocol">toyqa</strong>' in html
    assert "2 / 2 judged correct by toy-judge" in html
