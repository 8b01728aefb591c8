"""`--embedder minilm-bf16`: all-MiniLM-L6-v2 in bf16, a model of its own (its cache namespace and name),
refused on a CPU without bf16, with vectors close to minilm's.

The CPU's flags are read from the file $EVALS_CPUINFO names (else /proc/cpuinfo), so the refusal and the
namespace are tested on any machine with a cpuinfo file written here; the vectors need a real bf16 CPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import FIXTURES

from evals.errors import EvalsError
from evals.strategies.embedders import (
    EMBEDDERS,
    MINILM_BF16_MODEL,
    MINILM_MODEL,
    bf16_cpu,
    make_embedder,
    minilm_installed,
)


def needs_minilm(test):
    """A test that loads the real MiniLM model: slow (seconds), and skipped without the minilm extra."""
    return pytest.mark.slow(pytest.mark.skipif(not minilm_installed(), reason="needs the minilm extra")(test))


WITH_BF16 = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 amx_bf16\n"
WITHOUT_BF16 = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n"


def _cpuinfo(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cpuinfo"
    path.write_text(text)
    return path


def test_cpu_flags_decide_bf16(tmp_path: Path) -> None:
    """A flags line with avx512_bf16 or amx_bf16 means bf16; avx512f alone does not."""
    assert bf16_cpu(str(_cpuinfo(tmp_path, WITH_BF16)))
    assert not bf16_cpu(str(_cpuinfo(tmp_path, WITHOUT_BF16)))


@needs_minilm
def test_bf16_has_its_own_namespace_and_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """minilm-bf16 caches under its own model name, never under minilm's, and names that model."""
    monkeypatch.setenv("EVALS_CPUINFO", str(_cpuinfo(tmp_path, WITH_BF16)))
    bf16, bf16_model = make_embedder("minilm-bf16")
    fp32, fp32_model = make_embedder("minilm")
    assert (bf16_model, bf16.model, EMBEDDERS["minilm-bf16"].model) == (MINILM_BF16_MODEL,) * 3
    assert bf16.namespace == f"embedding:{MINILM_BF16_MODEL}"
    assert bf16.namespace != fp32.namespace == f"embedding:{MINILM_MODEL}"


def test_bf16_refused_without_bf16_cpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a CPU without bf16, building the embedder fails with one line naming the alternative."""
    monkeypatch.setenv("EVALS_CPUINFO", str(_cpuinfo(tmp_path, WITHOUT_BF16)))
    with pytest.raises(EvalsError) as refused:
        make_embedder("minilm-bf16")
    assert "\n" not in str(refused.value) and "--embedder minilm" in str(refused.value)


def test_cli_refuses_bf16_in_one_line_before_writing(tmp_path: Path) -> None:
    """`python -m evals --embedder minilm-bf16` on a CPU without bf16: exit 1, one line, no output file."""
    done = subprocess.run(
        [sys.executable, "-m", "evals", "--runner", "mneme", "--embedder", "minilm-bf16",
         "--corpus", str(FIXTURES / "corpus_small"), "--output", str(tmp_path / "out.json"), "--no-cache"],
        capture_output=True, text=True,
        env={**os.environ, "EVALS_CPUINFO": str(_cpuinfo(tmp_path, WITHOUT_BF16))},
    )
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0 and "bf16" in done.stderr
    assert not (tmp_path / "out.json").exists()


@needs_minilm
@pytest.mark.skipif(not bf16_cpu(), reason="needs a CPU with bf16 (avx512_bf16 or amx_bf16)")
def test_bf16_vectors_close_to_fp32() -> None:
    """On the fixture corpus every bf16 vector is a float32 unit vector within cosine 0.999 of minilm's."""
    from evals.model.corpus import load_corpus
    from evals.run.executors import corpus_texts
    from evals.strategies.embedders import MiniLMBF16Embedder, MiniLMEmbedder

    texts = sorted(set(corpus_texts(load_corpus(FIXTURES / "corpus_small").conversations)))
    fp32 = MiniLMEmbedder().embed_array(texts)
    bf16 = MiniLMBF16Embedder().embed_array(texts)
    assert bf16.dtype == np.float32 and np.allclose(np.linalg.norm(bf16, axis=1), 1.0, atol=1e-5)
    assert (fp32 * bf16).sum(axis=1).min() > 0.999
