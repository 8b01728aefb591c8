"""The ``oracle`` strategy: exactly the labelled evidence turns, a reader's ceiling on every evidence corpus.

Stand-in LoCoMo and LongMemEval files (same shape as the published ones, written here) are imported
with the real importers; the records each test point should get are written out by hand below, from
the files, not worked out by the code under test. Runs go through ``evaluate`` and the store as a
real run does; answers go over real HTTP to the local OpenAI-compatible server (tests/helpers/llm_server.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import ROOT
from helpers.html import parse
from helpers.llm_server import LLMServer
from helpers.stores import provenance

from evals.benchmarks.locomo.importer import import_locomo
from evals.benchmarks.longmemeval.importer import import_longmemeval
from evals.cli import cli
from evals.errors import EvalsError
from evals.judge.ceilings import CEILINGS, READS_LABELS_EXPLANATION, ceiling
from evals.model.corpus import load_corpus
from evals.run.evaluate import RunConfig, evaluate
from evals.run.llm import prompt
from evals.run.playthrough import play_corpus
from evals.site import build_site
from evals.store import Store
from evals.strategies import BuildContext, Record, Registry, StrategySpec
from evals.strategies.base import READS_LABELS
from evals.strategies.contract import check_strategy

# -- the stand-in benchmarks ---------------------------------------------------------------------------

LOCOMO = [
    {
        "sample_id": "conv-7",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat named Pixel last week."},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "Congrats! I started learning the cello."},
                {"speaker": "Ann", "dia_id": "D1:3", "text": "I work as a nurse in Porto."},
                {"speaker": "Bob", "dia_id": "D1:4", "text": "Porto has lovely bridges."},
            ],
            "session_2_date_time": "7:10 pm on 20 May, 2023",
            "session_2": [
                {"speaker": "Bob", "dia_id": "D2:1", "text": "My cello teacher is called Marta."},
                {"speaker": "Ann", "dia_id": "D2:2", "text": "Pixel knocked over my plant."},
                {"speaker": "Bob", "dia_id": "D2:3", "text": "Cats will be cats."},
            ],
        },
        "qa": [
            # Evidence listed out of conversation order: the oracle returns it in conversation order.
            {
                "question": "What do Ann and Bob do?",
                "answer": "nurse, cello",
                "evidence": ["D2:1", "D1:3", "D1:2"],
                "category": 1,
            },
            {"question": "Where does Ann work?", "answer": "Porto", "evidence": ["D1:3"], "category": 4},
            {"question": "When did Ann adopt Pixel?", "answer": "The week before 8 May 2023", "evidence": [], "category": 2},
            {"question": "What is Ann's dog called?", "adversarial_answer": "Pixel", "evidence": ["D2:2"], "category": 5},
        ],
    }
]
LOCOMO_EXPECTED = {  # question -> the records the oracle must return, in order, before any cut
    "What do Ann and Bob do?": [
        "Bob: Congrats! I started learning the cello.",
        "Ann: I work as a nurse in Porto.",
        "Bob: My cello teacher is called Marta.",
    ],
    "Where does Ann work?": ["Ann: I work as a nurse in Porto."],
    "When did Ann adopt Pixel?": [],  # no evidence labelled: nothing to be an oracle of
    "What is Ann's dog called?": ["Ann: Pixel knocked over my plant."],
}


def _session(*turns: tuple[str, str, bool]) -> list[dict]:
    return [{"role": role, "content": content, **({"has_answer": True} if answer else {})} for role, content, answer in turns]


LONGMEMEVAL = [
    {
        "question_id": "lme_multi",
        "question_type": "multi-session",
        "question": "How many books did I buy in total?",
        "answer": "6",
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_dates": ["2023/05/01 (Mon) 09:00", "2023/05/02 (Tue) 09:00", "2023/05/03 (Wed) 09:00"],
        "haystack_session_ids": ["s0", "s1", "s2"],
        "answer_session_ids": ["s0", "s2"],
        "haystack_sessions": [
            _session(("user", "I went hiking on Sunday.", False), ("assistant", "Sounds fun.", False),
                     ("user", "I bought 2 books today.", True), ("assistant", "Nice.", False)),
            _session(("user", "What is a good pasta recipe?", False), ("assistant", "Try carbonara.", False)),
            _session(("user", "Got 3 more books at the fair.", True), ("assistant", "Great haul.", False),
                     ("user", "And one more from my sister.", True)),
        ],
    },  # fmt: skip
    {
        # Labelled by session only (no turn marked has_answer): the session's turns, in order.
        "question_id": "lme_sessions_only",
        "question_type": "single-session-preference",
        "question": "Which editor should I use for my notes?",
        "answer": "one that suits a vim user",
        "haystack_session_ids": ["t0", "t1"],
        "answer_session_ids": ["t1"],
        "haystack_sessions": [
            _session(("user", "The weather is grim today.", False), ("assistant", "Stay dry.", False)),
            _session(("user", "I only ever use vim.", False), ("assistant", "Vim it is.", False),
                     ("user", "Modal editing suits me.", False)),
        ],
    },  # fmt: skip
    {
        "question_id": "lme_single",
        "question_type": "single-session-user",
        "question": "What breed is my dog?",
        "answer": "Border Collie",
        "haystack_session_ids": ["u0", "u1"],
        "answer_session_ids": ["u1"],
        "haystack_sessions": [
            _session(("user", "I just got back from a hike.", False), ("assistant", "Sounds fun!", False)),
            _session(
                ("user", "My new puppy is a border collie named Rex.", True),
                ("assistant", "Border collies are energetic!", False),
            ),
        ],
    },  # fmt: skip
    {
        "question_id": "lme_cat_abs",
        "question_type": "single-session-user",
        "question": "What is my cat's name?",
        "answer": "You did not mention a cat.",
        "haystack_session_ids": ["v0"],
        "answer_session_ids": [],
        "haystack_sessions": [_session(("user", "I like jazz.", False), ("assistant", "Jazz is great.", False))],
    },
]
LONGMEMEVAL_EXPECTED = {
    "How many books did I buy in total?": [
        "I bought 2 books today.",
        "Got 3 more books at the fair.",
        "And one more from my sister.",
    ],
    "Which editor should I use for my notes?": ["I only ever use vim.", "Vim it is.", "Modal editing suits me."],
    "What breed is my dog?": ["My new puppy is a border collie named Rex."],
    "What is my cat's name?": [],
}
BENCHMARKS = {
    "locomo": (import_locomo, LOCOMO, LOCOMO_EXPECTED),
    "longmemeval": (import_longmemeval, LONGMEMEVAL, LONGMEMEVAL_EXPECTED),
}


@pytest.fixture(scope="module", params=sorted(BENCHMARKS))
def benchmark(request, tmp_path_factory) -> tuple[str, Path, dict[str, list[str]]]:
    """(name, imported corpus folder, the expected records per question) of one stand-in benchmark."""
    importer, data, expected = BENCHMARKS[request.param]
    root = tmp_path_factory.mktemp(request.param)
    (root / "source.json").write_text(json.dumps(data))
    importer(root / "source.json", root / "corpus")
    return request.param, root / "corpus", expected


def turns_of(corpus: Path, question: str, texts: list[str]) -> list[int]:
    """The indices of the turns with these contents in the conversation asking ``question``, in the order
    given (each text is one turn of its conversation here)."""
    (contents,) = [
        [t.content for t in c.turns] for c in load_corpus(corpus).conversations if any(t.content == question for t in c.turns)
    ]
    return [contents.index(text) for text in texts]


# -- what it retrieves ---------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 2, 5])
def test_records_are_exactly_the_evidence_turns_in_order_cut_at_k(benchmark, k):
    """Each test point's records are its evidence turns (or, labelled by session only, that session's
    turns) in conversation order, cut at k, each naming its source turn; nothing without evidence."""
    _, corpus, expected = benchmark
    run = evaluate(RunConfig(strategy="oracle", corpus=corpus, k=k, cutoffs=(1, 2, 5, 10))).run
    points = {p.question: p for c in run.conversations for p in c.test_points}
    assert set(points) == set(expected)
    for question, texts in expected.items():
        assert points[question].retrieved_records == texts[:k], question
        if points[question].evidence_turns:  # a record is matched to its evidence by the turn it names
            assert points[question].retrieved_turns == turns_of(corpus, question, texts[:k]), question


def test_the_strategy_is_told_the_labels_just_before_each_retrieval():
    """retrieve after read_labels gives Records naming their turns; reset forgets the turns and the labels;
    sessions count only where no turn is labelled; a label naming a turn never added gives nothing."""
    oracle = Registry().plan("oracle", {}, BuildContext()).build()
    for index, (content, session) in enumerate([("a", "s1"), ("b", "s2"), ("c", "s1"), ("d", "s2")]):
        oracle.add("user", content, turn=index, session=session)
    oracle.read_labels((3, 0, 9), ("s1",))  # turn 9 was never added
    assert oracle.retrieve("q", 5) == [Record("a", turn=0), Record("d", turn=3)]
    assert oracle.context_for("q", 1) == [{"role": "user", "content": "a"}]
    oracle.read_labels((), ("s1",))
    assert oracle.retrieve("q", 5) == [Record("a", turn=0), Record("c", turn=2)]
    oracle.read_labels((), ())
    assert oracle.retrieve("q", 5) == []
    oracle.read_labels((1,), ())
    oracle.reset()
    assert oracle.retrieve("q", 5) == [] and oracle.held_count() == 0


def test_the_oracle_keeps_the_strategy_contract():
    """`evals check-strategy oracle` finds nothing to fix (told no labels, it retrieves nothing)."""
    assert [c for c in check_strategy("oracle")] == []


# -- its figures: a ceiling ------------------------------------------------------------------------------


def test_headline_is_one_where_k_reaches_every_evidence_turn(benchmark, tmp_path):
    """The headline (an evidence turn among the first k) is 1.0 over every counted point at any k; every
    evidence turn is found (evidence all) once k reaches the most evidence turns any point has, not before."""
    name, corpus, expected = benchmark
    most = max(len(texts) for texts in expected.values())  # 3 in both stand-ins
    with Store.open(tmp_path / "r.duckdb") as store:
        deep = store.get_run(
            store.append(evaluate(RunConfig(strategy="oracle", corpus=corpus, k=most)), provenance("a" * 40))
        ).summary
        shallow = store.get_run(
            store.append(evaluate(RunConfig(strategy="oracle", corpus=corpus, k=1)), provenance("a" * 40))
        ).summary
    counted = 3 if name == "locomo" else 2  # LoCoMo counts category 5; LongMemEval answerable points with evidence turns
    for summary in (deep, shallow):
        assert (summary.headline.hits, summary.headline.total, summary.headline.recall) == (counted, counted, 1.0)
    assert deep.metric("evidence_recall_all").value == 1.0
    assert shallow.metric("evidence_recall_all").value < 1.0  # the three-evidence question is cut at k = 1


def test_the_configuration_records_that_it_reads_labels(benchmark):
    """The run's configuration says reads_labels, so every surface can tell; the registry marks it a ceiling."""
    _, corpus, _ = benchmark
    assert evaluate(RunConfig(strategy="oracle", corpus=corpus)).run.strategy == {"name": "oracle", READS_LABELS: True}
    assert Registry().get("oracle").reads_labels and "oracle" in CEILINGS


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> tuple[Path, Path, dict[str, str]]:
    """The LoCoMo stand-in with oracle, full_history and bm25 at two commits each, and its site."""
    root = tmp_path_factory.mktemp("board")
    (root / "source.json").write_text(json.dumps(LOCOMO))
    import_locomo(root / "source.json", root / "corpus")
    store_path = root / "results.duckdb"
    runs = {}
    with Store.open(store_path) as store:
        for commit in ("a", "b"):
            for strategy in ("oracle", "full_history", "bm25"):
                runs[f"{strategy}@{commit}"] = store.append(
                    evaluate(RunConfig(strategy=strategy, corpus=root / "corpus", k=2)), provenance(commit * 40)
                )
    build_site(store_path, root / "site")
    return store_path, root / "site", runs


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_leaderboard_marks_it_a_ceiling_like_full_history(board):
    """`evals leaderboard` stars oracle as it stars full_history, bm25 not; the Markdown table says (ceiling)."""
    store_path, _, _ = board
    text = invoke("leaderboard", "--store", str(store_path))
    names = {
        line.split()[0]
        for line in text.splitlines()
        if line.split() and line.split()[0].rstrip("*") in ("oracle", "full_history", "bm25")
    }
    assert names == {"oracle*", "full_history*", "bm25"}
    assert "* ceiling: reads the labels" in text and max(len(line) for line in text.splitlines()) <= 100
    markdown = invoke("leaderboard", "--store", str(store_path), "--format", "markdown")
    rows = [line for line in markdown.splitlines() if line.startswith("| ") and not line.startswith("| strategy")]
    assert {row.split(" | ")[0].removeprefix("| ") for row in rows if "---" not in row} == {
        "oracle (ceiling)", "full_history (ceiling)", "bm25"
    }  # fmt: skip
    assert "(ceiling): reads the evidence labels" in markdown
    with Store.open(store_path, read_only=True) as store:
        by_name = {s.strategy: s for s in store.latest_per_configuration()}
    assert ceiling(by_name["oracle"]) == CEILINGS["oracle"] and ceiling(by_name["bm25"]) == ""


