"""BEAM: a stand-in tree of the pinned repository, fetched through a local HTTP server and imported.

The stand-in is made here, small, with BEAM's layout (``chats/100K/<n>/chat.json``, ``chat_trunecated.json``
beside it in one folder, ``probing_questions/probing_questions.json``) and every shape ``source_chat_ids``
takes in the published files: a list, a dict of lists, lists nested in a list, an empty list, none (the
abstention questions), an id that names no message and an entry that is no id.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.benchmark_server import BenchmarkServer
from helpers.protocol_sources import served

from evals.benchmarks import BENCHMARKS
from evals.benchmarks.beam import ABILITIES, COMMIT, REPOSITORY
from evals.benchmarks.beam.importer import evidence_ids, import_beam
from evals.benchmarks.formats import import_corpus
from evals.cli import cli
from evals.model.corpus import load_corpus

PREFIX = f"{REPOSITORY}/{COMMIT}"


def chat(messages: int, anchor_at: int | None = None, batch: int = 4) -> list[dict]:
    """A BEAM chat: batches of turns of (user, assistant) messages with ids 0..messages-1."""
    batches, turn = [], []
    for i in range(messages):
        message = {"role": "user" if i % 2 == 0 else "assistant", "id": i, "content": f"message {i} about topic {i // 2}"}
        if i == anchor_at:
            message["time_anchor"] = "March-15-2024"
        turn.append(message)
        if len(turn) == 2:
            if not batches or len(batches[-1]["turns"]) == batch:
                batches.append({"batch_number": len(batches) + 1, "time_anchor": None, "turns": []})
            batches[-1]["turns"].append(turn)
            turn = []
    return batches


def questions() -> dict[str, list[dict]]:
    """One question per ability, each with another shape of source_chat_ids."""
    return {
        "abstention": [{"question": "What is my dog's name?", "ideal_response": "there is no information"}],
        "contradiction_resolution": [
            {"question": "Did I use Flask?", "ideal_answer": "contradictory",
             "source_chat_ids": {"first_statement": [2], "second_statement": [6]}}
        ],
        "event_ordering": [{"question": "In what order?", "answer": "topic 1, topic 4", "source_chat_ids": [[2, 3], [8], 10]}],
        "information_extraction": [{"question": "What is topic 2?", "answer": "topic 2", "source_chat_ids": [4]}],
        "instruction_following": [{"question": "Show code", "expected_compliance": "highlighted", "source_chat_ids": [0, 999]}],
        "knowledge_update": [
            {"question": "How fast now?", "answer": "250ms", "source_chat_ids": {"original_info": [], "updated_info": [10]}}
        ],
        "multi_session_reasoning": [{"question": "How many?", "answer": "two", "source_chat_ids": [[12], ["--"]]}],
        "preference_following": [{"question": "Which library?", "expected_compliance": "a light one", "source_chat_ids": []}],
        "summarization": [{"question": "Summarise", "ideal_summary": "all topics", "source_chat_ids": [4, 5, 4]}],
        "temporal_reasoning": [
            {"question": "How long?", "answer": "8 weeks", "source_chat_ids": {"first_event": [0], "second_event": [14]}}
        ],
    }


def tree() -> dict[str, bytes]:
    """Relative path (under the repository at the commit) -> bytes: two conversations of the 100K tier."""
    files = {}
    # Conversation 1 has a truncated chat beside the whole one: BEAM reads the truncated one.
    files["chats/100K/1/chat.json"] = json.dumps(chat(40)).encode()
    files["chats/100K/1/chat_trunecated.json"] = json.dumps(chat(16, anchor_at=0)).encode()
    files["chats/100K/1/probing_questions/probing_questions.json"] = json.dumps(questions()).encode()
    files["chats/100K/2/chat.json"] = json.dumps(chat(20)).encode()
    files["chats/100K/2/probing_questions/probing_questions.json"] = json.dumps(questions()).encode()
    return files


def write(root: Path, files: dict[str, bytes]) -> Path:
    for path, body in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(body)
    return root / "chats" / "100K"


def git_blob(body: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(body) + body, usedforsecurity=False).hexdigest()


@pytest.fixture
def server() -> Iterator[BenchmarkServer]:
    with BenchmarkServer() as running:
        yield running


@pytest.fixture
def fetched(tmp_path, monkeypatch, server) -> Path:
    """beam_100k pinned to the stand-in tree (one file by git blob id alone), served at OWNER/REPO/COMMIT/PATH and
    fetched with `evals fetch`; the imported corpus's folder."""
    files = tree()
    read = {p: b for p, b in files.items() if not p.endswith("1/chat.json")}  # what BEAM reads: not 1/chat.json
    entry = BENCHMARKS["beam_100k"]
    template = entry.tree[0]
    pinned = []
    for path, body in read.items():
        by_blob = path.endswith("2/chat.json")
        pinned.append(
            replace(
                template,
                name=f"{PREFIX}/{path}",
                url=f"https://raw.githubusercontent.com/{PREFIX}/{path}",
                sha256=None if by_blob else hashlib.sha256(body).hexdigest(),
                size=None if by_blob else len(body),
                git_blob=git_blob(body),
            )
        )
    sources, bodies = served("beam", entry.sources)  # what --protocol beam reads, fetched beside the tree
    monkeypatch.setitem(BENCHMARKS, "beam_100k", replace(entry, tree=tuple(pinned), sources=sources))
    server.files.update({f"{PREFIX}/{path}": body for path, body in files.items()} | bodies)
    lock = tmp_path / "repo" / "benchmarks.lock"
    lock.parent.mkdir()
    env = {"EVALS_MIRROR": server.mirror(), "EVALS_DOWNLOADS": str(tmp_path / "downloads"), "EVALS_BENCHMARKS_LOCK": str(lock)}
    result = CliRunner().invoke(cli, ["fetch", "beam_100k"], env=env)
    assert result.exit_code == 0, result.output
    return tmp_path / "downloads" / "corpora" / "beam_100k"


