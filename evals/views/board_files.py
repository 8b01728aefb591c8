"""Board files: a stored run as ids and figures, with no benchmark text, and such a file read back.

A board file is what a pull request can carry to the published board: the run's provenance, each
test point's id (conversation id and turn index), the turns its ranked records are (per rank: the
turn, or null for a record that is no turn; and every turn a record holds, where one holds several),
each record's token count, the keyword outcome the run reported, and every figure the run stored.
It holds no turn, question, expected answer, keyword, evidence label or category: benchmarks are
fetched by name (LoCoMo is CC BY-NC; BEAM and others publish no licence), and the labels come from
the corpus the file's digest names. docs/board.md says the format field by field.

Reading one back (:func:`read_board`) rebuilds the run on that corpus and has the judge compute every
figure again (:mod:`evals.views.board_verify` says which agree); the store then holds the run with
its corpus's texts and, for a record that is no turn, :data:`NO_TEXT`.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, model_validator

from evals.errors import EvalsError
from evals.io import jsonfile
from evals.judge.metrics import MetricValue, declared
from evals.judge.origin import origin
from evals.judge.retrieval import held_sessions, sessions_of
from evals.judge.scoring import PointScore, Scores, evidence_hits
from evals.model.corpus import Corpus, check_benchmark, load_corpus
from evals.model.provenance import Provenance
from evals.model.results import (
    MAX_K,
    MAX_SEED,
    MIN_SEED,
    PER_CUTOFF,
    PREFIX,
    ConversationResult,
    RunResult,
    TestPointResult,
)
from evals.store import FailedRun, RunRecord, StoredRun, config_key, make_summary
from evals.views.exchange import (
    Commit,
    Count,
    Digest,
    RunId,
    Seconds,
    _Bucket,
    _first_problem,
    _Measured,
    _measured,
    _when_a_run_could_be,
)

__all__ = [
    "BOARD_FORMAT",
    "BOARD_VERSION",
    "MAX_NAME",
    "NO_TEXT",
    "REPRODUCED_SUFFIX",
    "BoardFile",
    "Found",
    "board_bytes",
    "board_document",
    "board_path",
    "carried",
    "differing_figures",
    "failed_document",
    "failed_run",
    "fetched_corpora",
    "find_corpus",
    "is_board_file",
    "load_board",
    "pin_of",
    "read_board",
    "rebuild",
    "reproduced_path",
    "reproduction_of",
    "reproduction_document",
    "system_name",
]

BOARD_FORMAT = "mneme-evals-board"
# Version 2: each point may carry ``ranked_tokens`` (the budget figures' ranking, past k). A version 1 file reads as
# before; a reader of version 1 refuses a version 2 file in one line rather than reading its budget figures wrong.
BOARD_VERSION = 2
# The longest string a board file's own fields may hold: a name, a version, an option's value. A turn or a
# question is usually longer; one that is not is caught by comparing with the corpus (board_verify).
MAX_NAME = 200
# What an imported record that is no turn reads as: its text was the system's, and the file does not carry it.
NO_TEXT = "[record text not in the board file]"

Name = Annotated[str, Field(max_length=MAX_NAME)]


# The record of the harness's rerun of a board file with the same rankings (evals verify --reproduce), beside it:
# RUN_ID.json's is RUN_ID.reproduced.json. Every reader of a board folder skips these (board_verify.board_files).
REPRODUCED_FORMAT = "mneme-evals-reproduced"
REPRODUCED_SUFFIX = ".reproduced.json"


class _Closed(BaseModel):
    """The format is ours: a key it does not define is an error, never dropped unread."""

    model_config = ConfigDict(extra="forbid")


class _System(_Closed):
    name: Name  # the strategy as the store names it
    configuration: dict[str, Any]  # the strategy block the run recorded: its name, options and versions
    source: Name | None  # built-in, a plug-in's distribution and version, or module:attr
    model: Name  # the embedder's model ("none" for a memory without one)


class _Provenance(_Closed):
    commit: Commit
    dirty: bool
    package_version: Name
    mneme_version: Name | None
    python_version: Name
    timestamp: Annotated[AwareDatetime, AfterValidator(_when_a_run_could_be)]
    duration_s: Seconds


class _Corpus(_Closed):
    name: Name  # the corpus folder's name where the run was made
    digest: Digest  # evals.model.corpus.corpus_digest: every text and label of the corpus
    benchmark: Name | None  # the registered benchmark the corpus declared
    pin: Name | None  # the release `evals fetch` brought it as (evals benchmarks), where it was fetched so


class _Verdict(_Closed):
    """A test point's answer as the judge saw it: never the answer's text (it may quote the benchmark's turns)."""

    verdict: Literal["correct", "wrong", "unparsed", "partial"] | None  # None: not judged
    correct: bool | None
    score: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] | None  # the protocol's own per-point score
    counted: bool | None  # whether the protocol counts the point in its figures


