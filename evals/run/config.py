"""A run's settings: everything that decides its numbers, in one place (:class:`RunConfig`).

It sits below the executors, which carry it to where the conversations play
(a Ray worker plans its own strategy from it), and below :mod:`evals.run.evaluate`,
which runs it end to end.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from evals.benchmarks import ProtocolName
from evals.errors import EvalsError
from evals.model.corpus import MAX_CUTOFF  # one bound for --cutoffs and a references.json k
from evals.model.results import DEFAULT_CUTOFFS, MAX_K, MAX_SEED, MIN_SEED
from evals.strategies import BuildContext, Planned, Registry
from evals.strategies._deadline import MAX_CALL_TIMEOUT

if TYPE_CHECKING:
    from evals.benchmarks.protocols import Protocol
    from evals.io.cache import Cache

__all__ = [
    "MAX_CONCURRENCY",
    "MAX_CUTOFF",
    "MAX_JUDGE_REPEATS",
    "MAX_REQUEST_TIMEOUT",
    "MAX_RETRIES",
    "RunConfig",
    "legacy_flag_options",
    "model_name_problem",
]

# Bounds of the LLM settings: generous, but finite, so a typo is refused before a run starts.
MAX_CONCURRENCY = 256
MAX_REQUEST_TIMEOUT = 3600
MAX_RETRIES = 100
MAX_JUDGE_REPEATS = 20  # each repeat is a paid request per judged point; 20 is sd enough
MAX_MODEL_CHARS = 256
# The protocols a configuration may name are the registered units' (evals.benchmarks.ProtocolName), checked
# without loading any template.


def model_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a model name (--answer-model, --judge-model), or None. A blank name
    would be sent, recorded and shown as if it named a model."""
    if not name.strip():
        return "a model name cannot be blank"
    if name != name.strip():
        return f"{name!r} has spaces around it"
    if len(name) > MAX_MODEL_CHARS:
        return f"a model name is at most {MAX_MODEL_CHARS} characters"
    if not name.isprintable():
        return f"{name!r} holds control characters"
    return None


