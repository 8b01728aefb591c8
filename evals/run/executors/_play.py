"""What every executor is given and returns, and the pieces of a play-through they share."""

from __future__ import annotations

import os
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evals.errors import EvalsError
from evals.model.corpus import Conversation, Corpus, Turn
from evals.model.results import MEMORY_WRITE, AnswerRun, RequestTally, RunResult
from evals.model.turn_refs import TurnLookup, record_turns
from evals.strategies._faults import PLUGIN_FAULTS, StrategyError, kind_of, plugin_fault
from evals.strategies.base import lone_surrogate

if TYPE_CHECKING:
    from evals.benchmarks.protocols import Protocol
    from evals.io.cache import Cache
    from evals.run.config import RunConfig
    from evals.run.llm import AskedPoint, ChatClient
    from evals.strategies import MemoryStrategy, Planned

__all__ = [
    "Executor",
    "NotPlayed",
    "PlayJob",
    "Played",
    "chat_client",
    "collector",
    "corpus_texts",
    "count_memory_writes",
    "play_planned",
    "prefetch_corpus",
    "prefetches",
    "protocol_arguments",
    "texts_of",
]

Progress = Callable[[int, int, str], None]


class NotPlayed(EvalsError):
    """An executor that could not begin to play (no Ray cluster to join): no run was made, so none failed, and
    nothing is stored. Any other error out of an executor's play is a failed run (evals.run.evaluate.PlayFailure)."""


@dataclass(frozen=True)
class PlayJob:
    """One run's play-through, planned and ready: what an executor needs to play it."""

    config: RunConfig  # the run's settings; a Ray worker plans its own strategy from them
    corpus: Corpus
    planned: Planned  # the strategy's configuration, as the run records it
    strategy: MemoryStrategy  # built in this process (played here by the local executor)
    cache: Cache | None = None  # embeddings and LLM replies across runs
    client: ChatClient | None = None  # answers (None: answers off)
    progress: Progress | None = None
    count_tokens: Callable[[list[str]], list[int]] | None = None  # the run's token counter (footprint, cutoffs)
    backoff: float = 1.0  # first wait before retrying an LLM request ($EVALS_LLM_BACKOFF)
    # The answer and judge protocols, their templates read (None: the harness's own prompts).
    protocols: tuple[Protocol, Protocol] | None = None
    # Scores a share of the run where it was played (an executor that plays shares in other processes calls it
    # there, :meth:`~evals.run.executors.LocalExecutor.scores_where_played`); None: scored after the play.
    score: Callable[[RunResult], Any] | None = None


@dataclass(frozen=True)
class Played:
    """What a play-through gives back to be scored and stored."""

    run: RunResult
    answers: AnswerRun | None = None
    scored: list[Any] | None = None  # what PlayJob.score gave each share, in corpus order, where shares were scored as played


class Executor(typing.Protocol):
    name: str

    def play(self, job: PlayJob) -> Played: ...


def texts_of(turn: Turn) -> tuple[str, ...]:
    """What a play-through embeds for a turn: its question (if a test point) and its content."""
    return (turn.test_at.question, turn.content) if turn.test_at is not None else (turn.content,)


def corpus_texts(conversations: Iterable[Conversation]) -> Iterator[str]:
    """Every text a play-through of ``conversations`` embeds, in play order (repeats included)."""
    return (text for conversation in conversations for turn in conversation.turns for text in texts_of(turn))


def prefetch_corpus(job: PlayJob, conversations: list[Conversation], progress: Progress | None = None) -> bool:
    """Embed every text of ``conversations`` up front, in batches and through the cache, by every embedder
    the run lent its strategy (:class:`evals.strategies.embedders.Embedders`), and by the strategy itself
    when it prefetches on its own (:class:`~evals.strategies.Prefetching`, a plug-in's own model). Whether
    anything was embedded up front (the run then reports the time apart from the calls it speeds up)."""
    lent, own = _prefetchers(job)
    if not lent and not own:
        return False
    texts = list(corpus_texts(conversations))
    for embedder in lent:
        embedder.prefetch(texts, progress)
    if own:
        try:
            job.strategy.prefetch(texts, progress)
        except EvalsError:
            raise
        except PLUGIN_FAULTS as exc:
            raise plugin_fault(job.planned.spec.name, "prefetch()", exc) from exc
    return True


def prefetches(job: PlayJob) -> bool:
    """Whether :func:`prefetch_corpus` will embed anything up front for ``job``."""
    lent, own = _prefetchers(job)
    return bool(lent) or own


def _prefetchers(job: PlayJob) -> tuple[list[Any], bool]:
    """The embedders lent to the strategy that cache, and whether the strategy prefetches on its own."""
    from evals.strategies import Prefetching

    lent = job.planned.context.embedders.caching() if job.planned.context.embedders is not None else []
    return lent, isinstance(job.strategy, Prefetching)