class _Answers(_Closed):
    answer_model: Name
    judge_model: Name | None
    protocol: Name


class _Point(_Closed):
    conversation: Name
    turn: Count  # the index of the test point's turn
    # Per rank, down to the deepest cutoff: the turn the record is (null: no turn).
    turns: list[Count | None]
    # Per rank, every turn the record holds; only where some record of the point holds several.
    held: list[list[Count]] | None = None
    tokens: list[Count]  # per record the run kept (down to k): its token count
    # Per rank of turns, the record's token count, where the run kept a ranking deep enough to fill the largest
    # context budget (its turns then run past the deepest cutoff): the budget figures read it, not the first k.
    ranked_tokens: list[Count] | None = None
    # The original harness's keyword outcome, as the run reported it: it reads record texts the file does not hold.
    hit: bool
    strict_hit: bool
    rank: Annotated[int, Field(ge=1)] | None
    answer: _Verdict | None = None  # where the run has answers


class BoardFile(_Closed):
    format: Literal["mneme-evals-board"]
    version: int = Field(ge=1)
    run_id: RunId
    system: _System
    provenance: _Provenance
    k: int = Field(ge=1, le=MAX_K)
    seed: int = Field(ge=MIN_SEED, le=MAX_SEED)
    tokenizer: Name | None  # None only for a failed run (nothing was counted)
    # Declared facts (null or absent: not declared): the benchmarks whose data informed the system's settings,
    # and whether its memory writes with an LLM.
    tuned_on: list[Name] | None = None
    writes_with_llm: bool | None = None
    # A failed run: its one-line reason (the board shows "failed: <reason>"); it then has no figure and no point.
    failed: Annotated[str, Field(min_length=1, max_length=MAX_NAME)] | None = None
    cutoffs: list[Annotated[int, Field(ge=1, le=MAX_K)]]
    cutoff_rule: Literal["prefix", "whole_list", "per_cutoff"] | None
    corpus: _Corpus
    conversations: list[Name]  # the run's conversations, in run order
    figures: dict[Name, _Measured]  # every metric the run stored
    latency_by_size: list[_Bucket] = Field(default_factory=list)
    cache_hits: Count | None = None
    cache_misses: Count | None = None
    answers: _Answers | None = None  # how the run's answers were made, where it has them
    points: list[_Point]

    @model_validator(mode="after")
    def _failed_has_no_figure(self) -> BoardFile:
        if self.failed is not None and (self.figures or self.points):
            raise ValueError("failed: a failed run has no figures and no points (a failure is never a score)")
        if self.failed is None and self.tokenizer is None:
            raise ValueError("tokenizer: null only for a failed run")
        return self


class Reproduction(_Closed):
    """A board file reproduced: the harness reran its system and got the same ranking at every test point."""

    format: Literal["mneme-evals-reproduced"]
    version: Literal[1]
    board_file: Name  # the file's name, beside this one
    sha256: Digest  # of the file's exact bytes: the mark stands only while the file is what was reproduced
    commit: Commit  # the harness's commit that reran it
    dirty: bool  # whether that tree had uncommitted changes (then the commit does not name the code that ran)
    date: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]  # UTC, YYYY-MM-DD
    points: Count  # the test points whose rankings were compared


# -- writing -------------------------------------------------------------------------------------------


