"""`evals verify`: every board file under a folder checked, and every figure it can, recomputed.

A file is **verified** when its schema holds, its corpus digest is a pinned benchmark's (a corpus `evals
fetch` imported), every test point and ranked turn it names exists, no string in it is benchmark text,
and every figure the judge computes from rankings and labels is what the file says (within 1e-9). It is
**unverified** where a check could not run (its corpus is not at hand; a corpus given with --corpus is no
pinned benchmark): the line says which. It is **bad** where a check failed: the line names the field or
the figure. The keyword figures (they read record texts the file does not hold), the answers' and the
measured ones (wall-clock times, the footprint) are taken as submitted, and the line counts them. A failed
run's file (``failed``: its reason) has no figure and no point; its schema, digest and strings are checked.

Beside a file, ``RUN_ID.reproduced.json`` records that the harness reran its system with the same rankings
(:mod:`evals.views.board_reproduce` writes it): the line then says **reproduced**, else **submitted**
(:mod:`evals.judge.origin`). Such a record must name the file's exact bytes, or the file is bad.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evals.errors import EvalsError
from evals.io import jsonfile
from evals.judge.origin import mark, origin
from evals.model.corpus import Corpus, load_corpus
from evals.views.board_files import (
    MAX_NAME,
    REPRODUCED_SUFFIX,
    BoardFile,
    Found,
    carried,
    differing_figures,
    fetched_corpora,
    find_corpus,
    load_board,
    rebuild,
    reproduced_path,
    reproduction_of,
)

if TYPE_CHECKING:
    from evals.views.board_reproduce import Rerun, RerunFn

__all__ = ["VERIFIED", "UNVERIFIED", "BAD", "Verdict", "verify_folder"]

VERIFIED, UNVERIFIED, BAD = "verified", "unverified", "bad"
TOLERANCE = 1e-9
# The original harness's keyword figures: they read the records' texts, which a board file does not hold,
# so they follow from the file's own hit, strict_hit and rank; the judge checks only that they agree with those.
_KEYWORD = ("recall", "strict_recall", "mrr")
# A corpus text at least this long found inside a longer string of the file is benchmark text; a shorter one
# (a keyword such as "blue") must equal the whole string, or every option value would risk a false alarm.
_QUOTED = 16


@dataclass(frozen=True)
class Verdict:
    """One board file's outcome: its status and the one line that says why."""

    path: Path
    status: str  # VERIFIED, UNVERIFIED or BAD
    detail: str
    rerun: Rerun | None = None  # with --reproduce: the rerun of its system (None: not asked, or not verified)

    @property
    def line(self) -> str:
        return f"{self.status}: {self.path}: {self.detail}"


def board_files(folder: Path) -> list[Path]:
    """The board files under ``folder`` (every ``*.json`` but the records of reproductions beside them, in path
    order), or ``folder`` itself if it is a file."""
    folder = Path(folder)
    if folder.is_file():
        return [folder]
    if not folder.is_dir():
        raise EvalsError(f"{folder}: no such folder")
    return sorted(path for path in folder.rglob("*.json") if path.is_file() and not path.name.endswith(REPRODUCED_SUFFIX))