class RunConfig(BaseModel):
    """Everything that decides a run's numbers, in one place."""

    model_config = ConfigDict(frozen=True)

    strategy: str = "mneme"  # the CLI's --runner: a registered name or package.module:factory
    # The strategy's options (--option key=value), validated by its own options model.
    options: dict[str, Any] = Field(default_factory=dict)
    corpus: Path = Path("corpus")
    # The corpus folder as the user gave it, recorded with the run (``corpus_dir``) when ``corpus`` is
    # that path made absolute (the CLI does, before any plug-in code could change the working directory).
    corpus_as_given: str | None = None
    k: int = Field(default=5, ge=1, le=MAX_K)
    # Depths the retrieval metrics are measured at, beside k (--cutoffs); () measures at k only, as the
    # original harness did (python -m evals).
    cutoffs: tuple[int, ...] = DEFAULT_CUTOFFS
    seed: int = Field(default=42, ge=MIN_SEED, le=MAX_SEED)
    # End-to-end answers (--with-answers) and their judge (--judge, which implies answers).
    # The API key is deliberately not a setting: it never travels with the run.
    with_answers: bool = False
    judge: bool = False
    answer_model: str = "gpt-4o-mini"
    # Not given (None): the judge protocol's own judge model (the harness's: gpt-4o-mini).
    judge_model: str = None  # type: ignore[assignment] - always a name once validated
    # How answers are asked for, judged and counted (evals.benchmarks.protocols): the harness's own prompts, or a
    # published benchmark's, read from its pinned files. A published protocol implies answers, and a
    # judge where it has one. judge_protocol (None: the answer protocol) judges and counts them:
    # answers of one protocol re-judged under another's judge, served from the cache.
    protocol: ProtocolName = "harness"
    judge_protocol: ProtocolName | None = None
    # The root of the benchmark repository's tree at the pinned commit (--protocol-source), for the first
    # published protocol of the two (a judge protocol of another repository is read from the downloads
    # folder); None: the files `evals fetch` downloaded, in ``downloads`` (None: $EVALS_DOWNLOADS, else
    # the default). Where the files were read is not part of any key: their digests are.
    protocol_source: Path | None = None
    downloads: Path | None = None
    # Each verdict asked this many times (--judge-repeats): the run reports accuracy's mean and sd over them.
    judge_repeats: int = Field(default=1, ge=1, le=MAX_JUDGE_REPEATS)
    base_url: str | None = None  # None: $OPENAI_BASE_URL, else OpenAI's
    concurrency: int = Field(default=4, ge=1, le=MAX_CONCURRENCY)
    request_timeout: float = Field(default=60.0, gt=0, le=MAX_REQUEST_TIMEOUT, allow_inf_nan=False)
    max_retries: int = Field(default=5, ge=0, le=MAX_RETRIES)
    # Seconds any one call into the strategy may take (--call-timeout; None: no limit). It decides no
    # number, only whether a run finishes, so it is not part of the reuse key.
    call_timeout: float | None = Field(default=None, gt=0, le=MAX_CALL_TIMEOUT, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _no_mneme_fields(cls, data: Any) -> Any:
        """Mneme's backend and embedder are its options now: a configuration naming them as settings (as
        ``RunConfig(embedder=...)`` once did) is refused with the form that replaced them, never ignored."""
        if isinstance(data, dict):
            for name in ("backend", "embedder"):
                if name in data:
                    raise ValueError(f"{name} is Mneme's option now: options={{{name!r}: {data[name]!r}}}")
        return data

    @model_validator(mode="before")
    @classmethod
    def _protocol_implies(cls, data: Any) -> Any:
        """A published protocol implies answers, and a judge where its judge protocol has one (with
        that protocol's judge model unless one is given)."""
        if not isinstance(data, dict):
            return data
        from evals.benchmarks import HARNESS, HARNESS_JUDGE, no_judge_refusal, protocol_judges

        data = dict(data)
        protocol = data.get("protocol") or "harness"
        grader = data.get("judge_protocol") or protocol
        if protocol == grader == HARNESS:  # the harness's own (every plain run): no unit is loaded to know its judge
            if data.get("judge_model") is None:
                data["judge_model"] = HARNESS_JUDGE
            return data
        judges = protocol_judges()  # the units' declarations: no protocol loaded
        if protocol not in judges or grader not in judges:
            return data  # the field's own check says so
        if protocol != "harness" or grader != "harness":
            data["with_answers"] = True
            if judges[grader] is not None:
                data["judge"] = True
            elif data.get("judge"):
                raise ValueError(no_judge_refusal(grader))
        if data.get("judge_model") is None:
            data["judge_model"] = judges[grader] or judges["harness"]
        return data

    @field_validator("answer_model", "judge_model")
    @classmethod
    def _model_named(cls, name: str) -> str:
        problem = model_name_problem(name)
        if problem is not None:
            raise ValueError(problem)
        return name

    @field_validator("base_url")
    @classmethod
    def _base_url_usable(cls, url: str | None) -> str | None:
        if url is None:
            return None
        from evals.io.endpoints import check_base_url

        try:
            return check_base_url(url)
        except EvalsError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("cutoffs")
    @classmethod
    def _cutoffs_in_range(cls, cutoffs: tuple[int, ...]) -> tuple[int, ...]:
        for cutoff in cutoffs:
            if not 1 <= cutoff <= MAX_CUTOFF:
                raise ValueError(f"a cutoff must be from 1 to {MAX_CUTOFF}, not {cutoff}")
        return tuple(sorted(set(cutoffs)))

    @property
    def corpus_dir(self) -> str:
        """The corpus folder as recorded with the run: as the user gave it."""
        return self.corpus_as_given if self.corpus_as_given is not None else str(self.corpus)

    @property
    def answers_on(self) -> bool:
        return self.with_answers or self.judge

    def endpoint(self) -> str:
        """The chat endpoint's base URL, without a trailing slash; an EvalsError when
        $OPENAI_BASE_URL, its fallback, is not one (:func:`evals.io.endpoints.check_base_url`)."""
        from evals.io.endpoints import DEFAULT_BASE_URL, check_base_url

        if self.base_url is not None:
            return self.base_url
        from_env = os.environ.get("OPENAI_BASE_URL")
        return check_base_url(from_env, "$OPENAI_BASE_URL") if from_env else DEFAULT_BASE_URL

    def embeds_with_openai(self) -> bool:
        """Whether the run asks for OpenAI's embeddings (--option embedder=openai)."""
        return self.options.get("embedder") == "openai"

    def key_warnings(self, api_key: str | None) -> list[str]:
        """What to say, before any request, about the API key travelling unencrypted: to the chat
        endpoint (answers; the key: ``api_key``, else $OPENAI_API_KEY) and to the embedding
        endpoint (--embedder openai, which sends $OPENAI_API_KEY)."""
        from evals.io.endpoints import exposed_key_warning

        warnings: list[str] = []
        env_key = os.environ.get("OPENAI_API_KEY")
        if self.answers_on:
            warnings.append(exposed_key_warning(self.endpoint(), api_key if api_key is not None else env_key) or "")
        if self.embeds_with_openai():
            from evals.strategies.embedders import openai_endpoint

            warnings.append(exposed_key_warning(openai_endpoint(), env_key) or "")
        return [w for w in dict.fromkeys(warnings) if w]

    @property
    def grader(self) -> str:
        """The protocol that judges and counts the answers."""
        return self.judge_protocol or self.protocol

    @property
    def published(self) -> bool:
        """Whether the answers are asked for as a published benchmark does (records, dates, speakers)."""
        return self.protocol != "harness"

    def load_protocols(self) -> tuple[Protocol, Protocol]:
        """The answer protocol and the judge protocol, their templates read and checked
        (a ProtocolError naming the file when they cannot be)."""
        from evals.benchmarks.protocols import load_protocol

        tree = self.protocol if self.protocol != "harness" else self.grader  # the one --protocol-source holds
        answer = load_protocol(
            self.protocol, source=self.protocol_source if tree == self.protocol else None, downloads=self.downloads
        )
        if self.grader == self.protocol:
            return answer, answer
        return answer, load_protocol(
            self.grader, source=self.protocol_source if tree == self.grader else None, downloads=self.downloads
        )

    def answer_identity(self, protocols: tuple[Protocol, Protocol] | None = None) -> dict[str, Any] | None:
        """What sets a run with answers apart from one without (None: no answers). Under a published
        protocol it names the protocols and their templates' digests (read from their files, or
        ``protocols`` when already loaded)."""
        if not self.answers_on:
            return None
        from evals.benchmarks import protocol_judges
        from evals.benchmarks.protocols import protocols_block
        from evals.run.llm import answer_identity

        block = None
        if self.protocol != "harness" or self.grader != "harness":
            block = protocols_block(*(protocols or self.load_protocols()))
        judged = self.judge and protocol_judges().get(self.grader) is not None
        return answer_identity(
            self.answer_model, self.judge_model if judged else None, self.endpoint(), self.judge_repeats if judged else 1, block
        )

    def plan(self, registry: Registry | None = None, *, cache: Cache | None = None, client: Any = None) -> Planned:
        """The strategy with its validated options and configuration, nothing built yet.

        With answers on, strategies get the answer model as their summariser
        (summary_buffer uses it); ``client`` None only names it, for working
        out a configuration without making requests."""
        registry = registry or Registry()
        summarize_fn = summarizer = None
        if self.answers_on:
            from evals.run.llm import ChatSummarizer

            summarize_fn = ChatSummarizer(client, self.answer_model)
            summarizer = summarize_fn.__name__
        from evals.io.endpoints import RetryPolicy

        # Every LLM request has the run's deadline and retries: a memory's own (mem0, graphiti, cognee) too.
        policy = RetryPolicy(timeout=self.request_timeout, retries=self.max_retries)
        context = BuildContext(seed=self.seed, cache=cache, summarize_fn=summarize_fn, summarizer=summarizer, llm_policy=policy)
        return registry.plan(self.strategy, self.options, context)


def legacy_flag_options(
    strategy: str, flags: dict[str, str | None], registry: Registry | None = None
) -> tuple[dict[str, str], list[str]]:
    """The strategy options the original CLI's ``--backend``/``--embedder`` mean (``flags``: flag name -> value,
    None where not given), and the flags ignored (``--backend memory``): the original harness accepted both
    with every runner and ignored them where they did not apply, which ``python -m evals`` keeps. A flag
    fills the option of its name where the strategy has one (Mneme's, in Mneme's spec)."""
    given = {key: value for key, value in flags.items() if value is not None}
    if not given:
        return {}, []
    fields = (registry or Registry()).get(strategy).options.model_fields
    options = {key: value for key, value in given.items() if key in fields}
    return options, [f"--{key} {value}" for key, value in given.items() if key not in fields]
