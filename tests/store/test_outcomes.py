"""evals.store.outcomes_of: a run's outcomes taken from the run read whole are the ones the store reads apart."""

from __future__ import annotations

from evals.store import Store, outcomes_of


def test_outcomes_of_a_whole_run_equal_the_stored_outcomes(pair_site: dict):
    """For every run of the pair store, outcomes_of(get_run) and outcomes_of(iter_run's one slice) equal get_run_outcomes."""
    with Store.open(pair_site["store"], read_only=True) as store:
        for summary in store.runs():
            expected = store.get_run_outcomes(summary.run_id)
            assert outcomes_of(store.get_run(summary.run_id)) == expected
            (whole,) = store.iter_run(summary.run_id)
            assert outcomes_of(whole) == expected
