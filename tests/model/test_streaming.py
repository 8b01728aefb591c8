"""Memory that does not grow with the input: files read as they are used, a benchmark
imported one question at a time, a memory limit reported in one line.

The figures at full size come from bench/bench_memory_s.py; these check the behaviour
on small files, in child processes whose own peak RSS (``os.wait4``) is compared.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT
from helpers.corpora import generated_longmemeval

from evals.benchmarks.formats import ImportFormatError, import_corpus
from evals.io import jsonfile

FIXTURES = ROOT / "tests" / "fixtures" / "importers"
sys.path.insert(0, str(ROOT / "bench"))
from gen_longmemeval import generate  # noqa: E402


def evals_child(*args: str, memory_limit: int | None = None) -> tuple[int, str, int]:
    """``python -m evals ARGS`` in a child process: (exit code, stdout + stderr, peak RSS in KiB)."""

    def limit() -> None:
        if memory_limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

    with subprocess.Popen(
        [sys.executable, "-m", "evals", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        preexec_fn=limit,
        cwd=ROOT,
    ) as child:
        output = child.stdout.read().decode()
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, output, usage.ru_maxrss


def import_peak(source: Path, out: Path) -> int:
    code, output, peak = evals_child("import-corpus", "longmemeval", str(source), "--out", str(out))
    assert code == 0, output
    return peak


# -- reads ask for what the file holds; a memory limit is one line --------------------------------

LIMIT = 3 * 1024**3  # far below the 16 GiB a benchmark file may hold, far above what these need


@pytest.mark.slow
def test_an_import_under_a_memory_limit_asks_for_no_more_than_the_file(tmp_path):
    """Under ``ulimit -v`` (3 GiB) a small import succeeds: no read reserves the 16 GiB size limit."""
    source = tmp_path / "lme.json"
    generate(source, 2, shape="s")
    code, output, _ = evals_child("import-corpus", "longmemeval", str(source), "--out", str(tmp_path / "out"), memory_limit=LIMIT)
    assert code == 0, output
    assert "2 conversations" in output


def test_read_bytes_reads_what_the_file_holds(tmp_path):
    path = tmp_path / "f.json"
    for size in (0, 5, jsonfile.SMALL + 3):
        path.write_bytes(b"x" * size)
        assert bytes(jsonfile.read_bytes(path, 10**12)) == b"x" * size
    with pytest.raises(jsonfile.JSONFileError, match=r"f.json: \d+ bytes; files over 10 bytes are not read"):
        jsonfile.read_bytes(path, 10)


def sparse(path: Path, size: int) -> Path:
    """A file of ``size`` zero bytes that takes no room on disk."""
    with path.open("wb") as file:
        file.truncate(size)
    return path


@pytest.mark.parametrize("command", ["validate", "import-corpus"])
def test_a_memory_limit_is_one_line(tmp_path, command):
    """A file that cannot fit under the memory limit: one line naming the file, exit 1, no traceback."""
    if command == "validate":
        folder = tmp_path / "corpus"
        folder.mkdir()
        big = sparse(folder / "big.json", 500 * 1024**2)  # under the 512 MiB a corpus file may have
        args = ["validate", str(folder)]
    else:
        big = sparse(tmp_path / "big.json", 1024**3)
        args = ["import-corpus", "longmemeval", str(big), "--out", str(tmp_path / "out")]
    code, output, _ = evals_child(*args, memory_limit=700 * 1024**2)
    assert code == 1, output
    assert "Traceback" not in output and "MemoryError" not in output
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    assert str(big) in lines[0] and "out of memory" in lines[0], lines[0]


# -- the top-level array, one element at a time ---------------------------------------------------


def whole(text: str) -> tuple[str, object]:
    try:
        return "value", jsonfile.parse(text.encode(), "f.json")
    except jsonfile.JSONFileError as exc:
        return "error", str(exc)


def streamed(text: str, chunk: int) -> tuple[str, object]:
    try:
        reader = jsonfile.ArrayReader(io.BytesIO(text.encode()), "f.json", 10**9, chunk=chunk)
        return "value", list(reader.elements()) if reader.is_array else reader.whole()
    except jsonfile.JSONFileError as exc:
        return "error", str(exc)


CASES = [
    "[]", " [ ] ", '[1, 2 , "a]b" ,{"x":[1,{"y":"\\"]"}]}]', "[{", "[", "[1,]", "[,1]", "[1 2]", "[1] x", "\ufeff[1]",
    '[{"a":1,"a":2}]', '[1,{"a":{"b":1,"b":2}}]', '["\\ud800"]', "[NaN]", "[1e999]", "[tru]", "[-]",
    "[" + "[" * 63 + "]" * 63 + "]", "[" + "[" * 64 + "]" * 64 + "]", "[123456789012345678901234]",
    '[\n {"q": "\u00e9\U0001f600", "n": 123},\n {"q": [1,\n2,\n 3}\n]', "", "   ", '{"a": 1}', '[1,\n2,\n"abc',
]  # fmt: skip


def test_array_elements_read_as_a_whole_file_parse_reads_them():
    """Element by element, in pieces as small as one byte: the same values, and for a bad file the
    same one-line error (line, column, JSON path) as parsing the whole file."""
    rng = random.Random(26)
    cases = list(CASES)
    alphabet = '[]{},:" \n\\truefalsn-.eE019\u00e9\U0001f600'
    cases += ["[" + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(1500)]
    for text in cases:
        expected = whole(text)
        for chunk in (1, 3, 1 << 20):
            assert streamed(text, chunk) == expected, (text, chunk)


def test_bytes_that_are_not_utf8_are_located_in_the_file():
    data = b'[{"a": "ok"},\n {"b": "\xff"}]'
    expected = "f.json: not UTF-8 text (invalid start byte at byte 22)"
    for chunk in (1, 4, 1 << 20):
        with pytest.raises(jsonfile.JSONFileError) as info:
            list(jsonfile.ArrayReader(io.BytesIO(data), "f.json", 10**9, chunk=chunk).elements())
        assert str(info.value) == expected
    with pytest.raises(jsonfile.JSONFileError, match=r"invalid start byte at byte 22\)$"):
        jsonfile.parse(data, "f.json")


# -- streamed imports: the same files as before, in bounded memory -----------------------------------

# sha256 of every file the import on main (before streaming) wrote, for these inputs.
GOLDEN = {
    "lme.json": {
        "000_q00000.json": "0d61687e9d09435ae26b07a4dd2159e4fa3477e73708a9b099776a367d255269",
        "001_q00001.json": "e3284158011095ec7bca291e07fbf4a339ffe68a67e2fdbf66576e2790c41a78",
        "002_q00002.json": "0facdbb42c23cb2ec81844f16657177c861d4b654e0fbad47458bf86727a3fc8",
        "benchmark.json": "98f66f3742c9882295f98a381d712588562c66915bb5d4e9201570d0e770ae3c",
        "references.json": "05810ec1664a6cecd368facfe0d3e92355be5cb9d09665ded2ab0da16a80273c",
    },
    "lme_unicode.json": {
        "000_q00000.json": "a87d449aef84c3eeaaddd49e9ebdcd02a68acd072fc85e2b447b65137fd29cac",
        "001_q00001.json": "c7451d2c4cb50172233e7fd825bf3c339af15bf1de3743f88d209b16d00b1e3f",
        "002_q00002.json": "0facdbb42c23cb2ec81844f16657177c861d4b654e0fbad47458bf86727a3fc8",
        "benchmark.json": "98f66f3742c9882295f98a381d712588562c66915bb5d4e9201570d0e770ae3c",
        "references.json": "05810ec1664a6cecd368facfe0d3e92355be5cb9d09665ded2ab0da16a80273c",
    },
}


def lme_inputs(folder: Path) -> dict[str, Path]:
    """A 3-question LongMemEval-shaped file, and the same with non-ASCII text (accents, an emoji, CJK,
    escaped quotes) in a turn and a question, indented."""
    plain = folder / "lme.json"
    generate(plain, 3, shape="s", seed=0)
    data = json.loads(plain.read_text())
    turn = data[0]["haystack_sessions"][0][0]
    turn["content"] = 'Caf\u00e9 \u2014 \U0001f600 \u65e5\u672c\u8a9e \\"quoted\\" ' + turn["content"]
    data[1]["question"] = "O\u00f9 est le code \U0001f511 ?"
    unicode = folder / "lme_unicode.json"
    unicode.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return {"lme.json": plain, "lme_unicode.json": unicode}


def test_streamed_import_writes_the_files_the_whole_file_import_wrote(tmp_path):
    """Byte for byte the corpus the import on main wrote (so every run on it, and every stored
    result, is the same point for point); its benchmark.json as then, but for the file it says it came from."""
    for name, source in lme_inputs(tmp_path).items():
        out = tmp_path / f"out_{source.stem}"
        import_corpus("longmemeval", source, out)
        declared = json.loads((out / "benchmark.json").read_text(encoding="utf-8"))
        assert declared.pop("imported_from") == source.name
        (out / "benchmark.json").write_text(json.dumps(declared) + "\n", encoding="utf-8")
        written = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir())}
        assert written == GOLDEN[name], name


@pytest.mark.slow
def test_import_peak_does_not_grow_with_the_questions(tmp_path):
    """16 questions peak within a few MiB of 2 (on main: +26 MiB, the file held three times over)."""
    small, large = tmp_path / "q2.json", tmp_path / "q16.json"
    generate(small, 2, shape="s")
    generate(large, 16, shape="s")
    import_peak(small, tmp_path / "warm")  # the first child pays for cold caches
    grown = import_peak(large, tmp_path / "o16") - import_peak(small, tmp_path / "o2")
    assert grown < 8 * 1024, f"{grown} KiB more for 16 questions than for 2"


@pytest.mark.slow
def test_non_ascii_text_changes_the_import_peak_by_a_constant(tmp_path):
    """One emoji in the first question: on main the whole file's text became 4 bytes a character."""
    plain = tmp_path / "plain.json"
    generate(plain, 16, shape="s")
    data = plain.read_text()
    emoji = tmp_path / "emoji.json"
    emoji.write_text(data.replace('"content": "', '"content": "\U0001f600 ', 1), encoding="utf-8")
    import_peak(plain, tmp_path / "warm")
    grown = import_peak(emoji, tmp_path / "oe") - import_peak(plain, tmp_path / "op")
    assert grown < 6 * 1024, f"{grown} KiB more with one emoji"


