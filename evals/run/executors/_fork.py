"""Conversations played in forked processes, one per core: the local executor's ``jobs``.

Each child is a fork of the process that built the strategy, so it starts with the
corpus, the strategy and every module already in memory (nothing is sent to it,
nothing built again). The corpus is cut into neighbouring shares of about equal
work (turns) before the fork; each child plays its share through its copy of the
strategy exactly as a serial run plays it (``reset`` before each conversation),
and sends back its :class:`RunResult` pickled through a pipe. A record that is a
turn's text travels as that turn's number and comes back as the corpus's own
string, so the run holds what a serial run holds. The parent puts the
conversations back in corpus order: the run is the serial run, point by point,
apart from timings (each child's calls are listed together).

Forking is only safe in a process with no other threads, and only worth it for
work the children can do alone: :func:`can_fork` says when.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from evals.errors import EvalsError
from evals.model.corpus import Conversation, Corpus
from evals.model.results import RunResult, summed_costs

__all__ = ["FORK_ABOVE", "can_fork", "play_forked", "shares", "usable_cores"]

# Turns below which a corpus is played in one process: forking and sending the results back cost more
# than the play (the starter corpus's no_memory run is mostly start-up).
FORK_ABOVE = 5_000
# Libraries whose native thread pools do not survive a fork: a child that uses them may hang.
FORK_UNSAFE = ("torch",)


def usable_cores() -> int:
    """The processors this process may run on (its affinity), else the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def can_fork() -> bool:
    """Whether this process may fork children that go on running Python: no other thread (a lock
    another thread held at the fork stays held in the child forever) and no library whose
    native threads a child would need."""
    return hasattr(os, "fork") and threading.active_count() == 1 and not any(name in sys.modules for name in FORK_UNSAFE)


def shares(weights: list[int], jobs: int) -> list[range]:
    """The positions ``0..len(weights)`` cut into at most ``jobs`` runs of neighbours, each of about
    the same total weight (the work of playing it); none empty."""
    total, count = sum(weights), min(jobs, len(weights))
    out: list[range] = []
    begin, so_far = 0, 0
    for position, weight in enumerate(weights):
        so_far += weight
        left = len(weights) - position - 1  # positions after this one, for the shares still to cut
        if len(out) < count - 1 and (so_far * count >= total * (len(out) + 1) or left == count - 1 - len(out)):
            out.append(range(begin, position + 1))
            begin = position + 1
    out.append(range(begin, len(weights)))
    return [share for share in out if share]


def play_forked(
    corpus: Corpus,
    jobs: int,
    play: Callable[[Corpus], RunResult],
    progress: Callable[[int, int, str], None] | None = None,
    after: Callable[[RunResult], Any] | None = None,
) -> tuple[RunResult, list[Any]]:
    """``play(corpus)``'s run, with the conversations played by ``jobs`` forked children (each calls
    ``play`` on a corpus of its share); what a child raises is raised here. ``after`` is more work a child
    does on the run of its share, where it was played (scoring it); what it returns comes back too, one
    value per share in corpus order (none without ``after``)."""
    conversations = corpus.conversations
    held = getattr(conversations, "held", True)  # a big corpus is read as walked: its children read their share
    weights = [len(c.turns) + 1 for c in conversations] if held else [1] * len(conversations)
    clock = time.perf_counter()
    children: dict[int, tuple[int, range]] = {}  # read end -> (pid, its share)
    try:
        for share in shares(weights, jobs):
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: play, send, leave without running the parent's cleanup
                os.close(read_end)
                part = replace(corpus, conversations=conversations[share.start : share.stop])
                _child(write_end, part, play, after, numbered=held)
            os.close(write_end)
            children[read_end] = (pid, share)
        received = _gather(children)
    except BaseException:
        for pid, _ in children.values():
            _stop(pid)
        raise
    finally:
        for read_end in children:
            os.close(read_end)
    parts: list[RunResult] = []
    extras: list[Any] = []
    done = 0
    for read_end, (pid, share) in children.items():
        outcome, value, extra = pickle.loads(received.pop(read_end)) if received[read_end] else ("died", None, None)
        if outcome == "raised":
            raise value
        if outcome != "played":
            raise EvalsError(f"a process playing {len(share)} conversations ended without a result ({_how_it_ended(pid)})")
        _reap(pid)
        if held:
            for position, result in zip(share, value.conversations, strict=True):
                _restore_records(result, conversations[position])
        parts.append(value)
        if after is not None:
            extras.append(extra)
        done += len(share)
        if progress is not None:
            progress(done, len(conversations), value.conversations[-1].conversation_id)
    return _merged(parts, time.perf_counter() - clock), extras


def _child(
    write_end: int,
    corpus: Corpus,
    play: Callable[[Corpus], RunResult],
    after: Callable[[RunResult], Any] | None,
    *,
    numbered: bool,
) -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends the child; the parent says so, once
    try:
        try:
            run = play(corpus)
            extra = after(run) if after is not None else None  # before the records travel as turn numbers
            if numbered:
                for result, conversation in zip(run.conversations, corpus.conversations, strict=True):
                    _number_records(result, conversation)
            message = pickle.dumps(("played", run, extra), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:  # noqa: BLE001 - sent to the parent, which raises it
            try:
                message = pickle.dumps(("raised", exc, None), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 - an exception that does not pickle: its message, as an EvalsError
                message = pickle.dumps(("raised", EvalsError(f"{type(exc).__name__}: {exc}"), None))
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(message)
    finally:
        os._exit(0)


def _gather(children: dict[int, tuple[int, list[int]]]) -> dict[int, bytes]:
    """Everything each child writes, read as it comes (a child blocks on a full pipe otherwise)."""
    chunks: dict[int, list[bytes]] = {fd: [] for fd in children}
    open_ = set(children)
    while open_:
        ready, _, _ = select.select(list(open_), [], [])
        for fd in ready:
            data = os.read(fd, 1 << 20)
            if data:
                chunks[fd].append(data)
            else:
                open_.discard(fd)
    return {fd: b"".join(parts) for fd, parts in chunks.items()}


def _number_records(result: Any, conversation: Conversation) -> None:
    """Each record that is a turn's text replaced by that turn's number, to travel light."""
    index = {turn.content: i for i, turn in enumerate(conversation.turns)}
    for point in result.test_points:
        point.retrieved_records = [
            index.get(record, record) if type(record) is str else record for record in point.retrieved_records
        ]


def _restore_records(result: Any, conversation: Conversation) -> None:
    """Turn numbers back into the corpus's own strings (:func:`_number_records` undone)."""
    turns = conversation.turns
    for point in result.test_points:
        point.retrieved_records = [turns[r].content if type(r) is int else r for r in point.retrieved_records]


def _merged(parts: list[RunResult], seconds: float) -> RunResult:
    """One run from the children's (in corpus order): the conversations, every call's timing, the counts summed."""
    first = parts[0]
    timings = first.timings.model_copy(
        update={
            name: [n for part in parts for n in getattr(part.timings, name)]
            for name in ("add_ns", "retrieve_ns", "retrieve_held", "retrieve_queued_ns")
        }
        | summed_costs([part.timings for part in parts])
    )
    long = [part.long_retrievals for part in parts if part.long_retrievals is not None]
    return first.model_copy(
        update={
            "conversations": [result for part in parts for result in part.conversations],
            "timings": timings,
            "duration_s": seconds,
            "long_retrievals": sum(long) if long else None,
        }
    )


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _reap(pid)


def _how_it_ended(pid: int) -> str:
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return "not known"
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"
