"""Plug-ins and option checks: what a hostile plug-in or a hostile option value does, each
refused in one line (or made harmless) with nothing stored.

One test per defect, named for what must hold; the last two are a broken entry-point plug-in, and a
plug-in call that never returns.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from helpers import FIXTURES
from helpers.cli import CORPUS_SMALL, evals, stored_store
from helpers.errors import one_line_error, usage_error
from helpers.plugins import dist_info
from helpers.stores import kept_as_failed, unchanged

EVIDENCE_CORPUS = FIXTURES / "evidence_corpus"
EVALS = Path(sys.executable).with_name("evals")


@pytest.fixture
def store(tmp_path) -> Path:
    """A store holding one genuine run (no_memory on corpus_small)."""
    return stored_store(tmp_path / "store")


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    """A folder on sys.path for plug-in modules: ``write(source)`` writes one and returns its import name;
    every module imported from the folder is forgotten afterwards."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)

    def write(source: str, name: str | None = None) -> str:
        name = name or f"plugin_{uuid.uuid4().hex[:12]}"
        (folder / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        importlib.invalidate_caches()
        return name

    write.folder = folder
    yield write
    forget(folder)


def forget(folder: Path) -> None:
    """Drops every module imported from ``folder`` from sys.modules, as a new process would not have them."""
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)  # a package's is its __init__.py
        if isinstance(file, str) and file.startswith(str(folder)):
            del sys.modules[name]


# -- any BaseException from a plug-in (but KeyboardInterrupt) is a plug-in fault -----------


BASE_EXCEPTIONS = {  # the plug-in, what `run` says, and what `check-strategy` says
    "GeneratorExit in retrieve": (
        "class S(Recency):\n    def retrieve(self, query, k=5):\n        raise GeneratorExit('closed')\n\n"
        "def make():\n    return S()\n",
        "retrieve(question, k=5) raised GeneratorExit: closed, at conversation '001_editor', turn 5",
        "FAIL  records are str or Record: raised GeneratorExit: closed",
    ),
    "own BaseException in add": (
        "class Mine(BaseException):\n    pass\n\nclass S(Recency):\n    def add(self, role, content, *, turn=None):\n"
        "        raise Mine('mine')\n\ndef make():\n    return S()\n",
        "add() raised Mine: mine, at conversation '001_editor', turn 0",
        "FAIL  records are str or Record: raised Mine: mine",
    ),
    "own BaseException in the factory": (
        "class Mine(BaseException):\n    pass\n\ndef make():\n    raise Mine('in the factory')\n",
        "could not be built: Mine: in the factory",
        "could not be built: Mine: in the factory",
    ),
}


@pytest.mark.parametrize("case", BASE_EXCEPTIONS)
def test_any_base_exception_from_a_plugin_is_a_fault(store, plugins, case):
    """GeneratorExit or a plug-in's own BaseException subclass is one line, exit 1, in `run`: raised during the
    play, the run is kept as a failed run (no figure); raised by the factory, nothing is stored (no run began).
    `check-strategy` reports it as failed checks (exit 1), never a traceback."""
    source, says, check_says = BASE_EXCEPTIONS[case]
    ref = plugins("from evals.strategies import Recency\n" + source) + ":make"
    in_play = "factory" not in case
    with kept_as_failed(store) if in_play else unchanged(store) as failed:
        line = one_line_error(evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store))
    assert line.startswith(f"Error: strategy {ref}") and says in line, line
    if in_play:
        (run_id, strategy, k, reason), = failed
        assert (strategy, k) == (ref, 5) and says in reason and line.endswith(f"(kept in the store as failed run {run_id})")
    checked = evals("check-strategy", ref)
    assert checked.exit_code == 1 and isinstance(checked.exception, SystemExit | None), (checked.output, checked.exception)
    assert check_says in checked.output, checked.output


