"""The field's runners (chroma, qdrant, langgraph, llamaindex, txtai, lancedb, mempalace and the configurations named
for what runs: chroma_mempalace_text, llamaindex_vector_block): each keeps the contract, finds the evidence, records
its library and configuration, and reaches no network.

Each case is skipped when its optional extra is not installed (``pip install -e '.[field]'``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import FIXTURES, build, configuration
from helpers.offline import run_offline

from evals.run.evaluate import RunConfig, evaluate
from evals.strategies import Registry
from evals.strategies.contract import check_strategy

# Every runner that retrieves, each lexical or hybrid mode too: (name, options, the library's distribution).
RUNNERS = [
    ("chroma", {}, "chromadb"),
    ("qdrant", {}, "qdrant-client"),
    ("qdrant", {"mode": "sparse"}, "qdrant-client"),
    ("qdrant", {"mode": "hybrid"}, "qdrant-client"),
    ("langgraph", {}, "langgraph"),
    ("llamaindex_vector_block", {}, "llama-index-core"),
    ("txtai", {}, "txtai"),
    ("txtai", {"mode": "keyword"}, "txtai"),
    ("txtai", {"mode": "hybrid"}, "txtai"),
    ("lancedb", {}, "lancedb"),
    ("lancedb", {"mode": "fts"}, "lancedb"),
    ("lancedb", {"mode": "hybrid"}, "lancedb"),
    ("chroma_mempalace_text", {"granularity": "dialog"}, "chromadb"),
    ("chroma_mempalace_text", {"granularity": "session"}, "chromadb"),
    ("mempalace", {}, "mempalace"),
]
# The extra that installs each runner, where it is not the runner's own name.
EXTRAS = {"chroma_mempalace_text": "chroma", "llamaindex_vector_block": "llamaindex"}


def _label(case: tuple[str, dict, str]) -> str:
    name, options, _ = case
    return "-".join([name, *(f"{k}={v}" for k, v in options.items())])


def _installed(name: str) -> bool:
    return not Registry().get(name).missing()


def _skip_unless_installed(name: str) -> None:
    if not _installed(name):
        pytest.skip(f"needs the {Registry().get(name).extra} extra: pip install -e '.[{Registry().get(name).extra}]'")


@pytest.mark.slow
@pytest.mark.parametrize("case", RUNNERS, ids=_label)
def test_keeps_the_contract(case):
    """`evals check-strategy` finds nothing wrong with the runner in this mode."""
    name, options, _ = case
    _skip_unless_installed(name)
    assert check_strategy(name, options) == []


@pytest.mark.slow
@pytest.mark.parametrize("case", RUNNERS, ids=_label)
def test_finds_the_evidence(case):
    """On the labelled fixture corpus every test point's evidence turn is among the records."""
    name, options, _ = case
    _skip_unless_installed(name)
    evaluation = evaluate(RunConfig(strategy=name, corpus=FIXTURES / "evidence_corpus", options=options))
    assert evaluation.scores.recall == 1.0


@pytest.mark.parametrize("case", RUNNERS, ids=_label)
def test_configuration_names_the_library_and_its_version(case):
    """A run's configuration records the library's installed version and every option."""
    import importlib.metadata

    name, options, distribution = case
    _skip_unless_installed(name)
    described = configuration(name, **options)
    assert described[distribution] == importlib.metadata.version(distribution)
    assert all(described[key] == value for key, value in options.items())


@pytest.mark.parametrize("name", sorted({case[0] for case in RUNNERS}))
def test_listed_with_the_extra_it_needs(name):
    """Each runner is registered and says which extra installs what it needs."""
    spec = Registry().get(name)
    assert spec.extra == EXTRAS.get(name, name) and spec.requires and "sentence_transformers" in spec.requires


def test_chroma_mempalace_text_writes_mempalaces_dialog_text():
    """A LoCoMo turn becomes MemPalace's document: `Speaker said, "text"`, without the shared image's caption."""
    pytest.importorskip("chromadb")
    from evals.strategies.chroma_mempalace_text import dialog_text

    assert dialog_text("user", "Caroline: I went to a support group. [shares a photo of a sign]") == (
        'Caroline said, "I went to a support group."'
    )
    assert dialog_text("assistant", "No speaker here.") == 'assistant said, "No speaker here."'


def test_chroma_mempalace_text_session_record_names_every_turn_of_its_session():
    """granularity=session: one record per session, its text every turn of it, naming each of its turns."""
    _skip_unless_installed("chroma_mempalace_text")
    memory = build("chroma_mempalace_text", granularity="session")
    memory.reset()
    turns = [
        ("Ana: My cat is called Biscuit.", "s1"),
        ("Ben: The port is 6543.", "s2"),
        ("Ana: Biscuit is nine years old.", "s1"),
    ]
    for index, (content, session) in enumerate(turns):
        memory.add("user", content, turn=index, session=session)
    (first, second) = memory.retrieve("How old is the cat Biscuit?", 10)
    assert first.turns == (0, 2) and first.text == 'Ana said, "My cat is called Biscuit."\nAna said, "Biscuit is nine years old."'
    assert second.turns == (1,)


def test_mempalace_drawers_are_the_miners_exchange_pairs_naming_their_turns():
    """The mempalace runner files the package's exchange-pair drawers (a user turn quoted, its reply after it), each
    record naming the turns its drawer holds."""
    _skip_unless_installed("mempalace")
    memory = build("mempalace")
    memory.reset()
    turns = [("user", "Ana: My cat is called Biscuit."), ("assistant", "Ben: Nice, and the port is 6543.")]
    for index, (role, content) in enumerate(turns):
        memory.add(role, content, turn=index)
    (record,) = memory.retrieve("What is the cat called?", 10)
    assert record.text == "> Ana: My cat is called Biscuit.\nBen: Nice, and the port is 6543." and record.turns == (0, 1)


