"""``--executor ray``: conversations played as tasks on a Ray cluster.

The driver (the process running ``evals run``) does what needs the run's files
and state; the workers do the work:

1. **Embeddings.** For a strategy the run lent an embedder that caches its vectors
   (``context.embedder("minilm")``: mneme with a real embedder, mem0), the driver looks every
   distinct text of the corpus up in the cache, cuts the missing ones into the
   chunks a local run would compute (so MiniLM's vectors come out bit for bit
   the same) and sends each chunk to a task (``--ray-gpus`` GPUs each, where
   the cluster has them). Shared haystack texts are embedded once. The driver
   writes the vectors to the cache as chunks come back.
2. **Conversations.** Each conversation is a task: a fresh strategy built from
   the run's configuration (the registry plans it on the worker), given the
   vectors of that conversation's texts, plays the conversation and, with
   answers on, answers its test points. Look-ups the task's snapshot cannot
   answer (LLM replies) go to a read-only reader of the driver's cache file;
   whatever the task computes (replies, summaries) comes back with its result.
3. **Gathering.** Results are put back in corpus order, progress is reported
   as conversations complete, and the driver writes to the cache what the
   workers computed. A task whose worker dies is retried by Ray
   (:data:`MAX_RETRIES` times); if some conversation still cannot be played,
   the run is refused with the conversations named, and nothing is returned
   to be stored.

The run is the local run's, test point by test point: each conversation is
played alone in both (``reset`` before each; ``random_k`` seeds its draws by
the conversation's id). Timings differ, and so may the counts of LLM requests
made and cached: two conversations asking the same request each make it.
"""

from __future__ import annotations

import logging
import math
import os
import re
import socket
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evals.errors import EvalsError
from evals.io.cache import CacheReader
from evals.model.corpus import Conversation, Corpus
from evals.model.formatting import whole_number
from evals.model.results import AnswerRun, CallTimings, ConversationResult, RunResult, merge_usage, summed_costs
from evals.run.executors._play import (
    NotPlayed,
    Played,
    PlayJob,
    chat_client,
    corpus_texts,
    count_memory_writes,
    play_planned,
    protocol_arguments,
)
from evals.run.executors._worker_cache import WorkerCache
from evals.strategies import Prefetching
from evals.strategies._faults import PLUGIN_FAULTS, plugin_fault

if TYPE_CHECKING:
    from evals.run.config import RunConfig
    from evals.run.llm import AskedPoint

__all__ = ["CONNECT_TIMEOUT", "MAX_GPUS", "MAX_RETRIES", "PROBE_TIMEOUT", "RayExecutor", "address_problem"]

# Ray retries a task whose worker process died (not one that raised) this many times.
MAX_RETRIES = 3
# Seconds to wait for a TCP answer at a cluster's address, then for Ray to join it; Ray alone
# retries an address where nothing answers for minutes.
PROBE_TIMEOUT = 5.0
CONNECT_TIMEOUT = 12.0
MAX_GPUS = 64  # what one embedding task may ask for (--ray-gpus)
# Failed conversations named in the error, at most.
NAMED_FAILURES = 10


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise EvalsError("--executor ray needs the optional 'ray' extra: pip install -e '.[ray]'") from None
    return ray


@dataclass(frozen=True)
class _Settings:
    """What every conversation task shares besides the configuration."""

    corpus_dir: str
    directory: str
    digest: str
    backoff: float
    exact_tokens: bool  # whether the driver counts with cl100k_base (else the estimate): workers count alike
    protocols: Any = None  # the answer and judge protocols as the driver read them (workers need not have the files)


@dataclass
class _Outcome:
    """One conversation's play, as a task returns it."""

    result: ConversationResult
    timings: CallTimings
    written: dict[str, dict[str, bytes]]  # cache entries the task computed, by namespace
    answers: AnswerRun | None
    cutoffs: list[int]  # as the play-through recorded them (the same for every conversation)
    cutoff_rule: str
    long_retrievals: int | None = None  # retrievals longer than asked for (RunResult.long_retrievals)


