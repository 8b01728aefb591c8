"""Stable names: of a configuration, and of the exact inputs under which a run may be reused."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from evals.model.provenance import Provenance

__all__ = ["config_key", "reuse_key"]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def config_key(strategy_config: dict[str, Any], *, k: int, model: str, answers: dict[str, Any] | None = None) -> str:
    """A short, readable, stable name for one configuration: ``<strategy>-k<k>-<hash>``.

    The same settings give the same key on every commit and machine, so the
    leaderboard can follow one configuration through history. ``answers`` (the
    answer and judge models and endpoint) makes a run with answers a
    configuration of its own; without it the key is what it always was.
    """
    inputs: dict[str, Any] = {"strategy": strategy_config, "k": k, "model": model}
    if answers is not None:
        inputs["answers"] = answers
    digest = _sha256(_canonical(inputs))[:8]
    return f"{strategy_config.get('name', 'unknown')}-k{k}-{digest}"


def reuse_key(
    provenance: Provenance,
    *,
    corpus_digest: str,
    strategy_config: dict[str, Any],
    model: str,
    k: int,
    seed: int,
    tokenizer: str,
    answers: dict[str, Any] | None = None,
    cutoffs: list[int] | tuple[int, ...] = (),
) -> str | None:
    """The key under which a run's result may be reused, or ``None`` when it may not.

    Only a clean commit names the code exactly, so a dirty tree or a directory
    outside git is never reused. A plug-in strategy's code is named apart
    (``provenance.strategy_code``: its source and a digest of its files), so an
    edited plug-in is never answered with the old code's run.
    """
    if not provenance.is_clean_commit:
        return None
    inputs = {
        "commit": provenance.commit,
        "package_version": provenance.package_version,
        "mneme_version": provenance.mneme_version,
        "corpus_digest": corpus_digest,
        "strategy": strategy_config,
        "model": model,
        "k": k,
        "seed": seed,
        "tokenizer": tokenizer,
    }
    if answers is not None:
        inputs["answers"] = answers
    if provenance.strategy_code is not None:  # absent for built-ins, so their keys are what they always were
        inputs["strategy_code"] = provenance.strategy_code
    if cutoffs:  # the retrieval metrics' depths: a run measured at other cutoffs is not this one
        inputs["cutoffs"] = sorted(set(cutoffs))
    return _sha256(_canonical(inputs))