def test_keyboard_interrupt_stays_the_users(store, plugins):
    """Ctrl-C raised inside a plug-in's call is still an interrupt (exit 130), not a plug-in fault."""
    ref = plugins("from evals.strategies import Recency\nclass S(Recency):\n    def retrieve(self, query, k=5):\n"
                  "        raise KeyboardInterrupt\n\ndef make():\n    return S()\n") + ":make"
    with unchanged(store):
        result = evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store)
    assert result.exit_code == 130 and "Interrupted." in result.output and "strategy" not in result.output


# -- a record whose turn is a bool ------------------------------------------------------


def test_a_record_whose_turn_is_a_bool_is_refused(store, plugins):
    """`Record(text, turn=True)` is a fault naming the turn (True is an int to Python, no turn number),
    not an ArrowTypeError at append; check-strategy fails its source-turn check."""
    ref = plugins("from evals.strategies import Record, Recency\nclass S(Recency):\n    def retrieve(self, query, k=5):\n"
                  "        return [Record('vim', True)]\n\ndef make():\n    return S()\n") + ":make"
    with kept_as_failed(store):
        line = one_line_error(evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store))
    assert line.startswith(
        f"Error: strategy {ref}: retrieve() returned a record naming source turn True, which is not an earlier turn"
    )
    checked = evals("check-strategy", ref)
    assert checked.exit_code == 1 and "FAIL  source turns are added turns: a Record names turn True" in checked.output


# -- digits other than ASCII ------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("run", "--runner", "no_memory", "--cutoffs", "²"), "Error: Invalid value for '--cutoffs': '²' in '²' is not a cutoff"),
        (
            ("run", "--runner", "no_memory", "--cutoffs", "1,٣"),
            "Error: Invalid value for '--cutoffs': '٣' in '1,٣' is not a cutoff",
        ),
        (("leaderboard", "--metric", "x@²"), "Error: unknown metric 'x@²'"),
        (("leaderboard", "--metric", "recall_any@²"), "Error: unknown metric 'recall_any@²'"),
        (("leaderboard", "--metric", "tokens_per_test_point@²"), "Error: unknown metric 'tokens_per_test_point@²'"),
        (("leaderboard", "--metric", "recall_any@٣"), "Error: unknown metric 'recall_any@٣'"),
        (
            ("run", "--runner", "no_memory", "--executor", "ray", "--ray-address", "127.0.0.1:²"),
            "Error: --ray-address 127.0.0.1:²: not HOST:PORT",
        ),
    ],
)
def test_digits_other_than_ascii_are_refused(store, args, says):
    """'²' passes str.isdigit() and then fails int(); '٣' is read as 3 by int(): both are refused in one
    line by the one ASCII-digit reader, before any work."""
    with unchanged(store):
        result = evals(*args, "--store", store, *(("--corpus", CORPUS_SMALL) if args[0] == "run" else ()))
    line = usage_error(result) if "--cutoffs" in args else one_line_error(result)
    assert line.startswith(says), line


def test_audit_labels_reads_a_conversation_position_in_ascii_digits(tmp_path):
    """`evals audit-labels --source` on a corpus whose conversation id starts `²_` is one line (no such
    position), not an int() traceback."""
    from evals.benchmarks.formats import import_corpus

    source = FIXTURES / "audit" / "locomo_planted.json"
    corpus = tmp_path / "planted"
    import_corpus("locomo", source, corpus)
    first = corpus / "000_conv-1.json"
    data = json.loads(first.read_text(encoding="utf-8"))
    data["id"] = "²_conv-1"
    (corpus / "²_conv-1.json").write_text(json.dumps(data), encoding="utf-8")
    first.unlink()
    line = one_line_error(evals("audit-labels", corpus, "--source", source))
    assert line == f"Error: {source}: [0] has no conversation 000_… in the corpus; give the file the corpus was imported from"