class RayExecutor:
    """Plays each conversation as a Ray task; see the module docstring."""

    name = "ray"

    def __init__(self, *, address: str | None = None, gpus: float = 0.0, max_retries: int = MAX_RETRIES) -> None:
        # Checked here, before any work: Ray takes nan GPUs with a traceback deep in a task, or not at all.
        if not (isinstance(gpus, int | float) and math.isfinite(gpus) and 0 <= gpus <= MAX_GPUS):
            raise EvalsError(f"--ray-gpus must be a finite number from 0 to {MAX_GPUS}, not {gpus!r}")
        problem = None if address is None else address_problem(address)
        if problem is not None:
            raise EvalsError(f"--ray-address {address}: {problem}")
        self.address = address
        self.gpus = gpus
        self.max_retries = max_retries

    def play(self, job: PlayJob) -> Played:
        try:  # no cluster, no play: the run did not fail, it never began (NotPlayed: nothing is stored)
            ray = _import_ray()
            started_here = False
            if not ray.is_initialized():
                _connect(ray, self.address)
                started_here = True
        except NotPlayed:
            raise
        except EvalsError as exc:
            raise NotPlayed(str(exc)) from None
        try:
            return self._play(ray, job)
        finally:
            if started_here:
                ray.shutdown()

    # -- the driver ------------------------------------------------------------------------------

    def _play(self, ray: Any, job: PlayJob) -> Played:
        config, corpus, planned = job.config, job.corpus, job.planned
        started_at = datetime.now(UTC)
        clock = time.perf_counter()
        config_ref = ray.put(config)
        embedder = _lent_embedder(planned)
        if embedder is not None:
            self._embed(ray, embedder, corpus, config_ref, job)
        # As a local run reports it: the up-front embedding of a strategy that prefetches (here,
        # on the cluster), apart from the calls it speeds up.
        prefetched = embedder is not None or isinstance(job.strategy, Prefetching)
        prefetch_ns = round((time.perf_counter() - clock) * 1e9) if prefetched else None
        exact = getattr(getattr(job.count_tokens, "__self__", None), "is_exact", True)
        settings = _Settings(config.corpus_dir, str(corpus.directory), corpus.digest, job.backoff, exact, job.protocols)
        reader = self._start_reader(ray, job)
        try:
            outcomes, failures = self._play_conversations(ray, job, config_ref, settings, embedder, reader)
        finally:
            if reader is not None:
                ray.kill(reader)
        if job.cache is not None:  # what the workers computed, even for a run that failed
            for outcome in outcomes.values():
                for namespace, items in outcome.written.items():
                    job.cache.put_many(namespace, items)
        if failures:
            raise EvalsError(_failure_message(failures, len(corpus.conversations)))
        ordered = [outcomes[c.id] for c in corpus.conversations]
        run = RunResult(
            strategy=planned.configuration,
            model=planned.model,
            strategy_source=planned.spec.source,
            timings=CallTimings(
                add_ns=[n for o in ordered for n in o.timings.add_ns],
                retrieve_ns=[n for o in ordered for n in o.timings.retrieve_ns],
                retrieve_held=[n for o in ordered for n in o.timings.retrieve_held],
                retrieve_queued_ns=[n for o in ordered for n in o.timings.retrieve_queued_ns],
                prefetch_ns=prefetch_ns,
                **summed_costs([o.timings for o in ordered]),
            ),
            k=config.k,
            seed=config.seed,
            cutoffs=ordered[0].cutoffs,
            cutoff_rule=ordered[0].cutoff_rule,
            corpus_dir=config.corpus_dir,
            corpus_digest=corpus.digest,
            benchmark=corpus.benchmark,
            started_at=started_at,
            duration_s=time.perf_counter() - clock,
            conversations=[_shared_texts(o.result, c) for o, c in zip(ordered, corpus.conversations, strict=True)],
            long_retrievals=_total([o.long_retrievals for o in ordered]),
        )
        answers = _merge_answers([o.answers for o in ordered]) if config.answers_on else None
        return Played(run, answers)

    def _embed(self, ray: Any, embedder: Any, corpus: Corpus, config_ref: Any, job: PlayJob) -> None:
        """Compute the vectors the cache lacks on the cluster, in the chunks a local run would use."""
        from evals.strategies.embedders import PREFETCH_CHUNK

        missing = embedder.lookup(corpus_texts(corpus.conversations))
        if not missing:
            return
        task = ray.remote(_embed_chunk).options(num_gpus=self.gpus, max_retries=self.max_retries)
        chunks = {task.remote(config_ref, chunk, self.gpus): chunk for chunk in _chunks(missing, PREFETCH_CHUNK)}
        done = 0
        pending = list(chunks)
        while pending:
            ready, pending = _wait_or_cancel(ray, pending)
            chunk = chunks[ready[0]]
            try:
                vectors = ray.get(ready[0])
            except Exception as exc:  # noqa: BLE001 - a worker's error or its death
                for ref in pending:
                    ray.cancel(ref)
                raise EvalsError(
                    f"embedding {len(chunk)} texts on Ray failed, so no conversation was played: "
                    f"{_reason(ray, exc, self.max_retries)}"
                ) from None
            embedder.accept(chunk, vectors)
            done += len(chunk)
            if job.progress is not None:
                job.progress(done, len(missing), "embeddings")

    def _start_reader(self, ray: Any, job: PlayJob) -> Any:
        """A read-only reader of the cache file on this machine, for look-ups the snapshots cannot answer."""
        cache = job.cache
        path = getattr(cache, "path", None)
        if path is None or not Path(path).exists():
            return None
        cache.close()  # the reader opens the file; this process reopens it to write afterwards
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = ray.get_runtime_context().get_node_id()
        actor = ray.remote(CacheReader).options(
            num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=here, soft=False)
        )
        return actor.remote(Path(path).resolve())

    def _play_conversations(
        self, ray: Any, job: PlayJob, config_ref: Any, settings: _Settings, embedder: Any, reader: Any
    ) -> tuple[dict[str, _Outcome], dict[str, str]]:
        task = ray.remote(_play_conversation).options(max_retries=self.max_retries)
        conversations = job.corpus.conversations
        # A bounded number of tasks in flight, so the driver never holds every conversation's arguments.
        window = max(4, 2 * int(ray.cluster_resources().get("CPU", 2)))
        outcomes: dict[str, _Outcome] = {}
        failures: dict[str, str] = {}
        running: dict[Any, str] = {}
        queue = iter(conversations)

        def submit() -> None:
            conversation = next(queue, None)
            if conversation is None:
                return
            snapshot = {embedder.namespace: embedder.entries(corpus_texts([conversation]))} if embedder is not None else {}
            running[task.remote(config_ref, conversation, snapshot, reader, settings)] = conversation.id

        for _ in range(window):
            submit()
        while running:
            ready, _ = _wait_or_cancel(ray, list(running))
            conversation_id = running.pop(ready[0])
            try:
                outcomes[conversation_id] = ray.get(ready[0])
            except Exception as exc:  # noqa: BLE001 - a worker's error or its death, reported below
                failures[conversation_id] = _reason(ray, exc, self.max_retries)
            submit()
            if job.progress is not None:
                job.progress(len(outcomes) + len(failures), len(conversations), conversation_id)
        return outcomes, failures