def orphan_records(folder: Path) -> list[Path]:
    """The records of reproductions under ``folder`` with no board file beside them."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    found = sorted(path for path in folder.rglob(f"*{REPRODUCED_SUFFIX}") if path.is_file())
    return [path for path in found if not path.with_name(path.name.removesuffix(REPRODUCED_SUFFIX) + ".json").is_file()]


def verify_folder(
    folder: Path, corpus_dir: Path | None = None, downloads: Path | None = None, reproduce: RerunFn | None = None
) -> list[Verdict]:
    """Every board file under ``folder`` checked; corpora are looked up once per digest. With ``reproduce`` (the run
    layer's rerun, :func:`evals.run.reproduce.rerun`), each verified file's system is rerun and its rankings compared
    (:mod:`evals.views.board_reproduce`), and the file checked again after."""
    found: dict[tuple[str, str | None], Found | None] = {}
    pinned: dict[str, str | None] = {}

    def lookup(digest: str, benchmark: str | None) -> Found | None:
        if (digest, benchmark) not in found:
            found[digest, benchmark] = find_corpus(digest, benchmark, corpus_dir, downloads)
        return found[digest, benchmark]

    def fetched(pin: str) -> str | None:
        if pin not in pinned:
            folders = dict(fetched_corpora(downloads, only=pin))
            pinned[pin] = _digest_of(folders[pin]) if pin in folders else None
        return pinned[pin]

    lonely = "a record of a reproduction with no board file beside it (it names {}.json)"
    orphans = [Verdict(p, BAD, lonely.format(p.name.removesuffix(REPRODUCED_SUFFIX))) for p in orphan_records(folder)]
    verdicts = []
    for path in board_files(folder):
        stale = ""
        if reproduce is not None and reproduced_path(path).is_file():
            try:
                reproduction_of(path)
            except EvalsError:  # asked to rerun: a record of other bytes goes, and the rerun says whether it holds
                reproduced_path(path).unlink()
                stale = f"removed {reproduced_path(path).name}, which named other bytes; "
        verdict = verify_file(path, lookup, fetched)
        if reproduce is not None and verdict.status == VERIFIED:
            from evals.views.board_reproduce import reproduce_file

            board = load_board(path)[1]
            found_here = lookup(board.corpus.digest, board.corpus.benchmark)
            assert found_here is not None  # verified: its corpus was found
            rerun = reproduce_file(path, found_here, reproduce)
            rerun = dataclasses.replace(rerun, detail=stale + rerun.detail)
            verdict = dataclasses.replace(verify_file(path, lookup, fetched), rerun=rerun)
        verdicts.append(verdict)
    return [*verdicts, *orphans]


def _digest_of(folder: Path) -> str | None:
    try:
        return load_corpus(folder).digest
    except EvalsError:
        return None


def verify_file(
    path: Path, lookup: Callable[[str, str | None], Found | None], fetched: Callable[[str], str | None] = lambda pin: None
) -> Verdict:
    """One board file checked (:mod:`this module <evals.views.board_verify>` says how)."""
    try:
        raw, board = load_board(path)
    except EvalsError as exc:
        return Verdict(path, BAD, str(exc).removeprefix(f"{path}: "))
    try:
        mark = _origin_text(reproduction_of(path))
    except EvalsError as exc:
        return Verdict(path, BAD, str(exc))
    long = next(_long_strings(raw), None)
    if long is not None:
        return Verdict(path, BAD, f"{long}: a string longer than {MAX_NAME} characters (benchmark text is never in a board file)")
    digest, pin = board.corpus.digest, board.corpus.pin
    found = lookup(digest, board.corpus.benchmark)
    if pin is not None and (found is None or found.pin is None):
        # The release it names is fetched here, and its corpus is another: the file's digest is no pinned benchmark's.
        theirs = fetched(pin)
        if theirs is not None:
            return Verdict(path, BAD, f"corpus.digest: {digest[:12]}… is not {pin!r}'s (fetched here: {theirs[:12]}…)")
    if found is None:
        return Verdict(
            path,
            UNVERIFIED,
            f"corpus {digest[:12]}… not found; schema ok (not run: pinned benchmark, point and turn ids, benchmark text, "
            "figures; evals fetch the benchmark, or give --corpus DIR)",
        )
    quoted = _benchmark_text(raw, found.corpus)
    if quoted is not None:
        return Verdict(path, BAD, f"{quoted}: benchmark text (a turn, question, answer key or label of the corpus)")
    if pin is not None and found.pin is not None and pin != found.pin:
        return Verdict(path, BAD, f"corpus.pin: says {pin!r}, but the digest is {found.pin!r}'s")
    if board.failed is not None:  # no figure and no point (the schema holds it to that): nothing to recompute
        where = found.pin or f"warning: corpus {digest[:12]}… is not a pinned benchmark (given with --corpus)"
        return Verdict(path, VERIFIED if found.pin else UNVERIFIED, f"{where}: a failed run, no figure (failed: {board.failed})")
    try:
        record = rebuild(board, found.corpus, "")
    except EvalsError as exc:
        return Verdict(path, BAD, str(exc).removeprefix(": "))
    missing = _missing_points(board, found.corpus)
    if missing:
        return Verdict(path, BAD, f"points: {missing}")
    problems = differing_figures(board, record.summary.metrics, TOLERANCE)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return Verdict(path, BAD, problems[0] + more)
    submitted = sum(carried(key, board.cutoff_rule) or key in _KEYWORD for key in board.figures)
    counts = f"{len(board.figures) - submitted} figures recomputed, {submitted} taken as submitted; {mark}"
    if found.pin is None:
        return Verdict(
            path, UNVERIFIED, f"warning: corpus {digest[:12]}… is not a pinned benchmark (given with --corpus); {counts}"
        )
    return Verdict(path, VERIFIED, f"{found.pin}: {counts}")


def _origin_text(reproduction: dict[str, Any] | None) -> str:
    """What the line says of who ran the file's system (:mod:`evals.judge.origin`)."""
    found = mark(origin(True, reproduction))
    assert found is not None  # a board file is never the harness's own run in this store
    if reproduction is None:
        return f"{found[0]} (its system run by its submitter)"
    return f"{found[0]} ({reproduction['points']} points at commit {reproduction['commit'][:12]}, {reproduction['date']})"


def _strings(value: Any, where: tuple[int | str, ...] = ()) -> Iterator[tuple[tuple[int | str, ...], str]]:
    """Every string of a JSON value (keys of objects too) with its path."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield (*where, key), key
            yield from _strings(item, (*where, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*where, index))


def _long_strings(raw: dict[str, Any]) -> Iterator[str]:
    for where, text in _strings(raw):
        if len(text) > MAX_NAME:
            yield jsonfile.json_path(where)


def _is_id(where: tuple[int | str, ...]) -> bool:
    """Whether the string at ``where`` is a conversation id or a figure's name: ids, which the corpus shares by design."""
    return (
        (where[:1] == ("conversations",) and len(where) == 2)
        or (where[:1] == ("points",) and where[2:] == ("conversation",))
        or (where[:1] == ("figures",) and len(where) == 2)
    )


def _benchmark_text(raw: dict[str, Any], corpus: Corpus) -> str | None:
    """The path of the first string of the file that is (or, when long, holds) a text of the corpus, or None."""
    texts: set[str] = set()
    for conversation in corpus.conversations:
        texts.add(conversation.description)
        for turn in conversation.turns:
            texts.add(turn.content)
            test = turn.test_at
            if test is not None:
                texts.update((test.question, test.expected_fact, *test.expected_keywords, *test.rubric))
                if test.category is not None:
                    texts.add(test.category)
    texts.discard("")
    long = [text for text in texts if len(text) >= _QUOTED]
    for where, text in _strings(raw):
        if _is_id(where):
            continue
        if text in texts or (len(text) > _QUOTED and any(quoted in text for quoted in long)):
            return jsonfile.json_path(where)
    return None


def _missing_points(board: BoardFile, corpus: Corpus) -> str | None:
    """What the file lacks of the corpus's test points (a run plays them all), or None."""
    given = {(p.conversation, p.turn) for p in board.points}
    if len(given) != len(board.points):
        return "a test point is listed twice"
    named = set(board.conversations)
    if len(named) != len(board.conversations):
        return "a conversation is listed twice"
    left_out = [c.id for c in corpus.conversations if c.id not in named]
    if left_out:
        return f"{len(left_out)} conversations of the corpus are not in the file (the first: {left_out[0]!r})"
    expected = {(c.id, index) for c in corpus.conversations for index, _ in c.test_points()}
    absent = sorted(expected - given)
    if absent:
        cid, turn = absent[0]
        return f"{len(absent)} test points of the corpus are not in the file (the first: {cid!r} turn {turn})"
    return None
