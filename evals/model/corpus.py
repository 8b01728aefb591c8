"""The corpus: pydantic models of schema "1" and a loader with precise errors.

A corpus is a folder; every ``*.json`` directly inside it is one conversation,
read in file-name order. Problems are collected, not raised one at a time, so
``evals validate`` can report all of them; each names the file, the JSON path
of the field (``turns[7].test_at.expected_keywords``) and what was expected.

The schema is strict where looseness would mislead: an unknown (say,
misspelled) field is an error, not ignored; a role is ``user`` or
``assistant``; a keyword or fact that is empty or only whitespace, which
would match any record, is refused; a file's ``id`` is its file name. The
file itself is read by :mod:`evals.io.jsonfile` (regular files only, bounded, no
repeated keys or lone surrogates).

Two ``*.json`` are not conversations. ``references.json`` holds published
figures (:class:`Reference`) to show beside runs. It is checked as strictly,
but it is not corpus content: it is never played and not in the digest.
``benchmark.json`` (:class:`BenchmarkDeclaration`) says which published
benchmark the conversations were imported from, and so by which rule its runs
are judged (:mod:`evals.judge.headline`): it is in the digest, since it changes what
the numbers mean.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError
from pydantic_core import PydanticCustomError

from evals.errors import EvalsError
from evals.io import checked, jsonfile, plugins
from evals.io.plugins import BENCHMARK_GROUP

__all__ = [
    "BENCHMARK_FILE",
    "BENCHMARK_GROUP",
    "MAX_CUTOFF",
    "SCHEMA_VERSION",
    "BenchmarkDeclaration",
    "Conversation",
    "Conversations",
    "Corpus",
    "CorpusError",
    "HELD_BYTES",
    "Problem",
    "REFERENCES_FILE",
    "Reference",
    "TestPoint",
    "Turn",
    "benchmark_entry_points",
    "benchmark_names",
    "known_benchmark",
    "check_benchmark",
    "check_corpus",
    "check_file",
    "check_references",
    "corpus_digest",
    "load_corpus",
]

SCHEMA_VERSION = "1"
ROLES = ("user", "assistant")
REFERENCES_FILE = "references.json"  # published figures beside the conversations; not a conversation
BENCHMARK_FILE = "benchmark.json"  # which published benchmark the corpus is; not a conversation
# The benchmarks a corpus may declare are the names of this entry-point group (one per benchmark unit,
# evals/benchmarks/NAME/, registered in pyproject.toml as a plug-in's would be). Only the names are read
# here, never the units: this layer lies below evals.benchmarks.

def benchmark_entry_points() -> tuple[EntryPoint, ...]:
    """The entry points of :data:`BENCHMARK_GROUP` (:func:`evals.io.plugins.group`)."""
    return plugins.group(BENCHMARK_GROUP)


def benchmark_names() -> tuple[str, ...]:
    """The names of the registered benchmark units, sorted: what a ``benchmark.json`` may declare."""
    return tuple(sorted({point.name for point in benchmark_entry_points()}))


def known_benchmark(name: str) -> str:
    """``name``, checked to be a registered benchmark's (a pydantic validator: the error lists the names)."""
    names = benchmark_names()
    if name not in names:
        listed = ", ".join(repr(n) for n in names)
        text = f"{name!r} is no registered benchmark; expected one of {listed}"
        raise PydanticCustomError("unknown_benchmark", "{text}", {"text": text})
    return name


NOT_CONVERSATIONS = (REFERENCES_FILE, BENCHMARK_FILE)
# The deepest cutoff a run measures at (``--cutoffs``) and a published figure may state: deeper than any
# published table, and a typo (5000000, 2**32) is refused before anything is played or stored.
MAX_CUTOFF = 10_000


def _not_blank(text: str) -> str:
    if not text.strip():
        raise PydanticCustomError("blank_string", "must not be empty or only whitespace (it would match any record)")
    return text


# A keyword or fact that is empty (or only whitespace) is a substring of every record (or of
# every record with a space), so it would make any retrieval, even none, score a hit.
Needle = Annotated[str, AfterValidator(_not_blank)]


def _non_empty(text: str) -> str:
    if not text.strip():
        raise PydanticCustomError("blank_string", "must be a non-empty string")
    return text