def board_document(stored: StoredRun, pin: str | None = None) -> dict[str, Any]:
    """The board file of a stored run (with answers or not: its answers' texts and verdicts stay out)."""
    summary, run = stored.summary, stored.run
    points = []
    answers = stored.answers
    for position, result in enumerate(run.conversations):
        refs = stored.record_turns.get(result.conversation_id, [])
        scored = stored.scores.points[position]
        for index, (point, score) in enumerate(zip(result.test_points, scored, strict=True)):
            # The ranking the figures read; a point without evidence keeps only its records' turns. A strategy asked
            # once per cutoff keeps its records at k (the store's ranked_held and token counts are theirs); its other
            # cutoffs' rankings are its own calls, not kept, and their figures are carried as the run measured them.
            per_cutoff = summary.cutoff_rule == PER_CUTOFF
            turns = point.ranked_turns if point.ranked_turns is not None and not per_cutoff else refs[index]
            entry: dict[str, Any] = {"conversation": result.conversation_id, "turn": point.turn_index, "turns": list(turns)}
            if point.ranked_held is not None:
                entry["held"] = [list(group) for group in point.ranked_held]
            entry["tokens"] = list(score.record_tokens)
            if point.ranked_tokens is not None:
                entry["ranked_tokens"] = list(point.ranked_tokens)
            entry |= {"hit": score.hit, "strict_hit": score.strict_hit, "rank": score.rank}
            if answers is not None:
                given = answers.points[position][index]
                entry["answer"] = {
                    "verdict": given.verdict,
                    "correct": given.correct,
                    "score": given.score,
                    "counted": given.counted,
                }
            points.append(entry)
    return {
        "format": BOARD_FORMAT,
        "version": BOARD_VERSION,
        "run_id": summary.run_id,
        "system": {
            "name": summary.strategy,
            "configuration": summary.strategy_config,
            "source": summary.strategy_source,
            "model": summary.model,
        },
        "provenance": {
            "commit": summary.commit,
            "dirty": summary.dirty,
            "package_version": summary.package_version,
            "mneme_version": summary.mneme_version,
            "python_version": summary.python_version,
            "timestamp": summary.timestamp.isoformat(),
            "duration_s": summary.duration_s,
        },
        "k": summary.k,
        "seed": summary.seed,
        "tokenizer": summary.tokenizer,
        "tuned_on": summary.tuned_on,
        "writes_with_llm": summary.writes_with_llm,
        "failed": None,
        "cutoffs": summary.cutoffs,
        "cutoff_rule": summary.cutoff_rule,
        "corpus": {"name": summary.corpus_name, "digest": summary.corpus_digest, "benchmark": summary.benchmark, "pin": pin},
        "conversations": [c.conversation_id for c in run.conversations],
        "figures": {name: dataclasses.asdict(value) for name, value in summary.metrics.items()},
        "latency_by_size": [dataclasses.asdict(bucket) for bucket in stored.latency],
        "cache_hits": summary.cache_hits,
        "cache_misses": summary.cache_misses,
        "answers": None
        if answers is None
        else {"answer_model": answers.answer_model, "judge_model": answers.judge_model, "protocol": answers.protocol},
        "points": points,
    }


def failed_document(failed: FailedRun, pin: str | None = None) -> dict[str, Any]:
    """The board file of a failed run: its identity, provenance and reason (cut to :data:`MAX_NAME` characters), no
    figure and no point."""
    from evals.model.formatting import clip_text

    return {
        "format": BOARD_FORMAT,
        "version": BOARD_VERSION,
        "run_id": failed.run_id,
        "system": {
            "name": failed.strategy,
            "configuration": failed.strategy_config,
            "source": failed.strategy_source,
            "model": failed.model,
        },
        "provenance": {
            "commit": failed.commit,
            "dirty": failed.dirty,
            "package_version": failed.package_version,
            "mneme_version": None,
            "python_version": failed.python_version,
            "timestamp": failed.timestamp.isoformat(),
            "duration_s": failed.duration_s,
        },
        "k": failed.k,
        "seed": failed.seed,
        "tokenizer": None,
        "tuned_on": failed.tuned_on,
        "writes_with_llm": failed.writes_with_llm,
        "failed": clip_text(failed.reason, MAX_NAME),
        "cutoffs": [],
        "cutoff_rule": None,
        "corpus": {"name": failed.corpus_name, "digest": failed.corpus_digest, "benchmark": failed.benchmark, "pin": pin},
        "conversations": [],
        "figures": {},
        "latency_by_size": [],
        "cache_hits": None,
        "cache_misses": None,
        "answers": None,
        "points": [],
    }


