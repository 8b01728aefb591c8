"""The embedder table: each embedder name decided once (factory, recorded model, caveat)."""

from __future__ import annotations

import typing
from types import SimpleNamespace

from evals.strategies import BuildContext, Registry
from evals.strategies.embedders import EMBEDDERS, EmbedderKind, recorded_embedder


def test_mneme_offers_exactly_the_embedders_of_the_table():
    """Mneme's embedder option accepts the table's names and no other."""
    options = Registry().get("mneme").options
    assert typing.get_args(options.model_fields["embedder"].annotation) == tuple(EMBEDDERS)


def test_mneme_records_the_tables_class_dimensions_and_model():
    """A Mneme configuration names the embedder class, dimensions and model its table row gives."""
    registry = Registry()
    for name, kind in EMBEDDERS.items():
        if name == "openai":
            continue  # needs a key and an endpoint to be described
        config = registry.plan("mneme", {"embedder": name}, BuildContext()).configuration
        assert (config["embedder"], config["dimensions"], config["model"]) == (kind.cls, kind.dimensions, kind.model)


def test_a_caveat_declared_in_the_table_reaches_every_run_made_with_that_embedder():
    """The views' caveat of a run is the one its embedder's row declares, found by the model the run recorded."""
    from evals.views.tables import caveats

    def run(model: str, embedder: str) -> SimpleNamespace:
        return SimpleNamespace(
            strategy="mneme",
            strategy_source="built-in",
            cutoff_rule="prefix",
            model=model,
            strategy_config={"name": "mneme", "embedder": embedder},
            llm_usage=None,
        )

    hash_row = EMBEDDERS["hash"]
    assert isinstance(hash_row, EmbedderKind) and hash_row.caveat is not None
    assert [c.label for c in caveats(run(hash_row.model, hash_row.cls))] == [hash_row.caveat.label]
    assert recorded_embedder(EMBEDDERS["minilm"].model) is EMBEDDERS["minilm"]
    assert caveats(run(EMBEDDERS["minilm"].model, EMBEDDERS["minilm"].cls)) == []