def test_duplicate_haystack_session_ids_are_refused(tmp_path):
    """Two sessions under one id would be merged by every session-level metric."""
    data = json.loads((FIXTURES / "longmemeval_small.json").read_text())
    ids = data[0]["haystack_session_ids"]
    assert len(ids) >= 2
    ids[-1] = ids[0]
    source = tmp_path / "dup.json"
    source.write_text(json.dumps(data))
    with pytest.raises(ImportFormatError) as info:
        import_corpus("longmemeval", source, tmp_path / "out")
    assert str(info.value) == (
        f"{source}: [0].haystack_session_ids[{len(ids) - 1}]: session id {ids[0]!r} appears twice (also at [0]); "
        "each session needs its own id"
    )
    assert not (tmp_path / "out").exists()


# -- a run reads a big corpus one conversation at a time -------------------------------------------


def test_a_corpus_over_the_held_size_is_read_as_walked(tmp_path, monkeypatch):
    """Over HELD_BYTES a corpus is read from its files as it is walked: same conversations, same digest."""
    from evals.model import corpus as corpus_module
    from evals.model.corpus import corpus_digest, load_corpus

    folder = generated_longmemeval(tmp_path)
    held = load_corpus(folder)
    assert held.conversations.held
    monkeypatch.setattr(corpus_module, "HELD_BYTES", 0)
    walked = load_corpus(folder)
    assert not walked.conversations.held
    assert walked.digest == held.digest == corpus_digest(list(held.conversations), held.benchmark)
    assert walked.conversations == list(held.conversations)
    assert [c.id for c in walked.conversations[1:]] == [c.id for c in held.conversations[1:]]
    assert walked.conversations[-1] == held.conversations[-1]


