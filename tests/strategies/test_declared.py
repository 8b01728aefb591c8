"""What the harness's own strategies declare about themselves (StrategySpec.tuned_on, writes_with_llm), which
every run records and every board shows."""

from __future__ import annotations

import pytest

from evals.strategies import Registry

WRITES_WITH_AN_LLM = {"graphiti", "cognee"}


@pytest.fixture(scope="module")
def specs():
    return {spec.name: spec for spec in Registry().loadable()[0]}


def test_mem0_writes_with_an_llm_only_with_infer(specs):
    """mem0 declares an LLM writer exactly when its configuration says infer=true."""
    assert specs["mem0"].declared({"name": "mem0", "infer": True}) == ([], True)
    assert specs["mem0"].declared({"name": "mem0", "infer": False}) == ([], False)


def test_graphiti_and_cognee_write_with_an_llm_and_no_other_does(specs):
    """graphiti and cognee write with an LLM; every other built-in (mem0 aside) does not, and none declares a
    benchmark it was tuned on."""
    for name, spec in specs.items():
        if spec.source != "built-in" or name == "mem0":
            continue
        assert spec.declared({"name": name}) == ([], name in WRITES_WITH_AN_LLM), name