def collector(
    asked: dict[str, list[AskedPoint]], *, k: int, name: str = "", records: bool = False, seed: int = 42
) -> Callable[..., None]:
    """Keeps, at each test point, what its answer request is built from. By default (the harness's
    prompts) the messages the strategy would give a model for its question, with the run's ``k``, so
    the model sees as many records as were scored. With ``records`` (a published protocol, which
    writes the context itself) the records the point retrieved instead, each with the turn it is and
    that turn's role, speaker, session and date, and the question turn's date. ``name`` (the registry's
    name for the strategy) is for the error when context_for's messages are not chat messages."""
    from evals.run.llm import AskedPoint

    current: dict[str, Any] = {}  # the conversation being played: its turn lookup and speakers

    def collect(conversation_id: str, point: Any, strategy: Any, conversation: Conversation) -> None:
        context: list[dict[str, str]] = []
        if current.get("id") != conversation_id:
            current.clear()
            current.update(id=conversation_id, speakers=_speakers(conversation))
        extra: dict[str, Any] = {"speakers": current["speakers"][1]}
        if records:
            if "lookup" not in current:
                current["lookup"] = TurnLookup(conversation)
            extra = _dated(conversation, point, current["lookup"], current["speakers"])
        else:
            context = strategy.context_for(point.question, k=k)
            if not isinstance(context, list | tuple) or not all(
                isinstance(m, Mapping) and _text(m.get("role")) and _text(m.get("content")) for m in context
            ):
                raise StrategyError(
                    f"strategy {name or type(strategy).__name__}: context_for() must return a list of "
                    f"{{'role': str, 'content': str}} messages (text without lone surrogates); it returned {kind_of(context)}"
                )
        asked.setdefault(conversation_id, []).append(
            AskedPoint(
                conversation_id=conversation_id,
                turn_index=point.turn_index,
                question=point.question,
                expected_fact=point.expected_fact,
                expected_keywords=list(point.expected_keywords),
                context=[dict(m) for m in context],
                answerable=getattr(point, "answerable", True),
                category=getattr(point, "category", None),
                seed=seed,
                rubric=tuple(getattr(point, "rubric", ())),
                **extra,
            )
        )

    return collect


def _speakers(conversation: Conversation) -> tuple[dict[str, str], tuple[str, str]]:
    """Each role's speaker name where the dataset names speakers, and the two speakers, first speaker first."""
    from evals.benchmarks.protocols import speaker_names

    recorded = [turn for turn in conversation.turns if turn.record]
    named = speaker_names([t.role for t in recorded], [t.content for t in recorded])
    return named, (named.get("user", "user"), named.get("assistant", "assistant"))


def _dated(
    conversation: Conversation, point: Any, lookup: TurnLookup, speakers: tuple[dict[str, str], tuple[str, str]]
) -> dict[str, Any]:
    """The point's records as ContextRecords (turn, role, speaker, session, date; nothing for a record
    that is no turn), the question's date, the speakers, whether the records are the whole history, and the point's
    evidence turns as ContextRecords."""
    from evals.benchmarks.protocols import ContextRecord

    named, pair = speakers
    turns = conversation.turns
    found = record_turns(point.retrieved_records, lookup, point.turn_index)
    out = [
        ContextRecord(text) if index is None else _turn_record(conversation, index, named, text)
        for text, index in zip(point.retrieved_records, found, strict=True)
    ]
    whole = bool(found) and found == [i for i in range(point.turn_index) if turns[i].record]
    evidence = tuple(_turn_record(conversation, i, named) for i in point.evidence_turns if 0 <= i < len(turns))
    return {
        "records": tuple(out),
        "question_date": turns[point.turn_index].date,
        "speakers": pair,
        "whole_history": whole,
        "evidence": evidence,
    }


def _turn_record(conversation: Conversation, index: int, named: dict[str, str], text: str | None = None) -> Any:
    """Turn ``index`` as a ContextRecord (its role, speaker where its text names one, session and date); ``text``
    is the record's own text where a retrieved record is that turn."""
    from evals.benchmarks.protocols import ContextRecord

    turn = conversation.turns[index]
    text = turn.content if text is None else text
    speaker = named.get(turn.role)
    speaker = speaker if speaker is not None and text.startswith(f"{speaker}: ") else None
    return ContextRecord(text, index, turn.role, speaker, turn.session, turn.date)