# A session id, a date or a label: free text, but not empty or only whitespace.
Label = Annotated[str, AfterValidator(_non_empty)]


def _cutoff(number: int) -> int:
    if number < 1:
        raise PydanticCustomError("not_positive", "must be a positive integer, got {number}", {"number": number})
    if number > MAX_CUTOFF:
        raise PydanticCustomError(
            "too_deep",
            "must be at most {most} (the deepest cutoff a run measures at), got {number}",
            {"most": MAX_CUTOFF, "number": number},
        )
    return number


def _fraction(number: float) -> float:
    if not 0 <= number <= 1:
        raise PydanticCustomError(
            "not_a_fraction", "must be between 0 and 1 (a fraction, not a percentage), got {number}", {"number": number}
        )
    return number


class _Strict(BaseModel):
    # Unknown fields are errors: a misspelled optional field would otherwise be silently dropped.
    model_config = ConfigDict(extra="forbid")


class TestPoint(_Strict):
    """What memory should surface just before the turn that carries it."""

    __test__ = False  # not a pytest test class, despite the name

    question: str
    expected_fact: Needle
    expected_keywords: list[Needle] = Field(default_factory=list)
    # Optional, added after the seed; their defaults are the seed's behaviour and
    # leave a corpus's digest unchanged (see corpus_digest).
    evidence_turns: list[StrictInt] = Field(default_factory=list)  # earlier turns that hold the answer
    category: str | None = None
    answerable: StrictBool = True  # False: the conversation holds no answer; kept out of recall
    evidence_sessions: list[Label] = Field(default_factory=list)  # sessions that hold the answer
    # What a graded judge checks the answer against, one criterion a request (BEAM's ``rubric``); empty: none.
    rubric: list[Needle] = Field(default_factory=list)


class Turn(_Strict):
    role: Literal["user", "assistant"]
    content: str
    test_at: TestPoint | None = None
    record: StrictBool = True  # False: played but never added to memory (e.g. one of several questions)
    # Optional: the session the turn belongs to (an id) and its date, verbatim as the source wrote it
    # ("1:56 pm on 8 May, 2023", "2023/05/20 (Sat) 02:21"): never parsed, so never misread.
    session: Label | None = None
    date: Label | None = None


class Conversation(_Strict):
    # A missing schema_version means "1", as in the original harness.
    schema_version: str = SCHEMA_VERSION
    id: str
    description: str
    turns: list[Turn] = Field(min_length=1)

    def test_points(self) -> list[tuple[int, TestPoint]]:
        return [(i, t.test_at) for i, t in enumerate(self.turns) if t.test_at is not None]

    @property
    def sessions(self) -> list[str | None]:
        """Each turn's session id (None where a turn has none), in turn order."""
        return [turn.session for turn in self.turns]


Metric = Literal["recall_any", "recall_all", "recall_frac", "ndcg_any", "ndcg_any_lme"]
Level = Literal["turn", "session"]


class Reference(_Strict):
    """A published figure to show beside runs on the same corpus (``references.json``).

    Never ranked and never mixed into runs: it was computed by someone else,
    on their copy of the data, with their retriever.
    """

    label: Label  # what produced it, e.g. "LoCoMo paper, DRAGON retriever (dialog level)"
    citation: Label  # where it is published
    metric: Metric
    level: Level
    k: Annotated[StrictInt, AfterValidator(_cutoff)]
    value: Annotated[float, Field(strict=True), AfterValidator(_fraction)]
    note: Label | None = None  # e.g. "computed by the authors on their release, not re-run here"


