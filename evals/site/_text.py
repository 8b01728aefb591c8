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
    "CLIP_HEAD",
    "CLIP_LIMIT",
    "CLIP_TAIL",
    "Clipped",
    "Segment",
    "cached_highlight",
    "clip",
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


# A text longer than CLIP_HEAD + CLIP_TAIL + CLIP_SLACK characters is shown as its start and its end:
# one huge turn (a pasted log, a 50 MB file) would otherwise be copied into every page that shows it,
# once per test point that retrieved it, in every run.
CLIP_HEAD = 2_000
CLIP_TAIL = 2_000
CLIP_SLACK = 1_000  # cutting fewer characters than this saves too little to be worth a note
CLIP_LIMIT = CLIP_HEAD + CLIP_TAIL + CLIP_SLACK  # texts up to this long are shown whole


@dataclass(slots=True)
class Clipped:
    """A text as a page shows it: ``head`` and ``tail`` segments (keywords marked), ``omitted``
    characters left out between them (0: the text is whole, all in ``head``), ``length`` in all."""

    head: list[Segment]
    tail: list[Segment]
    omitted: int
    length: int


def clip(text: str, needles: tuple[str, ...] = (), head: int = CLIP_HEAD, tail: int = CLIP_TAIL) -> Clipped:
    """``text`` clipped to its first ``head`` and last ``tail`` characters when it is long,
    each part highlighted with ``needles`` (a keyword cut by the gap is not marked)."""

    def segments(part: str) -> list[Segment]:
        if needles:
            return cached_highlight(part, needles)
        return [Segment(part, False)] if part else []

    if len(text) <= head + tail + CLIP_SLACK:
        return Clipped(segments(text), [], 0, len(text))
    return Clipped(segments(text[:head]), segments(text[-tail:]), len(text) - head - tail, len(text))