def points(corpus: Path, conversation: int = 0) -> dict[str, object]:
    """The test points of one conversation, by category."""
    loaded = load_corpus(corpus)
    return {point.category: point for _, point in loaded.conversations[conversation].test_points()}


def test_fetch_asks_the_mirror_for_repository_paths_only(fetched, server):
    """Every request names OWNER/REPO/COMMIT/PATH: BEAM's file names repeat, so none is asked for by bare name;
    the protocol's sources (src/...) are fetched beside the tier's chats."""
    assert server.requests and all(r.startswith((f"/ok/{PREFIX}/chats/100K/", f"/ok/{PREFIX}/src/")) for r in server.requests)
    assert {r for r in server.requests if "/src/" in r} == {f"/ok/{PREFIX}/{s.path}" for s in BENCHMARKS["beam_100k"].sources}


def test_the_truncated_chat_is_read_where_present(fetched):
    """Conversation 1's history is chat_trunecated.json's 16 messages, as BEAM's answer generation reads it."""
    conversation = load_corpus(fetched).conversations[0]
    assert sum(turn.record for turn in conversation.turns) == 16


def test_a_file_pinned_by_git_blob_is_locked_by_size_and_digest(fetched, tmp_path):
    """The file pinned by its git blob id alone gets its size and SHA-256 recorded in the lock."""
    lock = json.loads((tmp_path / "repo" / "benchmarks.lock").read_text())["files"]
    (recorded,) = [e for url, e in lock.items() if url.endswith("chats/100K/2/chat.json")]
    assert recorded["size"] == len(tree()["chats/100K/2/chat.json"])


def test_evidence_from_a_list(fetched):
    """A list of ids: each names the turn of that message id."""
    assert points(fetched)["information_extraction"].evidence_turns == [4]


def test_evidence_from_a_dict_of_lists(fetched):
    """A dict of lists: the ids of every list, an empty one included."""
    found = points(fetched)
    assert found["contradiction_resolution"].evidence_turns == [2, 6]
    assert found["knowledge_update"].evidence_turns == [10]
    assert found["temporal_reasoning"].evidence_turns == [0, 14]


def test_evidence_from_nested_lists(fetched):
    """Lists nested in a list, ids beside lists: every id found."""
    assert points(fetched)["event_ordering"].evidence_turns == [2, 3, 8, 10]


def test_repeated_ids_are_one_evidence_turn(fetched):
    """An id written twice is one evidence turn."""
    assert points(fetched)["summarization"].evidence_turns == [4, 5]


def test_dangling_ids_are_left_out_and_shown(fetched):
    """An id naming no message (999) and an entry that is no id ("--") are not evidence, and the description counts them."""
    found = points(fetched)
    assert found["instruction_following"].evidence_turns == [0] and found["multi_session_reasoning"].evidence_turns == [12]
    assert "2 evidence ids name no message" in load_corpus(fetched).conversations[0].description