def failed_run(board: BoardFile) -> FailedRun:
    """The failed run a board file says (its ``failed`` set), as the store keeps it."""
    from datetime import UTC

    assert board.failed is not None
    configuration = board.system.configuration
    started = board.provenance.timestamp.astimezone(UTC)
    return FailedRun(
        run_id=board.run_id,
        commit=board.provenance.commit,
        dirty=board.provenance.dirty,
        model=board.system.model,
        date=started.date().isoformat(),
        timestamp=started,
        strategy=board.system.name,
        strategy_config=configuration,
        config_key=config_key(configuration, k=board.k, model=board.system.model),
        k=board.k,
        seed=board.seed,
        corpus_name=board.corpus.name,
        corpus_digest=board.corpus.digest,
        package_version=board.provenance.package_version,
        python_version=board.provenance.python_version,
        duration_s=board.provenance.duration_s,
        reason=board.failed,
        strategy_source=board.system.source,
        benchmark=board.corpus.benchmark,
        tuned_on=board.tuned_on,
        writes_with_llm=board.writes_with_llm,
    )


def board_bytes(document: dict[str, Any]) -> bytes:
    """The file's bytes: indented JSON, but each figure, each test point and each other list on one line, so a file of
    full_history's rankings stays small and a change to the board reads as a diff of the lines it changed."""

    def line(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))

    parts = []
    for key, value in document.items():
        if key == "points" and value:
            inner = ",\n".join(f"    {line(point)}" for point in value)
            parts.append(f"  {line(key)}: [\n{inner}\n  ]")
        elif key == "figures" and value:
            inner = ",\n".join(f"    {line(name)}: {line(figure)}" for name, figure in value.items())
            parts.append(f"  {line(key)}: {{\n{inner}\n  }}")
        elif isinstance(value, list):
            parts.append(f"  {line(key)}: {line(value)}")
        else:
            indented = json.dumps(value, ensure_ascii=False, allow_nan=False, indent=2).replace("\n", "\n  ")
            parts.append(f"  {line(key)}: {indented}")
    return ("{\n" + ",\n".join(parts) + "\n}\n").encode("utf-8")


_UNSAFE = re.compile(r"[^A-Za-z0-9._=+-]+")


def _safe(text: str) -> str:
    """``text`` as one folder name: no separator, no leading dot, at most 100 characters."""
    return _UNSAFE.sub("-", text).strip("-.")[:100] or "unnamed"


def system_name(configuration: dict[str, Any]) -> str:
    """The system's name as every board names it (:func:`evals.views.names.configuration_name`: the library and its
    non-default options), as a folder name: ``bm25``, ``qdrant_mode=hybrid``."""
    from evals.views.names import configuration_name

    return _safe(configuration_name(str(configuration.get("name", "unknown")), configuration).replace(" ", "_"))


def board_path(folder: Path, document: dict[str, Any]) -> Path:
    """Where a board file goes: ``DIR/<benchmark>/<system>/<run id>.json`` (benchmark: the registered one, else
    the corpus's name; system: :func:`system_name`)."""
    corpus, system = document["corpus"], system_name(document["system"]["configuration"])
    return Path(folder) / _safe(corpus["benchmark"] or corpus["name"]) / system / f"{document['run_id']}.json"


def pin_of(corpus_name: str, corpus_digest: str, benchmark: str | None, downloads: Path | None = None) -> str | None:
    """The release `evals fetch` imported this corpus as, when its fetched folder holds a corpus of this digest."""
    found = find_corpus(corpus_digest, benchmark, downloads=downloads, only=corpus_name)
    return found.pin if found is not None else None


# -- the corpus a file names ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """The corpus of a board file's digest, and the pinned release it was fetched as (None: given, not fetched)."""

    corpus: Corpus
    pin: str | None
    folder: Path | None = None  # where the corpus is (a rerun reads it there)


def _downloads(downloads: Path | None) -> Path:
    import os

    from evals.benchmarks import DOWNLOADS_ENV, default_downloads

    if downloads is not None:
        return Path(downloads)
    given = os.environ.get(DOWNLOADS_ENV)
    return Path(given) if given else default_downloads()


def fetched_corpora(downloads: Path | None = None, only: str | None = None) -> Iterator[tuple[str, Path]]:
    """(release name, folder) of every corpus `evals fetch` imported into the downloads folder."""
    from evals.benchmarks import BENCHMARKS, FETCHED_NOTE

    root = _downloads(downloads) / "corpora"
    for name in BENCHMARKS:
        folder = root / name
        if (only is None or name == only) and (folder / FETCHED_NOTE).is_file():
            yield name, folder