def test_site_sets_it_apart_with_the_ceilings(board):
    """On the site's leaderboard oracle sits in the ceilings' body beside full_history, badged with its reason,
    never among the memories ranked above; the chart draws it as a square."""
    _, site, _ = board
    (page,) = site.glob("leaderboard-*.html")  # the benchmark's leaderboard (index.html lists the benchmarks)
    index = parse(page)
    table = index.find("table", "leaderboard")
    memories, ceilings = table.find_all("tbody")

    def strategies(body):
        return {tr.find_all("td")[0].find("a").text() for tr in body.find_all("tr") if tr.find_all("td")}

    assert strategies(ceilings) == {"oracle", "full_history"} and strategies(memories) == {"bm25"}
    reasons = [d.find("span", "tip-text").text() for d in ceilings.find_all("details", "ceiling")]
    assert any("evidence labels" in reason for reason in reasons)
    labels = [t.text() for t in index.find_all("text")]
    assert "oracle (ceiling)" in labels


def test_gate_compares_it_only_with_itself(board):
    """The gate pairs each configuration with its own earlier run: oracle is never the bar another strategy
    must clear, nor a contender measured against one."""
    store_path, _, _ = board
    result = CliRunner().invoke(
        cli, ["gate", "--base", "a" * 40, "--head", "b" * 40, "--store", str(store_path), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["rows"]
    assert sorted(row["strategy"] for row in rows) == ["bm25", "full_history", "oracle"]
    assert all(row["base_config_key"] == row["config_key"] for row in rows)


# -- the hook: only a run that says it reads labels is told them ----------------------------------------


class Peeker:
    """A memory that would cheat if it were told the labels: it notes every call of read_labels."""

    name = "peeker"

    def __init__(self) -> None:
        self.told: list[tuple[tuple[int, ...], tuple[str, ...]]] = []

    def add(self, role, content, *, turn):
        pass

    def read_labels(self, evidence_turns, evidence_sessions):
        self.told.append((tuple(evidence_turns), tuple(evidence_sessions)))

    def retrieve(self, query, k):
        return []

    def context_for(self, query, k):
        return []

    def reset(self):
        pass


UNDECLARED = StrategySpec(name="peeker", build=lambda options, context: Peeker())
DECLARED = StrategySpec(name="declared_peeker", build=lambda options, context: Peeker(), reads_labels=True)
LIAR = StrategySpec(
    name="liar", build=lambda options, context: Registry().plan("no_memory", {}, context).build(), reads_labels=True
)


def test_a_strategy_that_does_not_declare_it_is_never_told(benchmark):
    """A read_labels method alone gets nothing: the hook is called only when the configuration says so."""
    _, corpus, expected = benchmark
    loaded = load_corpus(corpus)
    quiet = Peeker()
    play_corpus(loaded, quiet, configuration=Registry().plan("test_oracle:UNDECLARED", {}, BuildContext()).configuration)
    assert quiet.told == []
    told = Peeker()
    configuration = Registry().plan("test_oracle:DECLARED", {}, BuildContext()).configuration
    assert configuration[READS_LABELS] is True
    play_corpus(loaded, told, configuration=configuration)
    points = [t.test_at for c in loaded.conversations for t in c.turns if t.test_at is not None]
    assert told.told == [(tuple(p.evidence_turns), tuple(p.evidence_sessions)) for p in points]
    assert len(told.told) == len(expected)


def test_a_plugin_that_reads_labels_is_a_ceiling_too(benchmark, tmp_path):
    """A plug-in declaring reads_labels is marked a ceiling wherever oracle is, with the reason."""
    _, corpus, _ = benchmark
    with Store.open(tmp_path / "r.duckdb") as store:
        summary = store.get_run(
            store.append(evaluate(RunConfig(strategy="test_oracle:DECLARED", corpus=corpus)), provenance("a" * 40))
        ).summary
    assert ceiling(summary) == READS_LABELS_EXPLANATION


def test_a_declared_reader_without_the_method_is_refused(benchmark):
    """A spec that declares reads_labels for a strategy with no read_labels stops with one line naming both."""
    _, corpus, _ = benchmark
    with pytest.raises(EvalsError, match=r"strategy liar: its configuration says it reads labels .*no read_labels"):
        evaluate(RunConfig(strategy="test_oracle:LIAR", corpus=corpus))


# -- answers: the reader sees exactly the evidence -----------------------------------------------------


def test_with_answers_the_context_is_exactly_the_evidence(benchmark, tmp_path):
    """`evals run --runner oracle --with-answers` sends each question with exactly its evidence turns
    (cut at k) between the answer prompt and the question, and nothing for a question without evidence."""
    _, corpus, expected = benchmark
    k = 2
    with LLMServer() as server:
        args = ["run", "--runner", "oracle", "--corpus", str(corpus), "--k", str(k), "--store", str(tmp_path / "r.duckdb")]
        args += ["--repo", str(tmp_path), "--base-url", server.base_url, "--with-answers", "--judge"]
        result = CliRunner().invoke(cli, args, env={"OPENAI_API_KEY": "sk-unused", "EVALS_LLM_BACKOFF": "0.01"})
        assert result.exit_code == 0, result.output
        answers = [b for b in server.bodies if b["messages"][0]["content"] == prompt("answer")]
    by_question = {b["messages"][-1]["content"]: [m["content"] for m in b["messages"][1:-1]] for b in answers}
    assert by_question == {question: texts[:k] for question, texts in expected.items()}


# -- every executor ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_on_ray_it_stores_what_a_local_run_stores(benchmark, tmp_path):
    """Played as Ray tasks (a fresh oracle per conversation on a worker), each test point keeps the same records."""
    ray = pytest.importorskip("ray", reason="needs the ray extra: pip install -e '.[ray]'")
    from evals.run.executors import RayExecutor
    from evals.run.workflow import run_with_store

    _, corpus, expected = benchmark
    config = RunConfig(strategy="oracle", corpus=corpus, k=2)
    store_path = tmp_path / "r.duckdb"
    root = ROOT
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        remote = run_with_store(config, store_path, force=True, repo=root, executor=RayExecutor())
    finally:
        ray.shutdown()
    local = run_with_store(config, store_path, force=True, repo=root)
    with Store.open(store_path, read_only=True) as store:
        remote_run, local_run = store.get_run(remote.run_id).run, store.get_run(local.run_id).run
    records = {p.question: p.retrieved_records for c in remote_run.conversations for p in c.test_points}
    assert records == {question: texts[:2] for question, texts in expected.items()}
    assert [c.model_dump(exclude={"timings"}) for c in remote_run.conversations] == [
        c.model_dump(exclude={"timings"}) for c in local_run.conversations
    ]


def test_the_original_cli_runs_it_as_it_runs_every_registered_strategy(benchmark, tmp_path):
    """`python -m evals --runner oracle`: the original CLI takes any registered name (the contract fixes what its
    four runners do, not that others are refused), and its JSON's strategy block says the run read the labels."""
    from evals.cli import legacy_cli

    _, corpus, expected = benchmark
    output = tmp_path / "oracle.json"
    result = CliRunner().invoke(legacy_cli, ["--runner", "oracle", "--corpus", str(corpus), "--k", "2", "--output", str(output)])
    assert result.exit_code == 0, result.output
    document = json.loads(output.read_text())
    assert document["strategy"] == {"name": "oracle", READS_LABELS: True}
    records = {p["question"]: p["retrieved_records"] for c in document["conversations"] for p in c["test_points"]}
    assert records == {question: texts[:2] for question, texts in expected.items()}
