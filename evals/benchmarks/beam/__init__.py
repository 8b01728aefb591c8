"""BEAM, "Beyond a Million Tokens" (Tavakoli et al. 2025, mohammadtavakoli78/BEAM): the unit.

Four releases, one per tier (``beam_100k``, ``beam_500k``, ``beam_1m``, ``beam_10m``), each a tree of files
of the repository at commit :data:`COMMIT`, every one pinned (``pins.tsv``, package data): the chat BEAM's answer
generation reads and the probing questions of each conversation. They are fetched from
``raw.githubusercontent.com/mohammadtavakoli78/BEAM/<commit>/<path>``, or through ``$EVALS_MIRROR`` at
``mohammadtavakoli78/BEAM/<commit>/<path>`` (never by bare name: every folder has a ``chat.json``).

Its importer is :mod:`.importer`; its ten abilities are the categories; its headline is the harness's
own turn-level recall_any@k over the questions that name evidence (BEAM publishes no retrieval figure,
only judged answers), with a figure and interval per ability on the run page. Its protocol (``--protocol beam``,
:mod:`.protocol`) answers and grades as BEAM's code does, reading :data:`SOURCES`.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from evals.benchmarks.kit import RAW_GITHUB, Benchmark, ProtocolSpec, RemoteFile, Rule, SourceFile, Unit, claims_in

if TYPE_CHECKING:
    from evals.benchmarks.kit import ImportReport

__all__ = ["ABILITIES", "COMMIT", "PINS", "REPOSITORY", "RULE", "SOURCES", "TIERS", "UNIT"]

REPOSITORY = "mohammadtavakoli78/BEAM"
COMMIT = "b2a3ee8ba12d68f83143dda191097dc3e028ddd3"
TIERS = ("100K", "500K", "1M", "10M")
JUDGE = "gpt-4.1-mini"  # BEAM's src/llm.py (gpt_llm), temperature 0
# What `--protocol beam` reads (:mod:`.protocol`): the answer and judge prompts, the metrics (event ordering's
# threshold) and the report that averages them; digests computed from the repository at COMMIT.
SOURCES = tuple(
    SourceFile(REPOSITORY, COMMIT, path, sha256)
    for path, sha256 in (
        ("src/prompts.py", "2f630cc983ab0c34cfa80b1b4d340f5b51a9b4a3baa5af8aea9503c585eda06a"),
        ("src/evaluation/compute_metrics.py", "0715226375e9d24646c49c504194ba61cfb26d39415da5ebe9bdc4c6dcd3726c"),
        ("src/evaluation/report_results.py", "1486a44fac721717c0a9373b32f4487c277d2bf28044cf28f649a6a74e692c96"),
    )
)

# The ten memory abilities, as probing_questions.json names them (its keys), with the paper's names.
ABILITIES = {
    "abstention": "abstention",
    "contradiction_resolution": "contradiction resolution",
    "event_ordering": "event ordering",
    "information_extraction": "information extraction",
    "instruction_following": "instruction following",
    "knowledge_update": "knowledge update",
    "multi_session_reasoning": "multi-session reasoning",
    "preference_following": "preference following",
    "summarization": "summarization",
    "temporal_reasoning": "temporal reasoning",
}

RULE = Rule(
    name="beam",
    metric="evidence_recall_any",
    label="recall_any@k",
    population="every probing question that names evidence (source_chat_ids); abstention questions name none",
    corpora="BEAM (evals import-corpus beam, or evals fetch beam_100k … beam_10m; benchmark.json names it)",
    follows="no published code: BEAM publishes judged answers only (src/evaluation/compute_metrics.py), no retrieval "
    "figure, so this one is the harness's own: an evidence message (source_chat_ids, in any of its shapes) among the "
    "first k records, per question, with a figure and interval per ability",
    note="Evidence ids that name no message are counted at import and shown in each conversation's description, "
    "never silently dropped; a question whose ids all dangle has no evidence and is not counted.",
    unanswerable_words="BEAM abstention question: the conversation does not hold the answer",
)


def _pins() -> dict[str, list[tuple[str, int | None, str | None, str]]]:
    """pins.tsv (package data, written by tools/beam_pins.py): per tier, (path, size, SHA-256, git blob id) of every
    file the importer reads; size and SHA-256 None ('-') for a file pinned by its git blob id alone."""
    text = (resources.files(__package__) / "pins.tsv").read_text(encoding="utf-8")
    pins: dict[str, list[tuple[str, int | None, str | None, str]]] = {}
    rows = [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]
    for tier, path, size, sha256, blob in rows[1:]:  # the first row names the columns
        pins.setdefault(tier, []).append((path, None if size == "-" else int(size), None if sha256 == "-" else sha256, blob))
    return pins


PINS = _pins()


def _tree(tier: str) -> tuple[RemoteFile, ...]:
    return tuple(
        RemoteFile(
            f"{REPOSITORY}/{COMMIT}/{path}",
            f"{RAW_GITHUB}/{REPOSITORY}/{COMMIT}/{path}",
            sha256=sha256,
            size=size,
            git_blob=blob,
        )
        for path, size, sha256, blob in PINS[tier]
    )


def _release(tier: str) -> Benchmark:
    tree = _tree(tier)
    return Benchmark(
        name=f"beam_{tier.lower()}",
        title=f"BEAM {tier} (Beyond a Million Tokens)",
        homepage=f"https://github.com/{REPOSITORY}/tree/{COMMIT}/chats/{tier}",  # the README calls 100K "128K"
        version=f"commit {COMMIT}",
        license="none stated (no LICENSE file in the repository at the pinned commit)",
        non_commercial=False,
        test_points=f"{len(tree) // 2} conversations x 20 probing questions in 10 abilities (2 each)",
        evidence="turns (source_chat_ids, message ids) and sessions (batches)",
        data=None,
        importer="beam",
        tree=tree,
        import_root=f"{REPOSITORY}/{COMMIT}/chats/{tier}",
        sources=SOURCES,
    )


def _import(folder: Path, out: Path) -> ImportReport:
    from evals.benchmarks.beam.importer import import_beam

    return import_beam(folder, out)


def _protocol() -> type:
    from evals.benchmarks.beam.protocol import BeamProtocol

    return BeamProtocol


def turn_name(turn: int, session: str | None, place: int) -> str:
    """BEAM's message id (the id ``source_chat_ids`` names: the importer reads message *i* as turn *i*) and its
    batch (``plan-2 batch 3`` on 10M): ``message 56 · batch 1``. The time anchor is the turn's date."""
    return f"message {turn}" + (f" · {session}" if session else "")


def _mem0_protocol() -> type:
    from evals.benchmarks.beam.protocol import BeamMem0Protocol

    return BeamMem0Protocol


UNIT = Unit(
    claims=claims_in(__name__, "beam"),
    order=30,
    name="beam",
    title="BEAM",
    releases=tuple(_release(tier) for tier in TIERS),
    importer=_import,
    reads="one tier's folder of BEAM's chats (chats/100K, 500K, 1M or 10M of github.com/mohammadtavakoli78/BEAM)",
    rule=RULE,
    categories=ABILITIES,
    protocols={
        "beam": ProtocolSpec(_protocol, JUDGE, SOURCES),
        # Mem0's nugget-only scoring of BEAM (.protocol.MEM0_PROFILE), beside the official one: BEAM's prompts and judge.
        "beam_mem0": ProtocolSpec(_mem0_protocol, JUDGE, SOURCES, profile="mem0 nugget-only (non-official)"),
    },
    turn_name=turn_name,
    metric_notes={"answer_score": "BEAM: the rubric items' mean, event ordering's tau_norm."},
)
