"""Text helpers for pages: keyword highlighting (numbers: :mod:`evals.formatting`; file names: :mod:`evals.site_paths`).

Highlighting never produces markup. It splits a text into :class:`Segment`
pieces, some flagged as matches; the template escapes every piece and wraps
the flagged ones in ``<mark>``. So corpus text is always escaped before any
tag goes round it, and a keyword such as ``</td>`` cannot break a page.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

__all__ = [
    "Segment",
    "cached_highlight",
    "highlight",
]


@dataclass(slots=True)
class Segment:
    text: str
    mark: bool


def _lowered_with_origin(text: str) -> tuple[str, list[int]]:
    """``text.lower()`` built char by char, with the source index of every lowered char.

    ``str.lower`` can change lengths (``"İ".lower()`` is two characters), so
    positions found in the lowered text are mapped back through this table,
    which keeps highlighting consistent with :func:`evals.scoring.match`.
    """
    if text.isascii():
        return text.lower(), list(range(len(text)))
    lowered: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        low = char.lower()
        lowered.append(low)
        origin.extend([index] * len(low))
    return "".join(lowered), origin


def highlight(text: str, keywords: list[str]) -> list[Segment]:
    """Split ``text`` into segments, marking every case-insensitive occurrence of a keyword.

    Overlapping occurrences merge into one marked segment.
    """
    needles = sorted({kw.lower() for kw in keywords if kw}, key=len, reverse=True)
    if not needles or not text:
        return [Segment(text, False)] if text else []
    lowered, origin = _lowered_with_origin(text)
    spans: list[tuple[int, int]] = []
    for needle in needles:
        start = lowered.find(needle)
        while start >= 0:
            end = start + len(needle)
            spans.append((origin[start], origin[end - 1] + 1))
            start = lowered.find(needle, start + 1)
    if not spans:
        return [Segment(text, False)]
    spans.sort()
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    segments: list[Segment] = []
    cursor = 0
    for start, end in merged:
        if start > cursor:
            segments.append(Segment(text[cursor:start], False))
        segments.append(Segment(text[start:end], True))
        cursor = end
    if cursor < len(text):
        segments.append(Segment(text[cursor:], False))
    return segments


@functools.lru_cache(maxsize=1 << 16)
def cached_highlight(text: str, needles: tuple[str, ...]) -> list[Segment]:
    """:func:`highlight`, remembered: the same answer turns come back in every run over a conversation.

    Callers must not change the returned list.
    """
    return highlight(text, list(needles))