def address_problem(address: str) -> str | None:
    """Why ``address`` names no Ray cluster (None when it may): ``auto``, ``local``, or a host and a
    port, ``[ray://]HOST:PORT``."""
    if address in ("auto", "local") or _endpoint(address) is not None:
        return None
    return "not HOST:PORT (a port from 1 to 65535 in ASCII digits), ray://HOST:PORT, auto or local"


def _endpoint(address: str) -> tuple[str, int] | None:
    """The host and port a Ray address names (``host:port``, ``ray://host:port``), or None
    when it names none (``auto``: the cluster ``ray start`` recorded on this machine)."""
    rest = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = rest.rpartition(":")
    number = whole_number(port)  # ASCII digits only: '²' passes str.isdigit() and then fails int()
    if not sep or number is None or not 0 < number < 65536:
        return None
    return host.strip("[]") or "127.0.0.1", number


def _connect(ray: Any, address: str | None) -> None:
    """Start a local instance, or join the cluster at ``address`` ($RAY_ADDRESS when None), within
    :data:`CONNECT_TIMEOUT` seconds: Ray itself keeps retrying an address where nothing answers for minutes."""
    given = address if address is not None else os.environ.get("RAY_ADDRESS") or None
    options = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR}
    if given is None or given == "local":
        # "local", not None: None would join whatever cluster `ray start` last recorded on this machine.
        try:
            ray.init(address="local", **options)
        except KeyboardInterrupt:
            ray.shutdown()  # the processes of a half-started instance go with it, not left running
            raise
        except Exception as exc:  # noqa: BLE001 - ray raises RuntimeError, ValueError...
            raise EvalsError(f"cannot start a local Ray instance: {type(exc).__name__}: {_first_line(exc)}") from None
        return
    where = f"Ray at {given} (from {'--ray-address' if address is not None else 'RAY_ADDRESS'})"
    problem = address_problem(given)
    if problem is not None:
        raise EvalsError(f"{where}: {problem}")
    remedy = (
        "start a cluster there (ray start --head), give another --ray-address or RAY_ADDRESS, or neither for a local instance"
    )
    endpoint = _endpoint(given)
    if endpoint is not None:
        try:
            socket.create_connection(endpoint, timeout=PROBE_TIMEOUT).close()
        except OSError as exc:
            reason = "no answer" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
            raise EvalsError(f"cannot reach {where}: nothing answers there ({reason}); {remedy}") from None
    failure = _init_within(ray, given, options, CONNECT_TIMEOUT)
    if failure is not None:
        raise EvalsError(f"cannot join {where}: {failure}; {remedy}") from None


