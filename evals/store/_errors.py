"""The store's one exception type."""

from __future__ import annotations

from evals.errors import EvalsError

__all__ = ["StoreError"]


class StoreError(EvalsError):
    """The store cannot do what was asked; the message is one line naming the file and the cause."""

    def __init__(self, message: str) -> None:
        # DuckDB's messages sometimes span lines; the CLI promises one.
        super().__init__(" ".join(message.split()))