def find_corpus(
    digest: str, benchmark: str | None, given: Path | None = None, downloads: Path | None = None, only: str | None = None
) -> Found | None:
    """The corpus whose digest is ``digest``: among `evals fetch`'s imports (pinned), else ``given``, else None.
    The digest covers the benchmark a corpus declares, so only fetched corpora declaring ``benchmark`` are read."""
    for name, folder in fetched_corpora(downloads, only):
        if check_benchmark(folder)[0] != benchmark:
            continue
        try:
            corpus = load_corpus(folder)
        except EvalsError:
            continue  # a damaged download is no pinned benchmark
        if corpus.digest == digest:
            return Found(corpus, name, folder)
    if given is not None:
        corpus = load_corpus(given)
        if corpus.digest == digest:
            return Found(corpus, None, Path(given))
    return None


def reproduced_path(path: Path) -> Path:
    """Where the record of a board file's reproduction goes: beside it, ``RUN_ID.reproduced.json``."""
    return Path(path).with_name(Path(path).stem + REPRODUCED_SUFFIX)


def reproduction_document(path: Path, data: bytes, commit: str, dirty: bool, date: str, points: int) -> dict[str, Any]:
    """The record that the board file at ``path`` (its exact bytes: ``data``) was reproduced by the harness at
    ``commit`` on ``date``, ``points`` test points compared."""
    import hashlib

    return {
        "format": REPRODUCED_FORMAT,
        "version": 1,
        "board_file": Path(path).name,
        "sha256": hashlib.sha256(data).hexdigest(),
        "commit": commit,
        "dirty": dirty,
        "date": date,
        "points": points,
    }


def reproduction_of(path: Path) -> dict[str, Any] | None:
    """The reproduction recorded beside the board file at ``path`` (None: none, the file is submitted); a record that
    is malformed, or names another file or other bytes than the file's, is refused in one line naming it."""
    import hashlib

    beside = reproduced_path(path)
    if not beside.is_file():
        return None
    name = str(beside)
    try:
        raw = jsonfile.load(beside, jsonfile.MAX_EXPORT_FILE_BYTES, name)
        record = Reproduction.model_validate(raw)
    except jsonfile.JSONFileError as exc:
        raise EvalsError(str(exc)) from None
    except ValidationError as exc:
        raise EvalsError(f"{name}: schema: {_first_problem(exc)}") from None
    if record.board_file != Path(path).name:
        raise EvalsError(f"{name}: board_file: names {record.board_file!r}, not the file beside it ({Path(path).name!r})")
    actual = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    if record.sha256 != actual:
        raise EvalsError(
            f"{name}: sha256: {record.sha256[:12]}… is not the bytes of {Path(path).name} ({actual[:12]}…): the file "
            "changed after it was reproduced (rerun it: evals verify --reproduce)"
        )
    return record.model_dump()


# -- reading -------------------------------------------------------------------------------------------


def is_board_file(path: Path) -> bool:
    """Whether ``path`` says it is a board file (its top-level ``format``); anything else is read as an export."""
    try:
        raw = jsonfile.load(path, jsonfile.MAX_EXPORT_FILE_BYTES, str(path))
    except jsonfile.JSONFileError:
        return False  # the export reader says what is wrong with it
    return isinstance(raw, dict) and raw.get("format") == BOARD_FORMAT


def load_board(path: Path) -> tuple[Any, BoardFile]:
    """The raw JSON and the checked model of one board file; a problem is one line naming the field."""
    name = str(path)
    try:
        raw = jsonfile.load(path, jsonfile.MAX_EXPORT_FILE_BYTES, name)
    except jsonfile.JSONFileError as exc:
        raise EvalsError(str(exc)) from None
    if not isinstance(raw, dict) or raw.get("format") != BOARD_FORMAT:
        raise EvalsError(
            f'{name}: not a board file (no "format": "{BOARD_FORMAT}"); write one with: evals export RUN_ID --board DIR'
        )
    try:
        board = BoardFile.model_validate(raw)
    except ValidationError as exc:
        raise EvalsError(f"{name}: schema: {_first_problem(exc)}") from None
    if board.version > BOARD_VERSION:
        raise EvalsError(f"{name}: board format version {board.version} is newer than this evals reads ({BOARD_VERSION})")
    return raw, board