def _init_within(ray: Any, address: str, options: dict[str, Any], timeout: float) -> str | None:
    """``ray.init(address)`` given ``timeout`` seconds; None when it joined, else why not.

    It runs in a daemon thread, so one that hangs (something answers, but not as a Ray cluster
    this driver can join) is left behind when the command exits. Ray's own retry messages,
    written straight to file descriptor 2, go to a scratch file meanwhile: the user gets one line."""
    outcome: list[BaseException | None] = []

    def init() -> None:
        try:
            ray.init(address=address, **options)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - reported by the caller
            outcome.append(exc)

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as scratch:
        try:
            os.dup2(scratch.fileno(), 2)
            thread = threading.Thread(target=init, name="ray-connect", daemon=True)
            thread.start()
            thread.join(timeout)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        scratch.seek(0)
        said = scratch.read().decode("utf-8", "replace")
    if not outcome:
        last = _last_complaint(said)
        return f"no Ray cluster answered within {timeout:g} s" + (f" (Ray said: {last})" if last else "")
    if outcome[0] is not None:
        return f"{type(outcome[0]).__name__}: {_first_line(outcome[0])}"
    return None


_LOG_PREFIX = re.compile(r"^\[[^\]]*\]\s*")  # "[2026-12-03 21:54:14,660 W 1295 1295] "


def _last_complaint(text: str) -> str:
    """The last warning or error Ray's core wrote, without its timestamp (say, a cluster that wants an auth token)."""
    lines = [line for line in text.splitlines() if re.match(r"^\[[^\]]* [WEF] ", line)]
    return _LOG_PREFIX.sub("", lines[-1]).strip()[:300] if lines else ""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def _wait_or_cancel(ray: Any, refs: list[Any]) -> tuple[list[Any], list[Any]]:
    """``ray.wait`` for the next of ``refs``; on Ctrl-C, cancel them all (their workers are stopped,
    on a cluster of one's own or another's) before the interrupt goes on, so nothing keeps running."""
    try:
        return ray.wait(refs, num_returns=1)
    except KeyboardInterrupt:
        for ref in refs:
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 - already finished, or the cluster is gone: nothing to stop
                pass
        raise


def _lent_embedder(planned: Any) -> Any:
    """The caching embedder the run lent its strategy (one; None when it lent none), once it is built."""
    lent = planned.context.embedders.caching() if planned.context.embedders is not None else []
    return lent[0] if lent else None


def _chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[begin : begin + size] for begin in range(0, len(items), size)]


def _reason(ray: Any, exc: Exception, retries: int) -> str:
    """What went wrong in a task, in one line."""
    if isinstance(exc, ray.exceptions.RayTaskError):
        cause = exc.cause if exc.cause is not None else exc
        if isinstance(cause, EvalsError):
            return str(cause)
        return f"{type(cause).__name__}: {cause}"
    if isinstance(exc, ray.exceptions.WorkerCrashedError | ray.exceptions.NodeDiedError | ray.exceptions.OutOfMemoryError):
        return f"its worker died on each of {retries + 1} attempts ({type(exc).__name__})"
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")


def _failure_message(failures: dict[str, str], total: int) -> str:
    named = [f"{cid!r} ({reason})" for cid, reason in list(failures.items())[:NAMED_FAILURES]]
    more = f", and {len(failures) - NAMED_FAILURES} more" if len(failures) > NAMED_FAILURES else ""
    return f"{len(failures)} of {total} conversations could not be played on Ray, so the run failed: {'; '.join(named)}{more}"


