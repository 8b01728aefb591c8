"""The store's one exception type."""

from __future__ import annotations

from evals.errors import EvalsError

__all__ = ["CorpusConflict", "StoreError"]


class StoreError(EvalsError):
    """The store cannot do what was asked; the message is one line naming the file and the cause."""

    def __init__(self, message: str) -> None:
        # DuckDB's messages sometimes span lines; the CLI promises one.
        super().__init__(" ".join(message.split()))


class CorpusConflict(StoreError):
    """A run's corpus is not the one the store holds under the same digest; ``run_id`` is the run's."""

    def __init__(self, run_id: str, message: str) -> None:
        self.run_id = run_id
        super().__init__(message)