def rebuild(board: BoardFile, corpus: Corpus, name: str) -> RunRecord:
    """The run a board file describes, on its corpus, every figure computed again by the judge (the ones no
    ranking gives, wall-clock times and the like, kept as the file says). Raises on an id the corpus lacks."""
    conversations = {c.id: c for c in corpus.conversations}
    by_conversation: dict[str, list[_Point]] = {cid: [] for cid in board.conversations}
    for point in board.points:
        if point.conversation not in by_conversation:
            raise EvalsError(f"{name}: points: conversation {point.conversation!r} is not one of the file's conversations")
        by_conversation[point.conversation].append(point)
    results, scored = [], []
    for cid in board.conversations:
        conversation = conversations.get(cid)
        if conversation is None:
            raise EvalsError(f"{name}: conversation {cid!r} is not in corpus {board.corpus.digest[:12]}…")
        tests = dict(conversation.test_points())
        sessions, contents = conversation.sessions, [turn.content for turn in conversation.turns]
        result = ConversationResult(conversation_id=cid, description=conversation.description, turn_count=len(contents))
        points = []
        for point in by_conversation[cid]:
            where = f"{name}: point {cid!r} turn {point.turn}"
            test = tests.get(point.turn)
            if test is None:
                raise EvalsError(f"{where}: the corpus has no test point there")
            named = [t for t in point.turns if t is not None] + [t for group in point.held or [] for t in group]
            outside = next((t for t in named if t >= point.turn), None)
            if outside is not None:
                raise EvalsError(f"{where}: turns: turn {outside} is not an earlier turn of the conversation")
            if len(point.tokens) > len(point.turns) or (point.held is not None and len(point.held) != len(point.turns)):
                raise EvalsError(f"{where}: tokens and held must not be longer than turns (one entry per record)")
            if point.ranked_tokens is not None and len(point.ranked_tokens) != len(point.turns):
                raise EvalsError(f"{where}: ranked_tokens must have one entry per rank of turns")
            kept = point.turns[: len(point.tokens)]
            # A record holding several turns (a session, a drawer) is no one turn's text: its token count is its own.
            several = [point.held is not None and len(point.held[rank]) > 1 for rank in range(len(kept))]
            evidence = list(test.evidence_turns)
            listed = list(test.evidence_sessions) or sessions_of(evidence, sessions)
            rebuilt = TestPointResult(
                turn_index=point.turn,
                question=test.question,
                expected_fact=test.expected_fact,
                expected_keywords=list(test.expected_keywords),
                retrieved_records=[
                    contents[t] if t is not None and not many else NO_TEXT for t, many in zip(kept, several, strict=True)
                ],
                evidence_turns=evidence,
                category=test.category,
                answerable=test.answerable,
                rubric=list(test.rubric),
                retrieved_turns=list(kept) if evidence else None,
                evidence_sessions=listed,
                ranked_turns=list(point.turns),
                ranked_sessions=[sessions[t] if t is not None else None for t in point.turns],
                ranked_held=point.held,
                ranked_held_sessions=held_sessions(point.held, sessions),
                ranked_tokens=point.ranked_tokens,
            )
            if board.cutoff_rule == PER_CUTOFF:
                # Asked once per cutoff, the run kept its records at k: the file's ranking is theirs (board_document),
                # and the figures read at k read it; the other cutoffs' own rankings are not in the file.
                rebuilt.cutoff_rankings = {board.k: (rebuilt.ranked_turns, rebuilt.ranked_sessions)}
                if rebuilt.ranked_held is not None and rebuilt.ranked_held_sessions is not None:
                    rebuilt.cutoff_held = {board.k: (rebuilt.ranked_held, rebuilt.ranked_held_sessions)}
            result.test_points.append(rebuilt)
            found_any, found_all = evidence_hits(rebuilt)
            points.append(
                PointScore(
                    hit=point.hit,
                    record_tokens=list(point.tokens),
                    strict_hit=point.strict_hit,
                    rank=point.rank,
                    answerable=test.answerable,
                    evidence_any=found_any,
                    evidence_all=found_all,
                )
            )
        results.append(result)
        scored.append(points)
    run = RunResult(
        strategy=board.system.configuration,
        model=board.system.model,
        k=board.k,
        seed=board.seed,
        corpus_dir=board.corpus.name,  # a name, never a path of the machine that ran it
        corpus_digest=board.corpus.digest,
        started_at=board.provenance.timestamp,
        duration_s=board.provenance.duration_s,
        conversations=results,
        strategy_source=board.system.source,
        cutoffs=board.cutoffs,
        cutoff_rule=board.cutoff_rule or PREFIX,
        benchmark=corpus.benchmark,
    )
    scores = Scores(tokenizer=board.tokenizer or "", conversation_ids=list(board.conversations), points=scored)
    provenance = Provenance(**board.provenance.model_dump(exclude={"timestamp", "duration_s"}))
    figures = board.figures.items()
    measured = {key: MetricValue(**figure.model_dump()) for key, figure in figures if carried(key, board.cutoff_rule)}
    summary = make_summary(
        measured=measured,
        run_id=board.run_id,
        run=run,
        scores=scores,
        provenance=provenance,
        corpus_name=board.corpus.name,
        cache_hits=board.cache_hits,
        cache_misses=board.cache_misses,
        tuned_on=board.tuned_on,
        writes_with_llm=board.writes_with_llm,
    )
    # What the file carries stands as it says, even where the judge gives the key a value of its own (a strategy
    # asked once per cutoff: its rankings per cutoff are not kept, so its retrieval figures compute as null).
    metrics = {key: measured.get(key, value) for key, value in summary.metrics.items()} | measured
    summary = dataclasses.replace(summary, metrics=metrics)
    from evals.judge.metrics import LatencyBucket

    return RunRecord(
        summary=summary,
        run=run,
        scores=scores,
        conversations=list(corpus.conversations),
        references=corpus.references,
        latency=[LatencyBucket(**bucket.model_dump()) for bucket in board.latency_by_size],
    )