@pytest.mark.slow
def test_llamaindex_memory_gives_the_chat_history_its_budget_holds():
    """llamaindex (Memory at its defaults) returns its short-term chat history, oldest first, whatever k, each
    record naming its turn; past its token budget the oldest turns are gone."""
    _skip_unless_installed("llamaindex")
    memory = build("llamaindex", token_limit=100)
    memory.reset()
    for index in range(40):
        memory.add("user" if index % 2 == 0 else "assistant", f"Turn number {index} says something short.", turn=index)
    records = memory.retrieve("anything", 1)
    turns = [r.turn for r in records]
    assert len(records) > 1 and turns == sorted(turns) and turns[-1] == 39 and turns[0] > 0


# Every installed runner on the small corpus, in a child process with the network closed (helpers.offline).
_OFFLINE_CHILD = """
from evals.run.evaluate import RunConfig, evaluate

recalls = {}
for name, options in json.loads(sys.argv[1]):
    run = evaluate(RunConfig(strategy=name, corpus=Path(sys.argv[2]), options=options))
    recalls[name + json.dumps(options)] = run.scores.recall
print(json.dumps({"attempts": ATTEMPTS, "recalls": recalls}))
"""


@pytest.mark.slow
def test_no_runner_reaches_the_network(tmp_path: Path):
    """Every installed runner runs on the small corpus with no lookup or connection beyond loopback:
    none from Python (an audit hook) and, where strace is installed, none from native code either
    (onnxruntime's telemetry looks up its host from C++, a few seconds after it is imported)."""
    cases = [(name, options) for name, options, _ in RUNNERS if _installed(name)]
    if not cases:
        pytest.skip("no field runner installed: pip install -e '.[field]'")
    report = run_offline(_OFFLINE_CHILD, json.dumps(cases), str(FIXTURES / "corpus_small"), tmp_path=tmp_path)
    assert all(recall > 0 for recall in report["recalls"].values()), report["recalls"]


@pytest.mark.slow
def test_a_second_runner_on_the_same_store_computes_no_embedding(tmp_path: Path):
    """The harness embeds each text once: a second runner on the same corpus and store finds every vector cached."""
    from click.testing import CliRunner

    from evals.cli import cli

    names = [name for name in ("langgraph", "qdrant", "lancedb", "chroma") if _installed(name)][:2]
    if len(names) < 2:
        pytest.skip("needs two field runners: pip install -e '.[field]'")
    store = tmp_path / "results.duckdb"
    said = []
    for name in names:
        args = ["run", "--runner", name, "--corpus", str(FIXTURES / "corpus_small"), "--store", str(store)]
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        said.append(next(line for line in (result.output + result.stderr).splitlines() if line.startswith("cache:")))
    assert not said[0].startswith("cache: 0 computed")
    assert said[1].startswith("cache: 0 computed")


def test_strategies_listing_says_the_extra_each_needs():
    """`evals strategies` names the extra that installs each field runner, installed here or not."""
    from click.testing import CliRunner

    from evals.cli import cli

    lines = CliRunner().invoke(cli, ["strategies"]).output.splitlines()
    for name in sorted({case[0] for case in RUNNERS}):
        extra = EXTRAS.get(name, name)
        line = next(line for line in lines if line.startswith(f"{name}  ("))
        assert line.endswith((f"[needs the {extra} extra]", f"[installed by the {extra} extra]"))


@pytest.mark.slow
@pytest.mark.parametrize(
    "case",
    [("chroma", {}), ("chroma_mempalace_text", {"granularity": "dialog"}), ("chroma_mempalace_text", {"granularity": "session"})],
    ids=["chroma", "chroma_mempalace_text-dialog", "chroma_mempalace_text-session"],
)
def test_chroma_adds_in_batches_it_accepts(case):
    """A conversation of 20,000 turns (more than Chroma takes in one call) is written and searched; 50
    distinct texts, so MiniLM embeds little."""
    name, options = case
    _skip_unless_installed(name)
    memory = build(name, **options)
    memory.reset()
    for index in range(20_000):
        memory.add("user", f"Ana: note {index % 50} is about topic {index % 50}.", turn=index)
    assert len(memory.retrieve("Which note is about topic 7?", 5)) == 5
    assert memory._collection.count() == 20_000


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fts", "hybrid"])
def test_lancedb_queries_are_escaped(mode):
    """A question holding LanceDB's query syntax (a phrase in quotes, a field, a boolean, a stray quote) is
    searched as words: no error, and the turn holding them is found first."""
    _skip_unless_installed("lancedb")
    memory = build("lancedb", mode=mode)
    memory.reset()
    turns = ["Ana: The blue river runs past the old mill.", "Ben: My port is 6543.", "Ana: I adopted a cat named Biscuit."]
    for index, content in enumerate(turns):
        memory.add("user", content, turn=index)
    questions = ['"the blue river"', 'What did Ana say about "the blue river"?', 'Where does the "blue river run',
                 "text:blue AND (river", "blue river~2 [a TO z] \\\\ *", '"']
    for question in questions:
        records = memory.retrieve(question, 3)
        assert question == '"' or records[0].turn == 0, (question, records)