def test_whole_number_reads_ascii_digits_only():
    from evals.model.formatting import whole_number

    assert [whole_number(t) for t in ("0", "42", "007", "9" * 18)] == [0, 42, 7, int("9" * 18)]
    assert [whole_number(t) for t in ("", "²", "٣", "4\n", " 4", "-4", "+4", "4.0", "9" * 19)] == [None] * 9


# -- export timestamps are range-checked ------------------------------------------------


@pytest.mark.parametrize("timestamp", ["0001-01-01T00:00:00+14:00", "0001-01-01T00:00:00+00:00", "1969-12-31T23:59:59+00:00"])
def test_an_export_timestamp_out_of_range_is_refused(tmp_path, store, timestamp):
    """A run.timestamp before 1970 is refused naming the field (year 1 at +14:00 was an OverflowError)."""
    exported = tmp_path / "export.json"
    run_id = json.loads(evals("runs", "--store", store, "--format", "json").output)[0]["run_id"]
    assert evals("export", run_id, "--store", store, "--output", exported).exit_code == 0
    document = json.loads(exported.read_text(encoding="utf-8"))
    document["run"].update(timestamp=timestamp, run_id="0123456789ab")
    exported.write_text(json.dumps(document), encoding="utf-8")
    with unchanged(store):
        line = one_line_error(evals("import", exported, "--store", store))
    assert (
        line
        == f"Error: {exported}: not a valid evals export: "
        f"run.timestamp: {timestamp} is before 1970-01-01T00:00:00+00:00; no run was made then"
    )


# -- --ray-gpus takes finite values only --------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_ray_gpus_must_be_finite(store, value):
    """--ray-gpus nan (a traceback inside Ray with minilm, silently accepted with bm25) is refused up
    front, as the executor itself refuses it."""
    from evals.errors import EvalsError
    from evals.run.executors import make_executor

    with unchanged(store):
        line = usage_error(
            evals("run", "--runner", "bm25", "--corpus", CORPUS_SMALL, "--store", store, "--executor", "ray", "--ray-gpus", value)
        )
    assert line.startswith(f"Error: Invalid value for '--ray-gpus': {value} is not a finite number"), line
    with pytest.raises(EvalsError, match="--ray-gpus must be a finite number from 0 to 64"):
        make_executor("ray", gpus=float(value))


# -- gate's latency thresholds are finite -------------------------------------------------


@pytest.mark.parametrize("option", ["--latency-factor", "--latency-floor-ms"])
@pytest.mark.parametrize("value", ["nan", "inf"])
def test_gate_latency_thresholds_must_be_finite(store, option, value):
    """`evals gate --latency-factor nan` turned a x52 regression into "no change", exit 0: refused (exit 2), as --alpha is."""
    run_id = json.loads(evals("runs", "--store", store, "--format", "json").output)[0]["run_id"]
    line = usage_error(evals("gate", "--base", run_id, "--head", run_id, "--store", store, option, value))
    assert line == f"Error: Invalid value for '{option}': {value} is not a finite number."


# -- a leaderboard metric no run has -----------------------------------------------------


@pytest.fixture
def evidence_store(tmp_path) -> Path:
    """A store with one bm25 run on a corpus with evidence, measured at the default cutoffs."""
    path = tmp_path / "evidence.duckdb"
    assert evals("run", "--runner", "bm25", "--corpus", EVIDENCE_CORPUS, "--store", path).exit_code == 0
    return path