class BenchmarkDeclaration(_Strict):
    """``benchmark.json``: the published benchmark this corpus was imported from (importers write it)."""

    name: Annotated[str, AfterValidator(known_benchmark)]  # a registered unit's name (evals benchmarks)
    # Where the corpus came from, as the import saw it: the registry entry whose pinned bytes the imported file
    # matched (``evals fetch``, or a hand import of those same bytes), else the file's name (imported by hand).
    release: str | None = None
    imported_from: str | None = None


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a corpus, located as precisely as we can."""

    file: str
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: {self.path}" if self.path else self.file
        return f"{where}: {self.message}"


class CorpusError(EvalsError):
    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        extra = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        super().__init__(f"invalid corpus: {problems[0]}{extra}")


@dataclass(frozen=True)
class Corpus:
    """A loaded, valid corpus."""

    directory: Path
    # A list, or (from load_corpus) Conversations: read from their files as they are walked.
    conversations: Sequence[Conversation]
    digest: str
    references: list[Reference] = field(default_factory=list)  # from references.json; not in the digest
    benchmark: str | None = None  # from benchmark.json (in the digest): which published benchmark this is
    # From benchmark.json (not in the digest): the pinned release whose bytes it was imported from, else the file.
    release: str | None = None
    imported_from: str | None = None

    @property
    def name(self) -> str:
        return self.directory.resolve().name


# A corpus whose files come to at most this many bytes is held in memory once checked; a bigger one
# (LongMemEval's long haystacks: 7 MB a conversation in _m) is read again from its files, one
# conversation at a time, whenever it is walked, so a run holds one conversation's turns at a time.
HELD_BYTES = 64 * 1024**2


class _Files:
    """What :class:`Conversations` reads from: each valid file's path and the sha256 of its bytes as
    checked, the turn texts shared across files, and the conversations while the corpus is small."""

    def __init__(self) -> None:
        self.paths: list[Path] = []
        self.digests: list[bytes] = []
        self.sizes = 0
        # Equal turn texts, one object across conversations (see _share_texts): distinct text only,
        # so a run that keeps records from many conversations (full_history's) keeps each text once.
        self.texts: dict[str, str] = {}
        self.held: list[Conversation] | None = []
        self.last: tuple[int, Conversation] | None = None  # the one conversation read last, when not held

    def add(self, path: Path, raw: bytes, conversation: Conversation) -> None:
        self.paths.append(path)
        self.digests.append(hashlib.sha256(raw).digest())
        self.sizes += len(raw)
        if self.held is not None:
            self.held.append(conversation)
            if self.sizes > HELD_BYTES:
                self.held = None  # too big to hold: read as walked from now on

    def get(self, index: int) -> Conversation:
        if self.held is not None:
            return self.held[index]
        if self.last is not None and self.last[0] == index:
            return self.last[1]
        self.last = None  # let the previous one go before reading the next
        path = self.paths[index]
        try:
            raw = jsonfile.read_bytes(path, jsonfile.MAX_CORPUS_FILE_BYTES, str(path))
        except jsonfile.JSONFileError as exc:
            raise CorpusError([Problem(str(path), exc.where, exc.reason)]) from None
        if hashlib.sha256(raw).digest() != self.digests[index]:
            changed = "changed since the corpus was checked; run again on a corpus that stays put"
            raise CorpusError([Problem(str(path), "", changed)])
        conversation, problems = _reparse(path, self.texts, raw)
        if conversation is None:  # the same bytes checked once already: cannot happen
            raise CorpusError(problems)
        self.last = (index, conversation)
        return conversation


def _reparse(path: Path, texts: dict[str, str], raw: bytes) -> tuple[Conversation | None, list[Problem]]:
    """:func:`_parse_file` of bytes that passed it once (their sha256 was checked against the first read).

    A big corpus is read again at every pass over it (checking, counting ahead, the play, the store's
    comparison), five or six times a run; the strict parser (duplicate keys, depth, surrogates, each
    number checked) was two thirds of each read at BEAM-10M's size (61 MB a conversation), which made a
    run's time per turn there 1.4x the 1M shape's, whose corpus is held after one read. Those checks
    cannot find anything in bytes they passed, and orjson gives the same values for any JSON they pass;
    should it refuse something the strict parser allowed, the strict parser reads it.
    """
    import orjson

    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _parse_file(path, texts, raw)
    if not isinstance(data, dict):
        return _parse_file(path, texts, raw)
    _share_texts(data, texts)
    try:
        return Conversation.model_validate(data), []
    except ValidationError:
        return _parse_file(path, texts, raw)


class Conversations(Sequence[Conversation]):
    """A checked corpus's conversations, in file-name order: a read-only sequence that reads each
    conversation from its file when it is used (each file's bytes must be those checked), unless
    the corpus is small enough to hold (:data:`HELD_BYTES`). A slice is such a sequence too."""

    def __init__(self, files: _Files, positions: range | None = None) -> None:
        self._files = files
        self._positions = positions if positions is not None else range(len(files.paths))

    @classmethod
    def empty(cls) -> Conversations:
        return cls(_Files())

    @property
    def held(self) -> bool:
        """Whether the conversations are in memory (a small corpus), not read as walked."""
        return self._files.held is not None

    def __len__(self) -> int:
        return len(self._positions)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return Conversations(self._files, self._positions[index])
        return self._files.get(self._positions[index])

    def __iter__(self) -> Iterator[Conversation]:
        for position in self._positions:
            yield self._files.get(position)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment] - compared by content, like a list

    def __repr__(self) -> str:
        return f"Conversations({len(self)} conversations{'' if self.held else ', read as walked'})"


def _model_at(loc: tuple[int | str, ...], root: type[BaseModel] = Conversation) -> type[BaseModel]:
    """The model whose field ``loc`` ends in: Conversation, Turn or TestPoint (or ``root`` itself)."""
    model: type[BaseModel] = root
    for part in loc[:-1]:
        if part == "turns":
            model = Turn
        elif part == "test_at":
            model = TestPoint
    return model


def _unknown_field(loc: tuple[int | str, ...], root: type[BaseModel] = Conversation) -> str:
    fields = list(_model_at(loc, root).model_fields)
    near = difflib.get_close_matches(str(loc[-1]), fields, n=1, cutoff=0.7)
    if near:
        return f"unknown field (did you mean {near[0]!r}?)"
    return f"unknown field (allowed here: {', '.join(fields)})"


def _describe(error: dict, root: type[BaseModel] = Conversation) -> str:
    kind = error["type"]
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return _unknown_field(error["loc"], root)
    if kind == "literal_error" and error["loc"][-1] == "role":
        return f"expected {' or '.join(repr(r) for r in ROLES)}, got {error['input']!r}"
    if kind == "literal_error":
        return f"expected {error['ctx']['expected']}, got {error['input']!r}"
    if kind == "too_short" and error["loc"] == ("turns",):
        return "expected at least one turn, got an empty list"
    got = type(error.get("input")).__name__
    got = {"NoneType": "null", "dict": "object", "list": "array", "str": "string"}.get(got, got)
    expected = {
        "string_type": "a string",
        "list_type": "an array",
        "model_type": "an object",
        "model_attributes_type": "an object",
        "dict_type": "an object",
        "bool_type": "true or false",
        "int_type": "an integer",
        "float_type": "a number",
    }.get(kind)
    if expected:
        return f"expected {expected}, got {got}"
    return error["msg"]


def _share_texts(data: dict, texts: dict[str, str]) -> None:
    """Make equal turn texts one string object across the corpus.

    Benchmarks built from a shared pool of sessions (LongMemEval's haystacks)
    repeat the same turns in many conversations: 345 MB of turn text in the
    500-question file is 36 MB of distinct text. Parsing makes a new string
    for every occurrence; keeping the first and dropping the rest holds each
    text once. Nothing else changes: pydantic keeps the string it is given.
    """
    turns = data.get("turns")
    if not isinstance(turns, list):
        return
    for turn in turns:
        if isinstance(turn, dict):
            for field in ("role", "content"):
                text = turn.get(field)
                if type(text) is str:
                    turn[field] = texts.setdefault(text, text)


def _parse_file(
    path: Path, texts: dict[str, str] | None = None, raw: bytes | None = None
) -> tuple[Conversation | None, list[Problem]]:
    """The conversation in ``path`` (whose bytes are ``raw``, when read already), or its problems."""
    name = str(path)
    try:
        data = jsonfile.parse(raw, name) if raw is not None else jsonfile.load(path, jsonfile.MAX_CORPUS_FILE_BYTES, name)
    except jsonfile.JSONFileError as exc:
        return None, [Problem(name, exc.where, exc.reason)]
    if not isinstance(data, dict):
        return None, [Problem(name, "", f"expected a JSON object at the top level, got {type(data).__name__}")]
    if texts is not None:
        _share_texts(data, texts)
    version = data.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        return None, [
            Problem(name, "schema_version", f"unsupported schema_version {version!r}; this harness reads {SCHEMA_VERSION!r}")
        ]
    try:
        conversation = Conversation.model_validate(data)
    except ValidationError as exc:
        return None, [Problem(name, jsonfile.json_path(e["loc"]), _describe(e)) for e in exc.errors()]
    return conversation, []


def _reference_problems(name: str, conversation: Conversation) -> list[Problem]:
    """What the schema alone cannot check: each evidence turn is an earlier, recorded turn, listed once."""
    problems: list[Problem] = []
    for index, test in conversation.test_points():
        seen: set[int] = set()
        for position, turn in enumerate(test.evidence_turns):
            path = f"turns[{index}].test_at.evidence_turns[{position}]"
            if not 0 <= turn < index:
                problems.append(
                    Problem(name, path, f"turn {turn} is not an earlier turn; evidence must be one of turns 0..{index - 1}")
                )
            elif turn in seen:
                problems.append(Problem(name, path, f"turn {turn} is listed twice"))
            elif not conversation.turns[turn].record:
                problems.append(Problem(name, path, f"turn {turn} has record: false, so memory never holds it"))
            seen.add(turn)
        problems.extend(_session_problems(name, conversation, index, test))
    return problems


def _session_problems(name: str, conversation: Conversation, index: int, test: TestPoint) -> list[Problem]:
    """Each evidence session is the session of an earlier, recorded turn, listed once."""
    problems: list[Problem] = []
    if not test.evidence_sessions:
        return problems
    earlier = {t.session for t in conversation.turns[:index] if t.record and t.session is not None}
    anywhere = {t.session for t in conversation.turns if t.session is not None}
    seen: set[str] = set()
    for position, session in enumerate(test.evidence_sessions):
        path = f"turns[{index}].test_at.evidence_sessions[{position}]"
        if session in seen:
            problems.append(Problem(name, path, f"session {session!r} is listed twice"))
        elif session not in anywhere:
            problems.append(Problem(name, path, f"session {session!r} is the session of no turn"))
        elif session not in earlier:
            problems.append(
                Problem(name, path, f"session {session!r} has no recorded turn before this one, so memory never holds it")
            )
        seen.add(session)
    return problems


def corpus_digest(conversations: list[Conversation], benchmark: str | None = None) -> str:
    """sha256 of the corpus's canonical content: formatting and file names do not count. A declared
    benchmark counts (it decides how runs are judged); a corpus without one keeps its digest."""
    # Field order is the models' own, so the dump is canonical. exclude_defaults:
    # optional fields added to the schema later leave the digest of a corpus
    # that does not use them unchanged.
    digest = hashlib.sha256()
    for conversation in conversations:
        _digest_update(digest, conversation)
    return _with_benchmark(digest, benchmark)


def _digest_update(digest: Any, conversation: Conversation) -> None:
    digest.update(conversation.model_dump_json(exclude_defaults=True).encode("utf-8"))
    digest.update(b"\n")


def _with_benchmark(digest: Any, benchmark: str | None) -> str:
    if benchmark is not None:
        digest.update(f"benchmark {benchmark}\n".encode())
    return digest.hexdigest()


def check_file(
    path: Path, texts: dict[str, str] | None = None, raw: bytes | None = None
) -> tuple[Conversation | None, list[Problem]]:
    """One conversation file, checked as :func:`check_corpus` checks each: the conversation (None
    when it has a problem) and its problems. ``texts`` shares equal turn texts across files;
    ``raw``: the file's bytes, when read already."""
    conversation, problems = _parse_file(path, texts, raw)
    if conversation is None:
        return None, problems
    problems = _reference_problems(str(path), conversation)
    if conversation.id != path.stem:
        # Importers and tools write a conversation to the file named after its id; a copy renamed
        # by hand, or an id edited in place, would otherwise be reported under a name no file has.
        message = f"{conversation.id!r} differs from the file name; it must be {path.stem!r} (the file name without .json)"
        problems.insert(0, Problem(str(path), "id", message))
    return (None, problems) if problems else (conversation, [])


def check_corpus(directory: Path) -> tuple[Conversations, list[Problem]]:
    """Parse every conversation in ``directory``; return what parsed (read again from the files as
    it is walked, see :class:`Conversations`) and every problem found."""
    conversations, problems, _ = _check(Path(directory))
    return conversations, problems


def _check(directory: Path) -> tuple[Conversations, list[Problem], Any]:
    """:func:`check_corpus`, and the sha256 (a hashlib object) of the valid conversations' canonical
    content as :func:`corpus_digest` takes it, worked out in the same pass."""
    digest = hashlib.sha256()
    if not directory.exists():
        return Conversations.empty(), [Problem(str(directory), "", "corpus folder does not exist")], digest
    if not directory.is_dir():
        problem = Problem(str(directory), "", "not a folder; give the folder that holds the *.json files")
        return Conversations.empty(), [problem], digest
    files = sorted(p for p in directory.glob("*.json") if p.name not in NOT_CONVERSATIONS)
    if not files:
        return Conversations.empty(), [Problem(str(directory), "", "no *.json files in the corpus folder")], digest

    state = _Files()
    problems: list[Problem] = []
    first_seen: dict[str, Path] = {}
    for path in files:
        try:
            raw = jsonfile.read_bytes(path, jsonfile.MAX_CORPUS_FILE_BYTES, str(path))
        except jsonfile.JSONFileError as exc:
            problems.append(Problem(str(path), exc.where, exc.reason))
            continue
        conversation, file_problems = check_file(path, state.texts, raw)
        problems.extend(file_problems)
        if conversation is None:
            continue
        if conversation.id in first_seen:
            problems.append(
                Problem(str(path), "id", f"duplicate conversation id {conversation.id!r} (also in {first_seen[conversation.id]})")
            )
            continue
        first_seen[conversation.id] = path
        _digest_update(digest, conversation)
        state.add(path, raw, conversation)
        del raw, conversation
    problems.extend(check_references(directory)[1])
    problems.extend(check_benchmark(directory)[1])
    return Conversations(state), problems, digest


def check_benchmark(directory: Path) -> tuple[str | None, list[Problem]]:
    """The benchmark ``directory/benchmark.json`` declares (None without the file), and its problems."""
    path = Path(directory) / BENCHMARK_FILE
    if not path.exists() and not path.is_symlink():
        return None, []
    name = str(path)
    try:
        data = jsonfile.load(path, jsonfile.MAX_CORPUS_FILE_BYTES, name)
    except jsonfile.JSONFileError as exc:
        return None, [Problem(name, exc.where, exc.reason)]
    if not isinstance(data, dict):
        return None, [Problem(name, "", f'expected a JSON object such as {{"name": "<benchmark>"}}, got {type(data).__name__}')]
    try:
        return BenchmarkDeclaration.model_validate(data).name, []
    except ValidationError as exc:
        return None, [Problem(name, jsonfile.json_path(e["loc"]), _describe(e, BenchmarkDeclaration)) for e in exc.errors()]


def corpus_source(directory: Path) -> tuple[str | None, str | None]:
    """What ``directory/benchmark.json`` says the corpus was imported from: (the pinned release whose bytes it
    matched, the file's name); (None, None) where it says neither (imported before it was recorded)."""
    path = Path(directory) / BENCHMARK_FILE
    if not path.is_file():
        return None, None
    try:
        declared = BenchmarkDeclaration.model_validate(jsonfile.load(path, jsonfile.MAX_CORPUS_FILE_BYTES, BENCHMARK_FILE))
    except (jsonfile.JSONFileError, ValidationError):
        return None, None
    return declared.release, declared.imported_from


def check_references(directory: Path) -> tuple[list[Reference], list[Problem]]:
    """The published figures in ``directory/references.json`` (none if there is no such file), and its problems."""
    path = Path(directory) / REFERENCES_FILE
    if not path.exists() and not path.is_symlink():
        return [], []
    name = str(path)
    try:
        data = jsonfile.load(path, jsonfile.MAX_CORPUS_FILE_BYTES, name)
    except jsonfile.JSONFileError as exc:
        return [], [Problem(name, exc.where, exc.reason)]
    if not isinstance(data, list):
        return [], [Problem(name, "", f"expected a JSON array of reference objects at the top level, got {type(data).__name__}")]
    references: list[Reference] = []
    problems: list[Problem] = []
    first_seen: dict[tuple[str, str, str, int], int] = {}
    for position, item in enumerate(data):
        try:
            reference = Reference.model_validate(item)
        except ValidationError as exc:
            problems.extend(
                Problem(name, jsonfile.json_path((position, *e["loc"])), _describe(e, Reference)) for e in exc.errors()
            )
            continue
        key = (reference.label, reference.metric, reference.level, reference.k)
        if key in first_seen:
            # Two values for one cell of a table: which one the page shows would be an accident.
            message = f"same label, metric, level and k as [{first_seen[key]}]"
            problems.append(Problem(name, f"[{position}]", message))
            continue
        first_seen[key] = position
        references.append(reference)
    return references, problems


def load_corpus(directory: Path) -> Corpus:
    """Load a corpus folder, or raise :class:`CorpusError` listing every problem.

    A small corpus (at most :data:`HELD_BYTES`) whose exact bytes this code has checked before is
    not checked again: its files are parsed and validated by pydantic straight from their bytes, and
    its digest is the one noted then (:func:`_remembered`, :mod:`evals.io.checked`). Anything else
    is checked in full, and noted when it passes."""
    directory = Path(directory)
    read = _read_small(directory)
    big = _file_digests(directory) if read is None else None
    key = _content_key(read) if read is not None else _digests_key(big) if big is not None else None
    if key is not None:
        noted = checked.recall(key)
        if noted is not None:
            known = _remembered(directory, read, noted) if read is not None else _remembered_big(directory, big, noted)  # type: ignore[arg-type]
            if known is not None:
                return known
    conversations, problems, content = _check(directory)
    if problems:
        raise CorpusError(problems)
    references, _ = check_references(directory)
    benchmark, _ = check_benchmark(directory)
    digest = _with_benchmark(content, benchmark)
    if big is not None:  # noted under the bytes the check read, which each later read must match
        big = _checked_digests(directory, conversations)
        key = _digests_key(big) if big is not None else None
    if key is not None:
        checked.remember(key, digest)
    release, imported_from = corpus_source(directory)
    return Corpus(
        directory=directory,
        conversations=conversations,
        digest=digest,
        references=references,
        benchmark=benchmark,
        release=release,
        imported_from=imported_from,
    )


_checker: bytes | None = None


def _checker_id() -> bytes:
    """What decides whether a corpus passes: this module's and the JSON reader's code, and pydantic's
    version. A note made under other rules names another key, so it is never taken for one of these."""
    global _checker
    if _checker is None:
        import pydantic_core

        identity = hashlib.sha256(pydantic_core.__version__.encode())
        for module in (__file__, jsonfile.__file__):
            identity.update(Path(module).read_bytes())
        _checker = identity.digest()
    return _checker


def _read_small(directory: Path) -> list[tuple[Path, bytes | None]] | None:
    """Every file a check reads (the conversations, then references.json and benchmark.json, None
    where absent) with its bytes, or None: a corpus too big to hold, or one the check must report on."""
    try:
        if not directory.is_dir():
            return None
        names = sorted(p for p in directory.glob("*.json") if p.name not in NOT_CONVERSATIONS)
        extra = [directory / name for name in NOT_CONVERSATIONS]
        if not names or sum(p.stat().st_size for p in names) > HELD_BYTES:
            return None
        read: list[tuple[Path, bytes | None]] = []
        for path in names + extra:
            if path in extra and not path.exists() and not path.is_symlink():
                read.append((path, None))
            else:
                read.append((path, bytes(jsonfile.read_bytes(path, jsonfile.MAX_CORPUS_FILE_BYTES, str(path)))))
        return read
    except (OSError, jsonfile.JSONFileError):
        return None


def _content_key(read: list[tuple[Path, bytes | None]]) -> str:
    """sha256 of the checking code and of each file's name and bytes, in the order checked."""
    return _digests_key([(path, hashlib.sha256(raw).digest() if raw is not None else None, 0) for path, raw in read])


def _digests_key(files: list[tuple[Path, bytes | None, int]]) -> str:
    """:func:`_content_key` from each file's sha256 (None where absent)."""
    key = hashlib.sha256(_checker_id())
    for path, digest, _ in files:
        key.update(path.name.encode("utf-8", "surrogatepass") + b"\0")
        key.update(digest if digest is not None else b"absent")
    return key.hexdigest()


# A corpus too big to hold was checked in full at every load, one strict parse of every file: a fifth of
# a run's time on BEAM-10M (611 MB of files, 7 s of 52), while the 1M shape's 61 MB, held, was checked
# once and remembered. A big corpus is remembered the same way, by its files' sha256s, read one file at a
# time; its conversations are then parsed when walked, each read checked against the sha256 noted here.


def _file_digests(directory: Path) -> list[tuple[Path, bytes | None, int]] | None:
    """Every file a check reads (as :func:`_read_small` lists them) with the sha256 of its bytes (None
    where absent) and its size, read one at a time; None for a corpus the check must report on."""
    try:
        if not directory.is_dir():
            return None
        names = sorted(p for p in directory.glob("*.json") if p.name not in NOT_CONVERSATIONS)
        if not names:
            return None
        files: list[tuple[Path, bytes | None, int]] = []
        for path in names + [directory / name for name in NOT_CONVERSATIONS]:
            if path.name in NOT_CONVERSATIONS and not path.exists() and not path.is_symlink():
                files.append((path, None, 0))
            else:
                raw = jsonfile.read_bytes(path, jsonfile.MAX_CORPUS_FILE_BYTES, str(path))
                files.append((path, hashlib.sha256(raw).digest(), len(raw)))
                del raw
        return files
    except (OSError, jsonfile.JSONFileError):
        return None


def _checked_digests(directory: Path, conversations: Conversations) -> list[tuple[Path, bytes | None, int]] | None:
    """The files a full check of a big corpus read, with the sha256s it took (its conversations') and the
    other files' now; None if the corpus folder holds anything else (then nothing is noted)."""
    files = conversations._files
    listed = sorted(p for p in directory.glob("*.json") if p.name not in NOT_CONVERSATIONS)
    if listed != files.paths:
        return None
    out: list[tuple[Path, bytes | None, int]] = list(zip(files.paths, files.digests, [0] * len(files.paths), strict=True))
    for name in NOT_CONVERSATIONS:
        path = directory / name
        try:
            raw = jsonfile.read_bytes(path, jsonfile.MAX_CORPUS_FILE_BYTES, str(path)) if path.exists() else None
        except (OSError, jsonfile.JSONFileError):
            return None
        out.append((path, hashlib.sha256(raw).digest() if raw is not None else None, 0))
    return out


def _remembered_big(directory: Path, files: list[tuple[Path, bytes | None, int]], digest: str) -> Corpus | None:
    """A big corpus whose files' bytes were checked in full before: read as walked (each read must give
    the sha256 noted), nothing parsed now; None if its other files disagree."""
    references, reference_problems = check_references(directory)
    benchmark, benchmark_problems = check_benchmark(directory)
    if reference_problems or benchmark_problems:
        return None
    state = _Files()
    state.held = None
    for path, file_digest, size in files:
        if path.name in NOT_CONVERSATIONS or file_digest is None:
            continue
        state.paths.append(path)
        state.digests.append(file_digest)
        state.sizes += size
    return Corpus(directory, Conversations(state), digest, references, benchmark, *corpus_source(directory))


def _remembered(directory: Path, read: list[tuple[Path, bytes | None]], digest: str) -> Corpus | None:
    """The corpus from bytes checked in full before (its conversations validated by pydantic from the
    bytes, equal texts shared as :func:`_share_texts` shares them), or None if anything disagrees."""
    state = _Files()
    for path, raw in read:
        if path.name in NOT_CONVERSATIONS:
            continue
        try:
            conversation = Conversation.model_validate_json(raw)  # type: ignore[arg-type]
        except ValidationError:
            return None
        texts = state.texts
        for turn in conversation.turns:  # the fields' values themselves: pydantic keeps what it was given
            fields = turn.__dict__
            fields["role"] = texts.setdefault(turn.role, turn.role)
            fields["content"] = texts.setdefault(turn.content, turn.content)
        state.add(path, raw, conversation)  # type: ignore[arg-type]
    references, reference_problems = check_references(directory)
    benchmark, benchmark_problems = check_benchmark(directory)
    if reference_problems or benchmark_problems:
        return None
    return Corpus(directory, Conversations(state), digest, references, benchmark, *corpus_source(directory))
