"""The corpus: pydantic models of schema "1" and a loader with precise errors.

A corpus is a folder; every ``*.json`` directly inside it is one conversation,
read in file-name order. Problems are collected, not raised one at a time, so
``evals validate`` can report all of them; each names the file, the JSON path
of the field (``turns[7].test_at.expected_keywords``) and what was expected.

The schema is strict where looseness would mislead: an unknown (say,
misspelled) field is an error, not ignored; a role is ``user`` or
``assistant``; a keyword or fact that is empty or only whitespace, which
would match any record, is refused; a file's ``id`` is its file name. The
file itself is read by :mod:`evals.jsonfile` (regular files only, bounded, no
repeated keys or lone surrogates).
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError
from pydantic_core import PydanticCustomError

from evals import jsonfile
from evals.errors import EvalsError

__all__ = [
    "SCHEMA_VERSION",
    "Conversation",
    "Corpus",
    "CorpusError",
    "Problem",
    "TestPoint",
    "Turn",
    "check_corpus",
    "corpus_digest",
    "load_corpus",
]

SCHEMA_VERSION = "1"
ROLES = ("user", "assistant")


def _not_blank(text: str) -> str:
    if not text.strip():
        raise PydanticCustomError("blank_string", "must not be empty or only whitespace (it would match any record)")
    return text


# A keyword or fact that is empty (or only whitespace) is a substring of every record (or of
# every record with a space), so it would make any retrieval, even none, score a hit.
Needle = Annotated[str, AfterValidator(_not_blank)]


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


class Turn(_Strict):
    role: Literal["user", "assistant"]
    content: str
    test_at: TestPoint | None = None
    record: StrictBool = True  # False: played but never added to memory (e.g. one of several questions)


class Conversation(_Strict):
    # A missing schema_version means "1", as in the original harness.
    schema_version: str = SCHEMA_VERSION
    id: str
    description: str
    turns: list[Turn] = Field(min_length=1)

    def test_points(self) -> list[tuple[int, TestPoint]]:
        return [(i, t.test_at) for i, t in enumerate(self.turns) if t.test_at is not None]


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
    conversations: list[Conversation]
    digest: str

    @property
    def name(self) -> str:
        return self.directory.resolve().name


def _model_at(loc: tuple[int | str, ...]) -> type[BaseModel]:
    """The model whose field ``loc`` ends in: Conversation, Turn or TestPoint."""
    model: type[BaseModel] = Conversation
    for part in loc[:-1]:
        if part == "turns":
            model = Turn
        elif part == "test_at":
            model = TestPoint
    return model


def _unknown_field(loc: tuple[int | str, ...]) -> str:
    fields = list(_model_at(loc).model_fields)
    near = difflib.get_close_matches(str(loc[-1]), fields, n=1, cutoff=0.7)
    if near:
        return f"unknown field (did you mean {near[0]!r}?)"
    return f"unknown field (allowed here: {', '.join(fields)})"


def _describe(error: dict) -> str:
    kind = error["type"]
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return _unknown_field(error["loc"])
    if kind == "literal_error" and error["loc"][-1] == "role":
        return f"expected {' or '.join(repr(r) for r in ROLES)}, got {error['input']!r}"
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


def _parse_file(path: Path, texts: dict[str, str] | None = None) -> tuple[Conversation | None, list[Problem]]:
    name = str(path)
    try:
        data = jsonfile.load(path, jsonfile.MAX_CORPUS_FILE_BYTES, name)
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
    return problems


def corpus_digest(conversations: list[Conversation]) -> str:
    """sha256 of the corpus's canonical content: formatting and file names do not count."""
    # Field order is the models' own, so the dump is canonical. exclude_defaults:
    # optional fields added to the schema later leave the digest of a corpus
    # that does not use them unchanged.
    digest = hashlib.sha256()
    for conversation in conversations:
        digest.update(conversation.model_dump_json(exclude_defaults=True).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def check_corpus(directory: Path) -> tuple[list[Conversation], list[Problem]]:
    """Parse every conversation in ``directory``; return what parsed and every problem found."""
    directory = Path(directory)
    if not directory.exists():
        return [], [Problem(str(directory), "", "corpus folder does not exist")]
    if not directory.is_dir():
        return [], [Problem(str(directory), "", "not a folder; give the folder that holds the *.json files")]
    files = sorted(directory.glob("*.json"))
    if not files:
        return [], [Problem(str(directory), "", "no *.json files in the corpus folder")]

    conversations: list[Conversation] = []
    problems: list[Problem] = []
    first_seen: dict[str, Path] = {}
    texts: dict[str, str] = {}
    for path in files:
        conversation, file_problems = _parse_file(path, texts)
        problems.extend(file_problems)
        if conversation is None:
            continue
        reference_problems = _reference_problems(str(path), conversation)
        if conversation.id != path.stem:
            # Importers and tools write a conversation to the file named after its id; a copy renamed
            # by hand, or an id edited in place, would otherwise be reported under a name no file has.
            message = f"{conversation.id!r} differs from the file name; it must be {path.stem!r} (the file name without .json)"
            reference_problems.insert(0, Problem(str(path), "id", message))
        if reference_problems:
            problems.extend(reference_problems)
            continue
        if conversation.id in first_seen:
            problems.append(
                Problem(str(path), "id", f"duplicate conversation id {conversation.id!r} (also in {first_seen[conversation.id]})")
            )
            continue
        first_seen[conversation.id] = path
        conversations.append(conversation)
    return conversations, problems


def load_corpus(directory: Path) -> Corpus:
    """Load a corpus folder, or raise :class:`CorpusError` listing every problem."""
    conversations, problems = check_corpus(directory)
    if problems:
        raise CorpusError(problems)
    return Corpus(directory=Path(directory), conversations=conversations, digest=corpus_digest(conversations))
