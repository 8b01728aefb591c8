"""`python -m evals` writes byte for byte what an earlier version wrote, for every strategy."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import ROOT

from evals.cli import legacy_cli

ARCHIVE = ROOT / "tests" / "fixtures" / "legacy" / "outputs-44774b5.tar.gz"
# recency and random_k rank differently since they became prefix-stable (newest first; a shuffle seeded by the history),
# so every cutoff reads off one retrieval; their outputs since then are in this second archive.
RERANKED = ROOT / "tests" / "fixtures" / "legacy" / "rankings-prefix-stable.tar.gz"
# bm25 makes its words as bm25s's README does (a Snowball stemmer, English stop words) since its default followed
# the library's documentation; its outputs since then are in this third archive.
DOCUMENTED_WORDS = ROOT / "tests" / "fixtures" / "legacy" / "bm25-documented-words.tar.gz"
CORPORA = {"starter": "corpus", "golden": "tests/fixtures/golden"}
# Keys the starter corpus's evidence turns (added after these outputs were made) add to the document:
# additions the seed's format allows, which change none of its values.
EVIDENCE_POINT_KEYS = ("evidence_turns", "retrieved_turns", "ranked_turns", "ranked_sessions")
EVIDENCE_METRIC_KEYS = ("evidence_recall_at_k",)
EXTRA_ARGS = {"mneme-k10-seed7": ["--k", "10", "--seed", "7"], "random_k-k3-seed7": ["--k", "3", "--seed", "7"]}


def _members(path: Path) -> dict[str, bytes]:
    with tarfile.open(path) as archive:
        return {m.name: archive.extractfile(m).read() for m in archive.getmembers() if m.isfile()}


ORIGINAL = _members(ARCHIVE)
EXPECTED = ORIGINAL | _members(RERANKED) | _members(DOCUMENTED_WORDS)


@pytest.mark.parametrize("member", sorted(m for m in _members(RERANKED) if "recency" in m))
def test_recency_keeps_its_numbers_and_records(member: str):
    """Reranked newest first, recency retrieves the same records as before, with the original harness's
    numbers (recall and tokens; ranks and MRR follow the new order)."""
    before, after = json.loads(ORIGINAL[member]), json.loads(EXPECTED[member])
    for block in ("recall_at_k", "tokens"):
        assert before["metrics"][block] == after["metrics"][block]
    points = [
        (sorted(a["retrieved_records"]), sorted(b["retrieved_records"]))
        for ca, cb in zip(before["conversations"], after["conversations"], strict=True)
        for a, b in zip(ca["test_points"], cb["test_points"], strict=True)
    ]
    assert all(a == b for a, b in points)


@pytest.mark.parametrize("member", sorted(EXPECTED))
def test_output_is_byte_identical(member: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The same command today writes the same bytes (golden file from commit 44774b5)."""
    folder, name = member.split("/")
    stem = name.removesuffix(".json")
    runner = stem.split("-")[0]
    out = tmp_path / name
    # The document records --corpus as given, so give it as the golden run did. The starter corpus
    # gained evidence turns since; the archive's input is that corpus without them.
    monkeypatch.chdir(_without_evidence(tmp_path) if folder == "starter" else ROOT)
    args = ["--runner", runner, "--corpus", CORPORA[folder], "--output", str(out), *EXTRA_ARGS.get(stem, [])]
    result = CliRunner().invoke(legacy_cli, args)
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == EXPECTED[member]


def _without_evidence(tmp_path: Path) -> Path:
    """A folder holding ``corpus/``: the starter corpus as the archive's commit had it, without evidence turns."""
    (tmp_path / "corpus").mkdir()
    for source in sorted((ROOT / "corpus").glob("*.json")):
        document = json.loads(source.read_text(encoding="utf-8"))
        for turn in document["turns"]:
            turn.get("test_at", {}).pop("evidence_turns", None)
        (tmp_path / "corpus" / source.name).write_text(json.dumps(document), encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("member", sorted(m for m in EXPECTED if m.startswith("starter/") and "-" not in m))
def test_evidence_turns_only_add_keys(member: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """On the starter corpus as it is, with its evidence turns, the document is the archived one plus
    the evidence keys: no value of the original format changes."""
    runner = member.split("/")[1].removesuffix(".json")
    out = tmp_path / "out.json"
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(legacy_cli, ["--runner", runner, "--corpus", "corpus", "--output", str(out)])
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_bytes())
    added = [document["metrics"].pop(key) for key in EVIDENCE_METRIC_KEYS]
    points = [p for c in document["conversations"] for p in c["test_points"]]
    assert all(p.pop("evidence_turns") for p in points) and added
    for point in points:
        for key in EVIDENCE_POINT_KEYS[1:]:
            point.pop(key, None)
    assert document == json.loads(EXPECTED[member])