@pytest.mark.parametrize(
    ("metric", "says"),
    [
        (
            "recall_any@7",
            "Error: no run in the store has turn.recall_any@7; its runs were measured at cutoffs 1, 3, 5, 10, 25, 50",
        ),
        ("session.recall_all@7", "Error: no run in the store has session.recall_all@7"),
        ("answer_accuracy", "Error: no run in the store has answer_accuracy"),
        ("recall_any@0", "Error: metric 'recall_any@0': K is k or a cutoff from 1 to 10000"),
        ("recall_any@10001", "Error: metric 'recall_any@10001': K is k or a cutoff from 1 to 10000"),
        ("recall_any@" + "9" * 30, "Error: unknown metric 'recall_any@" + "9" * 30),
    ],
)
def test_leaderboard_metric_no_run_has_is_refused(evidence_store, metric, says):
    """Ranking by a metric no run was measured at (or an impossible cutoff) is refused, not dropped from
    the table with the rows silently ranked by tokens."""
    line = one_line_error(evals("leaderboard", "--store", evidence_store, "--metric", metric))
    assert line.startswith(says), line
    ranked = evals("leaderboard", "--store", evidence_store, "--metric", "recall_any@10")
    assert ranked.exit_code == 0 and "recall_any@10 (turn)" in ranked.output.splitlines()[0]


# -- an edited data file or helper module is not answered from the store ------------------


def test_an_edited_helper_module_is_computed_again(tmp_path, plugins, clean_repo):
    """A `module:factory` plug-in whose top-level helper module (beside it on the path, outside its
    package) is edited between two runs on a clean commit is computed again, not `cached:`."""
    helper = plugins("from evals.strategies import Recency as base\n")
    ref = plugins(f"from {helper} import base\n\ndef make():\n    return base()\n") + ":make"
    store = tmp_path / "s.duckdb"
    run = ("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store, "--repo", clean_repo)
    assert evals(*run).exit_code == 0
    assert evals(*run).output.startswith("cached: ")  # unchanged code: reused
    plugins("from evals.strategies import FullHistory as base  # the oracle now\n", name=helper)
    forget(plugins.folder)  # as a new process would import them
    again = evals(*run)
    assert again.exit_code == 0 and not again.output.startswith("cached: "), again.output
    assert "keyword hit@5 1.000" in again.output


def test_an_edited_package_data_file_is_computed_again(tmp_path, plugins, clean_repo):
    """A plug-in package whose data file (read by its factory) is edited is computed again, not `cached:`."""
    package = f"datapkg_{uuid.uuid4().hex[:12]}"
    root = plugins.folder / package
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "memory.py").write_text(
        "import json, pathlib\nfrom evals.strategies import FullHistory, Recency\n\ndef make():\n"
        "    settings = json.loads((pathlib.Path(__file__).parent / 'settings.json').read_text())\n"
        "    return FullHistory() if settings['oracle'] else Recency()\n"
    )
    (root / "settings.json").write_text('{"oracle": false}')
    importlib.invalidate_caches()
    store = tmp_path / "s.duckdb"
    run = ("run", "--runner", f"{package}.memory:make", "--corpus", CORPUS_SMALL, "--store", store, "--repo", clean_repo)
    assert evals(*run).exit_code == 0
    assert evals(*run).output.startswith("cached: ")
    (root / "settings.json").write_text('{"oracle": true}')
    forget(plugins.folder)
    again = evals(*run)
    assert again.exit_code == 0 and not again.output.startswith("cached: "), again.output
    assert "keyword hit@5 1.000" in again.output