def test_ids_beyond_a_truncated_chat_dangle(fetched):
    """Conversation 2 has 20 messages: its id 999 dangles, and so does none other than "--"."""
    assert "2 evidence ids name no message" in load_corpus(fetched).conversations[1].description


def test_abstention_is_unanswerable_and_without_evidence(fetched):
    """Abstention questions are unanswerable and name no evidence; the others are answerable."""
    found = points(fetched)
    assert not found["abstention"].answerable and found["abstention"].evidence_turns == []
    assert all(point.answerable for category, point in found.items() if category != "abstention")


def test_the_ten_abilities_are_the_categories(fetched):
    """Each question's category is its ability, the key of probing_questions.json."""
    assert set(points(fetched)) == set(ABILITIES)


def test_turns_keep_time_anchors_and_batches(fetched):
    """A message's time anchor is its turn's date, its batch its session."""
    turns = load_corpus(fetched).conversations[0].turns
    assert turns[0].date == "March-15-2024" and turns[1].date is None
    assert turns[0].session == "batch 1" and turns[8].session == "batch 2"


def test_the_corpus_declares_beam(fetched):
    """benchmark.json names the beam unit, so its runs are judged by BEAM's rule."""
    assert load_corpus(fetched).benchmark == "beam"


def test_the_import_counts_questions_evidence_and_dangling_per_ability(tmp_path):
    """The report counts, per ability, the questions, those with evidence, and the dangling ids."""
    report = import_beam(write(tmp_path / "src", tree()), tmp_path / "out")
    assert report.counts.questions["abstention"] == 2 and report.counts.with_evidence["abstention"] == 0
    assert report.counts.with_evidence["preference_following"] == 0
    assert report.counts.dangling == {**dict.fromkeys(ABILITIES, 0), "instruction_following": 2, "multi_session_reasoning": 2}


def test_the_10m_plans_are_read_in_order_and_resolved_by_position(tmp_path):
    """A 10M chat (plans of batches, ids from 0 in each plan) reads plan by plan; ids resolve by position."""
    plans = [{"plan-0": chat(8)}, {"plan-1": chat(8)}]
    folder = tmp_path / "src" / "chats" / "10M" / "1"
    folder.mkdir(parents=True)
    (folder / "chat_trunecated.json").write_text(json.dumps(plans))
    (folder / "probing_questions").mkdir()
    (folder / "probing_questions" / "probing_questions.json").write_text(
        json.dumps({"information_extraction": [{"question": "q", "answer": "topic 5", "source_chat_ids": [11]}]})
    )
    report = import_corpus("beam", folder.parent, tmp_path / "out")
    conversation = load_corpus(tmp_path / "out").conversations[0]
    (_, point), = conversation.test_points()
    assert point.evidence_turns == [11] and conversation.turns[11].session == "plan-1 batch 1"
    assert report.counts.by_position == 1


def test_evidence_ids_read_every_shape():
    """evidence_ids: lists, dicts and nesting, in order written, each once; what is no id set apart."""
    assert evidence_ids({"a": [3, [1]], "b": [3, "--", None]}) == ([3, 1], ["--"])


def test_a_folder_without_conversations_is_one_line_naming_it(tmp_path):
    """`evals import-corpus beam` of a folder with no numbered conversation folder: one line naming it."""
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(cli, ["import-corpus", "beam", str(tmp_path / "empty"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1 and "empty" in result.output and "numbered conversation" in result.output
    assert not (tmp_path / "out").exists()


def test_the_four_tiers_are_pinned_at_the_commit():
    """beam_100k … beam_10m: importable, every file at OWNER/REPO/COMMIT/PATH, by size and SHA-256 or by git blob id."""
    for tier in ("100k", "500k", "1m", "10m"):
        release = BENCHMARKS[f"beam_{tier}"]
        assert release.importer == "beam" and release.tree
        for file in release.tree:
            assert file.name.startswith(f"{PREFIX}/chats/") and file.url == f"https://raw.githubusercontent.com/{file.name}"
            assert (file.size is not None and len(file.sha256) == 64) or len(file.git_blob) == 40
    assert all(f.sha256 is not None for f in BENCHMARKS["beam_100k"].tree + BENCHMARKS["beam_500k"].tree)
