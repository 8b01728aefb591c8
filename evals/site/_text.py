"""Text helpers for pages: keyword highlighting (numbers: :mod:`evals.model.formatting`;
file names: :mod:`evals.views.site_paths`).

Highlighting never produces markup. It splits a text into :class:`Segment`
pieces, some flagged as matches; the template escapes every piece and wraps
the flagged ones in ``<mark>``. So corpus text is always escaped before any
tag goes round it, and a keyword such as ``</td>`` cannot break a page.
"""

from __future__ import annotations

import functools
import re
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
    which keeps highlighting consistent with :func:`evals.judge.scoring.match`.
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


_SPEAKER = re.compile(r"([^\s:][^:\n]{0,39}): ")


def speaker_labels(roles: list[str], contents: list[str]) -> list[str]:
    """Each turn's label on a page: the speaker's name where the dataset gives one, else the role.

    Importers of datasets whose speakers have names (LoCoMo) write each turn as ``Name: text``, with
    both speakers under the roles user and assistant. A role whose turns mostly open with one name is
    shown by that name, on the turns that open with it; every other turn keeps its role."""
    counts: dict[str, dict[str, int]] = {}
    for role, content in zip(roles, contents, strict=True):
        found = _SPEAKER.match(content)
        if found:
            names = counts.setdefault(role, {})
            names[found.group(1)] = names.get(found.group(1), 0) + 1
    per_role = {}
    for role, names in counts.items():
        name, seen = max(names.items(), key=lambda item: item[1])
        if seen * 2 >= roles.count(role) and seen >= 2:  # at least half of the role's turns
            per_role[role] = name
    return [
        per_role[role] if role in per_role and content.startswith(per_role[role] + ": ") else role
        for role, content in zip(roles, contents, strict=True)
    ]