def test_installed_libraries_are_named_by_version(tmp_path):
    """What a plug-in imports from site-packages is named by distribution and version (not digested file by
    file), the standard library by nothing. In a process of its own, where the plug-in's import is the first."""
    (tmp_path / "uses_a_library.py").write_text(
        "import mdurl  # noqa: F401\nimport json  # noqa: F401\nfrom evals.strategies import Recency\n\n"
        "def make():\n    return Recency()\n"
    )
    script = (
        "import json\nfrom evals.model.provenance import _used, strategy_code\nfrom evals.strategies import Registry\n"
        "spec = Registry().get('uses_a_library:make')\n"
        "print(json.dumps([spec.imported_with, _used('mdurl'), _used('json'), "
        "strategy_code(spec.source, spec.module, spec.imported_with) != strategy_code(spec.source, spec.module)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": str(tmp_path)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    imported, mdurl, stdlib, differs = json.loads(done.stdout)
    assert "mdurl" in imported and "json" not in imported and "evals" not in imported
    assert (mdurl, stdlib, differs) == (f"mdurl mdurl {importlib.metadata.version('mdurl')}", None, True)


# -- Mneme's flags: its options in `evals run`, the original's flags in `python -m evals` ---------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ("--runner", "mneme", "--backend", "sqlite"),
            "Error: evals run has no --backend: it is Mneme's option, --option backend=sqlite (`evals strategies` lists "
            "each strategy's options)",
        ),
        (
            ("--runner", "bm25", "--embedder", "minilm"),
            "Error: evals run has no --embedder: it is Mneme's option, --option embedder=minilm (`evals strategies` "
            "lists each strategy's options)",
        ),
    ],
)
def test_evals_run_refuses_the_mneme_flags_naming_the_option_that_replaced_them(store, args, says):
    """`evals run --backend/--embedder` is refused in one line naming the --option that replaced it; nothing runs."""
    with unchanged(store):
        assert one_line_error(evals("run", *args, "--corpus", CORPUS_SMALL, "--store", store)) == says


def test_an_option_of_a_strategy_that_has_none_of_that_name_is_refused(store):
    """`--option embedder=minilm` for a strategy without an embedder option is refused by its options, never dropped."""
    with unchanged(store):
        line = one_line_error(
            evals("run", "--runner", "full_history", "--option", "embedder=minilm", "--corpus", CORPUS_SMALL, "--store", store)
        )
    assert "embedder" in line


def test_the_original_cli_ignores_the_mneme_flags_for_other_runners(tmp_path):
    """`python -m evals --runner full_history --embedder openai` ignores the flag, as the original harness did
    (SPEC.md's compatibility contract): exit 0, the file written, and one note on stderr naming the ignored flag."""
    out = tmp_path / "out.json"
    done = subprocess.run(
        [sys.executable, "-m", "evals", "--runner", "full_history", "--embedder", "openai",
         "--corpus", str(CORPUS_SMALL), "--output", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == (
        "note: --embedder openai ignored, as the original harness did: strategy full_history has no such option\n"
    )
    assert out.exists()


# -- mem0 writes nothing in $HOME -----------------------------------------------------------


@pytest.mark.slow
def test_mem0_writes_nothing_in_home(tmp_path):
    """`--runner mem0` leaves $HOME as it was (mem0 would write ~/.mem0/config.json with a telemetry user
    id as it is imported), and its own folder goes with the process."""
    pytest.importorskip("mem0", reason="needs the mem0 extra: pip install -e '.[mem0]'")
    pytest.importorskip("faiss", reason="needs the mem0 extra: pip install -e '.[mem0]'")
    home, scratch = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "MEM0_DIR"} | {"HOME": str(home), "TMPDIR": str(scratch)}
    done = subprocess.run(
        [str(EVALS), "run", "--runner", "mem0", "--corpus", str(CORPUS_SMALL), "--store", str(tmp_path / "s.duckdb")],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert list(home.iterdir()) == []
    assert not list(scratch.glob("evals-mem0-*"))


# -- also seen: one broken entry-point plug-in ------------------------------------------------------


def test_a_broken_entry_point_plugin_does_not_hide_the_others(tmp_path, monkeypatch):
    """`evals strategies` (and `--names`, which tasks.py run reads) lists every strategy that loads and
    names the broken one in a warning on stderr, exit 0."""
    package = f"brokenpkg_{uuid.uuid4().hex[:12]}"
    site = tmp_path / "site"
    dist_info(site, package, "1.0", {package: f"{package}:make"})
    (site / f"{package}.py").write_text("raise ImportError('a dependency is missing')\n")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    for args in (("strategies", "--names"), ("strategies",)):
        result = evals(*args)
        assert result.exit_code == 0, result.output
        assert "full_history" in result.stdout and "bm25" in result.stdout and package not in result.stdout
        assert (
            result.stderr == f"warning: strategy {package} ({package} 1.0) failed to load: ImportError: a dependency is missing\n"
        )


# -- also seen: --call-timeout ----------------------------------------------------------------------


NEVER_RETURNS = {
    "a loop": "while True:\n            pass",
    "a blocking sleep": "import time\n        time.sleep(3600)",
}


@pytest.mark.parametrize("case", NEVER_RETURNS)
def test_call_timeout_stops_a_plugin_call_that_never_returns(tmp_path, store, case):
    """With --call-timeout 1, a retrieve() that loops forever (or sleeps for an hour) stops the run in one
    line naming the call, exit 1, and the run is kept as a failed run saying so. (Run in a process of its own:
    without the limit it hangs.)"""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "forever.py").write_text(
        "from evals.strategies import Recency\n\nclass S(Recency):\n    def retrieve(self, query, k=5):\n"
        f"        {NEVER_RETURNS[case]}\n\ndef make():\n    return S()\n"
    )
    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))}
    with kept_as_failed(store) as failed:
        done = subprocess.run(
            [str(EVALS), "run", "--runner", "forever:make", "--corpus", str(CORPUS_SMALL), "--store", str(store),
             "--call-timeout", "1"],
            capture_output=True, text=True, env=env, timeout=120,
        )  # fmt: skip
    assert done.returncode == 1 and done.stdout == "", (done.stdout, done.stderr)
    reason = (
        "strategy forever:make: retrieve(question, k=5) gave no result within --call-timeout 1 s "
        "(the call was stopped), at conversation '001_editor', turn 5"
    )
    assert failed[0][1:] == ("forever:make", 5, reason)
    assert done.stderr == f"Error: {reason} (kept in the store as failed run {failed[0][0]})\n"