def carried(key: str, rule: str | None) -> bool:
    """Whether figure ``key`` is taken as the file says: measured (wall-clock, footprint, each cutoff's tokens,
    a per-cutoff strategy's rankings) or of the answers, whose texts the file does not carry."""
    found = declared(key)
    return _measured(key, rule) or (found is not None and found.answers)


def differing_figures(board: BoardFile, recomputed: dict[str, MetricValue], tolerance: float = 1e-9) -> list[str]:
    """Each figure of the file that the recomputed run does not give (value, n and interval, within ``tolerance``)."""
    problems = []
    for key, figure in board.figures.items():
        found = recomputed.get(key)
        if found is None:
            problems.append(f"figure {key}: the file's rankings and the corpus's labels give no such figure")
            continue
        for field in ("value", "n", "low", "high"):
            given, again = getattr(figure, field), getattr(found, field)
            if (given is None) != (again is None) or (given is not None and abs(given - again) > tolerance):
                problems.append(f"figure {key}: {field} is {given!r} in the file, recomputed {again!r}")
                break
    return problems


def read_board(path: Path, corpus_dir: Path | None = None, downloads: Path | None = None) -> RunRecord | FailedRun:
    """One board file as a run to import: its corpus found by digest (`evals fetch`'s downloads, else
    ``corpus_dir``), the run rebuilt on it, and every figure of the file equal to what the judge computes.
    A failed run's file gives the :class:`FailedRun` it says (its corpus found all the same)."""
    raw, board = load_board(path)
    found = find_corpus(board.corpus.digest, board.corpus.benchmark, corpus_dir, downloads)
    if found is None:
        raise EvalsError(
            f"{path}: corpus {board.corpus.digest[:12]}… is not among the fetched benchmarks"
            + (f" and {corpus_dir} has another digest" if corpus_dir is not None else "")
            + "; the store keeps a run with its corpus: evals fetch the benchmark, or give --corpus DIR"
        )
    reproduction = reproduction_of(path)
    if board.failed is not None:
        return failed_run(board)
    record = rebuild(board, found.corpus, str(path))
    problems = differing_figures(board, record.summary.metrics)
    if problems:
        raise EvalsError(f"{path}: {problems[0]}" + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    # Imported: run by its submitter, unless the harness reproduced this very file (evals.judge.origin says so).
    return dataclasses.replace(record, summary=dataclasses.replace(record.summary, origin=origin(True, reproduction)))
