"""Test point sections and transcript lines, each distinct one rendered once per process.

They are rendered by the ``point`` and ``turn_line`` macros of
_partials.html (so markup and escaping stay in the templates) and depend only
on what their keys hold, which repeats from run to run of one configuration:
history over many commits mostly retrieves the same records. Rendering each
distinct fragment once instead of once per page is most of what keeps a big
build fast.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import jinja2

from evals.site._pages import TurnLine, TurnMark
from evals.site._text import CLIP_LIMIT, cached_highlight, clip

__all__ = ["FRAGMENT_CACHE", "SNIPPET", "Fragments", "turn_line"]

# A drill-down's test point view (evals.site._drilldown.PointView): that module imports this one, so a type variable
# names it here.
View = TypeVar("View")

FRAGMENT_CACHE = 50_000  # rendered test points / transcript lines remembered per process


SNIPPET = 200  # characters of a turn a drill-down's list of touched turns shows


def turn_line(
    turn: int,
    anchor: str,
    role: str,
    content: str,
    css: str,
    marks: list[TurnMark],
    needles: tuple[str, ...] = (),
    full_href: str = "",
    href: str = "",
) -> TurnLine:
    """A transcript line's model (not yet rendered). With ``href`` (a drill-down's list) the text is a
    snippet and ``href`` says where the whole turn is; else a long turn is clipped and ``full_href``
    links its whole text."""
    if href:
        snippet = content if len(content) <= SNIPPET else content[:SNIPPET].rstrip() + "…"
        return TurnLine(turn, anchor, role, snippet, [], marks, css, "", href=href)
    if len(content) > CLIP_LIMIT:
        shown = clip(content, needles)
        return TurnLine(turn, anchor, role, "", shown.head, marks, css, "", shown.tail, shown.omitted, shown.length, full_href)
    return TurnLine(turn, anchor, role, content, cached_highlight(content, needles) if needles else [], marks, css, "")


class Fragments:
    """The rendered fragments, by key; each table is emptied when it grows past ``FRAGMENT_CACHE``
    entries, which bounds memory."""

    def __init__(self, env: jinja2.Environment) -> None:
        module = env.get_template("_partials.html").module
        self._turn_line = module.turn_line
        self._point = module.point
        self.passage_block = module.passage_block
        self._est = module.est()
        self._lines: dict[tuple, str] = {}
        self.points: dict[tuple, Any] = {}  # PointView

    def render_line(self, line: TurnLine) -> TurnLine:
        """Render ``line`` (uncached: for lines shown once, as a corpus's transcripts are)."""
        line.html = self._turn_line(line)
        return line

    def line(
        self,
        turn: int,
        anchor: str,
        role: str,
        content: str,
        css: str,
        marks: list[TurnMark],
        needles: tuple[str, ...],
        full_href: str = "",
        href: str = "",
    ) -> TurnLine:
        key = (turn, anchor, role, content, css, needles, tuple((m.label, m.css, m.anchor) for m in marks), full_href, href)
        line = turn_line(turn, anchor, role, content, css, marks, needles, full_href, href)
        html = self._lines.get(key)
        if html is None:
            if len(self._lines) >= FRAGMENT_CACHE:
                self._lines.clear()
            html = self._lines[key] = self._turn_line(line)
        line.html = html
        return line

    def point(self, key: tuple, view: View, approx: bool) -> View:
        """``view`` rendered, remembered under ``key`` (:func:`evals.site._drilldown.fragment_key`)."""
        view = dataclasses.replace(view, html=self._point(view, self._est if approx else ""))
        if len(self.points) >= FRAGMENT_CACHE:
            self.points.clear()
        self.points[key] = view
        return view