def test_call_timeout_leaves_a_run_that_keeps_it_alone(tmp_path):
    """A run whose calls all return in time gives the same result with a limit as without, and no
    stop is left behind to surface later. The limit is far above any call here, also bm25's first
    ``retrieve`` (which imports bm25s, hundreds of ms on a busy machine), so the test does not
    depend on timing or on what ran before it."""
    from evals.model.corpus import load_corpus
    from evals.run.playthrough import play_corpus
    from evals.strategies.bm25 import BM25

    corpus = load_corpus(EVIDENCE_CORPUS)
    limited = play_corpus(corpus, BM25(), call_timeout=60)
    free = play_corpus(corpus, BM25())
    assert [p.retrieved_records for c in limited.conversations for p in c.test_points] == [
        p.retrieved_records for c in free.conversations for p in c.test_points
    ]
    import time

    time.sleep(0.2)  # a stray stop would be raised here


def test_call_timeout_in_another_thread_stops_a_loop():
    """Played in a thread other than the main one (no signals there), a looping call is stopped too."""
    import threading

    from evals.errors import EvalsError
    from evals.model.corpus import load_corpus
    from evals.run.playthrough import play_corpus
    from evals.strategies import Recency

    class Loop(Recency):
        def retrieve(self, query, k=5):
            while True:
                pass

    caught: list[BaseException] = []

    def play() -> None:
        try:
            play_corpus(load_corpus(CORPUS_SMALL), Loop(), call_timeout=0.3)
        except BaseException as exc:  # noqa: BLE001 - what the thread ended with, for the test to read
            caught.append(exc)

    thread = threading.Thread(target=play, daemon=True)
    thread.start()
    thread.join(30)
    assert not thread.is_alive()
    assert len(caught) == 1 and isinstance(caught[0], EvalsError)
    assert "retrieve(question, k=5) gave no result within --call-timeout 0.3 s" in str(caught[0])


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "86401"])
def test_call_timeout_must_be_a_finite_positive_number(store, value):
    with unchanged(store):
        line = usage_error(
            evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--call-timeout", value)
        )
    assert line.startswith("Error: Invalid value for '--call-timeout': ")