def _shared_texts(result: ConversationResult, conversation: Conversation) -> ConversationResult:
    """The result with each record that is a turn's text made that turn's string: a worker's
    records arrive as copies, and full_history's alone would hold the corpus once more."""
    turns = {turn.content: turn.content for turn in conversation.turns}
    for point in result.test_points:
        point.retrieved_records = [turns.get(record, record) for record in point.retrieved_records]
    return result


def _total(counts: list[int | None]) -> int | None:
    """The run's count from the conversations' (None when none was counted, as a local run leaves it)."""
    known = [n for n in counts if n is not None]
    return sum(known) if known else None


def _merge_answers(parts: list[AnswerRun | None]) -> AnswerRun:
    runs = [p for p in parts if p is not None]
    first = runs[0]
    return AnswerRun(
        answer_model=first.answer_model,
        judge_model=first.judge_model,
        base_url=first.base_url,
        points=[points for run in runs for points in run.points],
        settings=first.settings,
        requests_made=sum(r.requests_made for r in runs),
        requests_cached=sum(r.requests_cached for r in runs),
        prompt_tokens=sum(r.prompt_tokens for r in runs),
        completion_tokens=sum(r.completion_tokens for r in runs),
        usage=merge_usage([r.usage for r in runs]),
        protocol=first.protocol,
        protocol_source=first.protocol_source,
    )


# -- the workers ---------------------------------------------------------------------------------

# The strategy an embedding worker built for a configuration, kept for its next chunk (mem0 takes seconds to build).
_EMBEDDERS: dict[str, Any] = {}
_REGISTRY: list[Any] = []


def _registry() -> Any:
    """The installed strategies, found once per worker process (reading entry points takes ~20 ms a task)."""
    if not _REGISTRY:
        from evals.strategies import Registry

        _REGISTRY.append(Registry())
    return _REGISTRY[0]


def _embed_chunk(config: RunConfig, texts: list[str], gpus: float) -> list[bytes]:
    """A Ray task: the vectors of ``texts`` as float32 bytes, computed by the configuration's embedder."""
    if gpus:
        import ray

        if ray.get_gpu_ids():
            from evals.strategies.embedders import prefer_device

            prefer_device("cuda")
    key = config.model_dump_json()
    if key not in _EMBEDDERS:
        planned = config.plan(_registry())
        planned.build()  # the strategy asks the run for its embedder as it is built
        _EMBEDDERS[key] = _lent_embedder(planned)
    return _EMBEDDERS[key].compute(texts)


def _play_conversation(
    config: RunConfig, conversation: Conversation, snapshot: dict[str, dict[str, bytes]], reader: Any, settings: _Settings
) -> _Outcome:
    """A Ray task: play one conversation through a fresh strategy and answer its test points."""
    from evals.model.tokens import TokenCounter

    cache = WorkerCache(snapshot, reader)
    client = chat_client(config, cache, None, settings.backoff) if config.answers_on else None
    strategy = None
    try:
        planned = config.plan(_registry(), cache=cache, client=client)
        strategy = planned.build()
        if isinstance(strategy, Prefetching):
            try:
                strategy.prefetch(corpus_texts([conversation]))
            except EvalsError:
                raise
            except PLUGIN_FAULTS as exc:  # one line naming the strategy and the call, as a local run says it
                raise plugin_fault(planned.spec.name, "prefetch()", exc) from exc
        corpus = Corpus(directory=Path(settings.directory), conversations=[conversation], digest=settings.digest)
        asked: dict[str, list[AskedPoint]] = {}
        run = play_planned(
            corpus,
            strategy,
            config,
            planned,
            asked if client is not None else None,
            count_tokens=TokenCounter(exact=settings.exact_tokens).counts,
            corpus_dir=settings.corpus_dir,
        )
        answers = None
        if client is not None:
            from evals.run.llm import answer_run

            answers = answer_run(
                client,
                [asked.get(conversation.id, [])],
                answer_model=config.answer_model,
                judge_model=config.judge_model if config.judge else None,
                judge_repeats=config.judge_repeats if config.judge else 1,
                call_timeout=config.call_timeout,
                **protocol_arguments(settings.protocols),
            )
            count_memory_writes(answers, strategy)
    finally:
        if client is not None:
            client.close()
        close = getattr(strategy, "close", None)
        if callable(close):
            close()
    written = {ns: dict(e) for ns, e in cache.written.items() if e}
    return _Outcome(
        run.conversations[0], run.timings or CallTimings(), written, answers, run.cutoffs, run.cutoff_rule, run.long_retrievals
    )
