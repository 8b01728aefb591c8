"""The ``--output`` document's size, and its compact form: records as the turns they are, not their texts.

The original harness's document writes every retrieved record's text at every test point. A ceiling
strategy (full_history) returns the whole history each time, so the document grows with test points
times history: 263 MB for LoCoMo, about 12 GB for a BEAM-10M-shaped tier (200 questions after 10M tokens
each). Such a document is refused before anything is written (:func:`check_texts_size`), in one line
naming its size and the option that gives the compact form, unless the texts were asked for by name.

The compact form (``evals run --output-records turns``) is the same document with ``"records":
"turns"`` at its top and, at each test point:

- ``retrieved_record_turns`` in place of ``retrieved_records``: per record, the index of the conversation
  turn it is (:mod:`evals.model.turn_refs`, the rule the store and evidence recall use), or the record's
  own text where it is no turn (a summary, an extracted memory); ``{"from": a, "to": b}`` when the
  records are exactly turns ``a`` … ``b - 1`` in order (full_history's whole history);
- ``retrieved_turns`` and ``ranked_turns`` as ``{"from": a, "to": b}`` where they are such a run,
  else lists as in the texts form;
- ``ranked_sessions`` as runs ``[[session, count], …]`` (consecutive equal sessions once).

Everything else (every metric, the questions, the expected facts) is as in the texts form, so the
original's ``jq`` recipe reads either. A record's text is the corpus turn's ``content`` at that index.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evals.errors import EvalsError
from evals.model.corpus import Conversation
from evals.model.results import RunResult
from evals.model.turn_refs import TurnLookup, locate_records

if TYPE_CHECKING:
    from evals.store import StoredOutcome

__all__ = ["TEXTS_LIMIT", "check_texts_size", "compact_document", "output_document", "texts_bytes"]

TEXTS_LIMIT = 1_000_000_000  # bytes: a texts document above this is refused unless asked for by name
_ENTRY = 14  # bytes a list entry costs beyond its text in the indented document: indent, quotes, comma, newline


def texts_bytes(run: RunResult) -> int:
    """About how many bytes the texts form of ``run``'s document takes (its test points' lists; the
    metrics are small beside them): each text as written, UTF-8 with JSON's escapes (a control character
    is six bytes, ``\\u0001``), not its characters, so text of escapes or of other scripts is not underestimated."""
    written = _written_bytes()
    total = 0
    for conversation in run.conversations:
        for point in conversation.test_points:
            records = point.retrieved_records
            total += sum(map(written, records)) + _ENTRY * len(records) + written(point.question) + written(point.expected_fact)
            for turns in (point.retrieved_turns, point.ranked_turns):
                total += (_ENTRY + 3) * len(turns) if turns else 0  # and a turn number's digits
            if point.ranked_sessions:
                total += sum(len(s) if s else 4 for s in point.ranked_sessions) + _ENTRY * len(point.ranked_sessions)
    return total


def _written_bytes() -> Any:
    """A function giving a string's bytes inside the document, as :func:`evals.views.report.dump_json` (orjson)
    writes it, less its quotes; each distinct text measured once (full_history repeats the same ones)."""
    import orjson

    sizes: dict[str, int] = {}

    def written(text: str) -> int:
        size = sizes.get(text)
        if size is None:
            if text.isascii() and text.isprintable():  # the common case, no encoding: only " and \ are escaped
                size = len(text) + text.count('"') + text.count("\\")
            else:
                try:
                    size = len(orjson.dumps(text)) - 2
                except TypeError:  # a lone surrogate, which orjson refuses (the document is refused too)
                    size = 6 * len(text)
            sizes[text] = size
        return size

    return written


def _size(count: int) -> str:
    return f"{count / 1e9:,.1f} GB" if count >= 1e9 else f"{count / 1e6:,.1f} MB"


def check_texts_size(run: RunResult, *, instead: str, limit: int | None = None) -> None:
    """Refuse, before anything is written, a texts document over ``limit`` bytes (:data:`TEXTS_LIMIT`);
    ``instead`` says what gives the compact form (``--output-records turns``, or the command to use)."""
    limit = TEXTS_LIMIT if limit is None else limit
    if _most_bytes(run) <= limit:  # far below the limit, as nearly every run is: no text need be measured
        return
    size = texts_bytes(run)
    if size > limit:
        raise EvalsError(
            f"the --output document would be about {_size(size)} with every retrieved record's text "
            f"(over {_size(limit)}; {run.strategy.get('name')} retrieves {_records_per_point(run):,.0f} records a test point "
            f"on average); {instead}"
        )


def _most_bytes(run: RunResult) -> int:
    """A bound on :func:`texts_bytes`, from characters alone: no character takes more than six bytes in the
    document (``\\u0001``; one outside the BMP is four bytes of UTF-8 for its one character)."""
    total = 0
    for conversation in run.conversations:
        for point in conversation.test_points:
            records = point.retrieved_records
            total += 6 * (sum(map(len, records)) + len(point.question) + len(point.expected_fact)) + _ENTRY * len(records)
            for turns in (point.retrieved_turns, point.ranked_turns):
                total += (_ENTRY + 3) * len(turns) if turns else 0
            if point.ranked_sessions:
                total += sum(6 * len(s) if s else 4 for s in point.ranked_sessions) + _ENTRY * len(point.ranked_sessions)
    return total


def _records_per_point(run: RunResult) -> float:
    points = [len(p.retrieved_records) for c in run.conversations for p in c.test_points]
    return sum(points) / len(points) if points else 0.0


def _span(turns: Sequence[int | None]) -> dict[str, int] | None:
    """``{"from": a, "to": b}`` when ``turns`` are exactly a, a+1, …, b-1 (at least two), else None."""
    if len(turns) < 2 or turns[0] is None or turns[-1] is None or turns[-1] - turns[0] != len(turns) - 1:
        return None
    start = turns[0]
    if isinstance(turns, range) or all(t == start + i for i, t in enumerate(turns)):
        return {"from": start, "to": start + len(turns)}
    return None


def _turn_list(turns: Sequence[int | None]) -> Any:
    span = _span(turns)
    return span if span is not None else list(turns)


def _runs(sessions: Sequence[str | None]) -> list[list[Any]]:
    """Consecutive equal sessions once each, with how many there are: ``[["batch 1", 60], …]``."""
    runs: list[list[Any]] = []
    for session in sessions:
        if runs and runs[-1][0] == session:
            runs[-1][1] += 1
        else:
            runs.append([session, 1])
    return runs


def _compact_point(point: dict[str, Any], refs: Sequence[int | None]) -> dict[str, Any]:
    """``point`` with its records as ``refs`` (per record, the turn it is, or None) say, and its turn lists compact."""
    out: dict[str, Any] = {}
    for key, value in point.items():
        if key == "retrieved_records":
            span = _span(refs)
            out["retrieved_record_turns"] = (
                span if span is not None else [r if r is not None else text for r, text in zip(refs, value, strict=True)]
            )
        elif key in ("retrieved_turns", "ranked_turns") and value is not None:
            out[key] = _turn_list(value)
        elif key == "ranked_sessions" and value is not None:
            out[key] = _runs(value)
        else:
            out[key] = value
    return out


def _located(point: dict[str, Any], lookup: TurnLookup) -> Sequence[int | None]:
    refs, _, span = locate_records(list(point["retrieved_records"]), lookup, point["turn_index"])
    return range(*span) if span is not None else [r if r >= 0 else None for r in refs]


def compact_document(
    document: dict[str, Any],
    conversations: Iterable[Conversation] = (),
    record_turns: dict[str, list[list[int | None]]] | None = None,
) -> dict[str, Any]:
    """The compact form of a texts document: each point's records as the turns they are, as ``record_turns``
    says (a stored run's: conversation id -> per test point, per record, the turn or None), else as the
    turns of ``conversations`` (the run's corpus, read one conversation at a time) give them."""
    entries = {entry["conversation_id"]: i for i, entry in enumerate(document["conversations"])}
    compact: list[Any] = list(document["conversations"])
    if record_turns is not None:
        for cid, at in entries.items():
            refs = record_turns.get(cid, [])
            points = compact[at]["test_points"]
            if len(refs) != len(points):
                raise EvalsError(f"the stored run holds {len(refs)} test points of conversation {cid}, not {len(points)}")
            compact[at] = {**compact[at], "test_points": [_compact_point(p, r) for p, r in zip(points, refs, strict=True)]}
        entries = {}
    for conversation in conversations if entries else ():
        at = entries.pop(conversation.id, None)
        if at is None:
            continue
        lookup = TurnLookup(conversation)
        points = compact[at]["test_points"]
        compact[at] = {**compact[at], "test_points": [_compact_point(p, _located(p, lookup)) for p in points]}
        if not entries:
            break
    if entries:
        missing = ", ".join(sorted(entries)[:3])
        raise EvalsError(f"the corpus no longer holds conversation {missing}: the records cannot be written as its turns")
    out: dict[str, Any] = {}
    for key, value in document.items():
        if key == "conversations":
            out["records"] = "turns"
            value = compact
        out[key] = value
    return out


def output_document(document: dict[str, Any], outcome: StoredOutcome, corpus: Path, records: str | None) -> dict[str, Any]:
    """``evals run --output``'s document in the form ``records`` asks for: ``texts`` (the original's shape),
    ``turns`` (:func:`compact_document`: a reused run's records as the store holds them; a new run's
    mapped to the turns of the corpus it played), or None: texts, refused over :data:`TEXTS_LIMIT`
    bytes by :func:`check_texts_size`. ``corpus`` is the corpus folder, read if the outcome has neither."""
    if records == "turns":
        if outcome.record_turns is not None:
            return compact_document(document, record_turns=outcome.record_turns)
        played = outcome.corpus
        if played is None:
            from evals.model.corpus import load_corpus

            played = load_corpus(corpus)
            if outcome.run.corpus_digest and played.digest != outcome.run.corpus_digest:
                raise EvalsError(
                    f"{corpus} is no longer the corpus run {outcome.run_id} played: its records cannot be written as its turns"
                )
        return compact_document(document, played.conversations)
    if records is None:
        check_texts_size(
            outcome.run,
            instead=f"--output-records turns writes each record as the turn it is (run {outcome.run_id} is stored: the "
            "same command with it reuses the run, unless --force or --no-cache); --output-records texts writes the texts anyway",
        )
    return document