def test_a_file_changed_after_the_check_is_refused(tmp_path, monkeypatch):
    """A conversation read again must be the bytes checked at the start: an edit meanwhile is one line."""
    from evals.model import corpus as corpus_module
    from evals.model.corpus import CorpusError, load_corpus

    monkeypatch.setattr(corpus_module, "HELD_BYTES", 0)
    folder = generated_longmemeval(tmp_path)
    corpus = load_corpus(folder)
    path = folder / "001_q00001.json"
    path.write_text(path.read_text().replace("Earlier", "Later", 1) + " ")
    with pytest.raises(CorpusError) as info:
        list(corpus.conversations)
    assert (
        str(info.value) == f"invalid corpus: {path}: changed since the corpus was checked; run again on a corpus that stays put"
    )


@pytest.mark.parametrize("strategy", ["full_history", "summary_buffer", "bm25"])
@pytest.mark.slow
def test_a_run_read_as_walked_stores_what_a_held_run_stores(tmp_path, monkeypatch, strategy):
    """The same run, its corpus held or read as walked: the same document and the same stored rows."""
    from click.testing import CliRunner

    from evals.cli import cli
    from evals.model import corpus as corpus_module
    from evals.store import Store

    folder = generated_longmemeval(tmp_path)
    outputs = []
    for held in (True, False):
        monkeypatch.setattr(corpus_module, "HELD_BYTES", 64 * 1024**2 if held else 0)
        store, output = tmp_path / f"s{held}.duckdb", tmp_path / f"o{held}.json"
        result = CliRunner().invoke(
            cli,
            ["run", "--runner", strategy, "--corpus", str(folder), "--store", str(store), "--output", str(output), "--no-cache"],
        )
        assert result.exit_code == 0, result.output
        with Store.open(store, read_only=True) as opened:
            (run_id,) = [row.run_id for row in opened.runs()]
            stored = opened.get_run(run_id)
        document = json.loads(output.read_text())
        outputs.append((without_times(document), stored.run.conversations, stored.scores.points))
    assert outputs[0] == outputs[1]


def without_times(document: dict) -> dict:
    """The document but what differs between any two runs (wall-clock latency, durations)."""
    import copy

    document = copy.deepcopy(document)

    def drop(node):
        if isinstance(node, dict):
            for key in [k for k in node if "latency" in k or k.endswith("_s") or k in ("started_at", "duration")]:
                del node[key]
            for value in node.values():
                drop(value)
        elif isinstance(node, list):
            for value in node:
                drop(value)

    drop(document)
    return document
