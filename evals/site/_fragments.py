"""Test point sections and transcript lines, each distinct one rendered once per process.

They are rendered by the ``point`` and ``turn_line`` macros of
_partials.html (so markup and escaping stay in the templates) and depend only
on what their keys hold, which repeats from run to run of one configuration:
history over many commits mostly retrieves the same records. Rendering each
distinct fragment once instead of once per page is most of what keeps a big
build fast.
"""

from __future__ import annotations

import jinja2

from evals.site._pages import PointView, TurnLine, TurnMark
from evals.site._text import CLIP_LIMIT, cached_highlight, clip

__all__ = ["FRAGMENT_CACHE", "Fragments"]

FRAGMENT_CACHE = 50_000  # rendered test points / transcript lines remembered per process


class Fragments:
    """The rendered fragments, by key; each table is emptied when it grows past ``FRAGMENT_CACHE`` entries, which bounds memory."""

    def __init__(self, env: jinja2.Environment) -> None:
        module = env.get_template("_partials.html").module
        self._turn_line = module.turn_line
        self._point = module.point
        self._est = module.est()
        self._lines: dict[tuple, str] = {}
        self.points: dict[tuple, PointView] = {}

    def line(
        self, turn: int, role: str, content: str, css: str, marks: list[TurnMark], needles: tuple[str, ...], full_href: str = ""
    ) -> TurnLine:
        key = (turn, role, content, css, needles, tuple((m.label, m.css, m.anchor) for m in marks), full_href)
        html = self._lines.get(key)
        if len(content) > CLIP_LIMIT:
            shown = clip(content, needles)
            line = TurnLine(turn, role, "", shown.head, marks, css, "", shown.tail, shown.omitted, shown.length, full_href)
        else:
            line = TurnLine(turn, role, content, cached_highlight(content, needles) if needles else [], marks, css, "")
        if html is None:
            if len(self._lines) >= FRAGMENT_CACHE:
                self._lines.clear()
            html = self._lines[key] = self._turn_line(line)
        line.html = html
        return line

    def point(self, key: tuple, view: PointView, approx: bool) -> PointView:
        """Render ``view`` and remember it under ``key``."""
        view.html = self._point(view, self._est if approx else "")
        if len(self.points) >= FRAGMENT_CACHE:
            self.points.clear()
        self.points[key] = view
        return view