def count_memory_writes(answers: AnswerRun | None, strategy: object) -> None:
    """Add the LLM requests a strategy made through its own client while it wrote (its ``write_usage``, a
    :class:`RequestTally`: graphiti's) to the run's memory-write tally and totals, as summary_buffer's
    requests through the run's client are; stored only with answers on, where a run keeps its tallies."""
    written = getattr(strategy, "write_usage", None)
    if answers is None or not isinstance(written, RequestTally) or not written.requests:
        return
    tally = answers.usage.get(MEMORY_WRITE)
    if tally is None or not tally.requests:  # no summary request: the strategy's model is the kind's
        answers.usage[MEMORY_WRITE] = tally = RequestTally(written.model, per=tally.per if tally is not None else 0)
    for name in ("sent", "cached", "prompt_tokens", "completion_tokens", "cached_prompt_tokens", "cached_completion_tokens"):
        setattr(tally, name, getattr(tally, name) + getattr(written, name))
    for key, count in written.served.items():
        tally.served[key] = tally.served.get(key, 0) + count
    answers.requests_made += written.sent
    answers.requests_cached += written.cached
    answers.prompt_tokens += written.prompt_tokens + written.cached_prompt_tokens
    answers.completion_tokens += written.completion_tokens + written.cached_completion_tokens


def play_planned(
    corpus: Corpus,
    strategy: MemoryStrategy,
    config: RunConfig,
    planned: Planned,
    asked: dict[str, list[AskedPoint]] | None,
    *,
    count_tokens: Callable[[list[str]], list[int]] | None,
    corpus_dir: str | None,
    progress: Progress | None = None,
) -> RunResult:
    """Play ``corpus`` through ``strategy`` under the run's settings and the strategy's declaration, as
    every executor plays; ``asked`` (None: answers off) gathers what each test point's answer is built from."""
    from evals.judge.metrics import BUDGETS
    from evals.run.playthrough import play_corpus

    run = play_corpus(
        corpus,
        strategy,
        k=config.k,
        seed=config.seed,
        cutoffs=config.cutoffs,
        budget=max(BUDGETS) if config.cutoffs else None,
        ignores_k=planned.spec.ignores_k,
        prefix_stable=planned.spec.prefix_stable,
        count_tokens=count_tokens,
        corpus_dir=corpus_dir,
        progress=progress,
        on_test_point=collector(asked, k=config.k, name=planned.spec.name, records=config.published, seed=config.seed)
        if asked is not None
        else None,
        configuration=planned.configuration,
        model=planned.model,
        source=planned.spec.source,
        call_timeout=config.call_timeout,
    )
    refuse_unwritten_memory(run, strategy, planned.spec.name)
    return run


def refuse_unwritten_memory(run: RunResult, strategy: object, name: str) -> None:
    """A memory that writes with an LLM (its ``write_usage``: mem0 with infer=true, graphiti, cognee), whose LLM
    answered, and that then retrieved nothing at any test point wrote nothing: its replies were nothing it could
    read (prose, JSON nested too deep to parse, ...), and a library may skip such a reply without a word. That is
    a failed run, not a score of 0: an EvalsError, and nothing is stored. Judged over what one play covers: the
    whole corpus here, each conversation on Ray."""
    written = getattr(strategy, "write_usage", None)
    if not isinstance(written, RequestTally) or not written.requests:
        return
    points = [point for conversation in run.conversations for point in conversation.test_points]
    if points and not any(point.retrieved_records for point in points):
        raise EvalsError(
            f"strategy {name} wrote nothing: its LLM answered {written.requests} write request"
            f"{'s' if written.requests != 1 else ''} ({written.model}), and it retrieved nothing at any of "
            f"{len(points)} test point{'s' if len(points) != 1 else ''}; were its LLM's replies what it reads? "
            "A memory that wrote nothing is a failed run, not a score"
        )


def protocol_arguments(protocols: tuple[Protocol, Protocol] | None) -> dict[str, Any]:
    """answer_run's protocol arguments (none: the harness's own prompts)."""
    return {} if protocols is None else {"protocol": protocols[0], "judge_protocol": protocols[1]}


def _text(value: Any) -> bool:
    """Whether ``value`` is text a request can carry (a str without lone surrogates)."""
    return isinstance(value, str) and lone_surrogate(value) is None


def chat_client(config: RunConfig, cache: Cache | None, api_key: str | None, backoff: float) -> ChatClient:
    """The chat client a run with answers uses (the key: ``api_key``, else $OPENAI_API_KEY)."""
    from evals.run.llm import ChatClient, RetryPolicy

    return ChatClient(
        base_url=config.endpoint(),
        api_key=api_key if api_key is not None else os.environ.get("OPENAI_API_KEY"),
        cache=cache,
        concurrency=config.concurrency,
        policy=RetryPolicy(timeout=config.request_timeout, retries=config.max_retries, backoff=backoff),
    )
