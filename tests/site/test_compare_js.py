"""static/compare.js on a page of its own: the compare page's script, given the
data files it reads (window.evalsRuns, window.evalsPoints) and the sections Python writes, in Chromium.

Each test writes a minimal compare page whose flipped questions carry the ids :func:`evals.site._pairs.flip_anchor`
gives them, with data shaped as :mod:`evals.site._pairs` writes it, and checks what the script draws.
"""

from __future__ import annotations

import json
import shutil
from html import escape
from pathlib import Path

import pytest
from helpers import ROOT

from evals.site._pairs import flip_anchor

STATIC = ROOT / "site_templates" / "static"


def _page(folder: Path, points: list[tuple[str, int, str]]) -> str:
    """A compare page of ``points`` (conversation, turn, judge's verdict of run A's answer); returns its file name."""
    (folder / "static").mkdir(parents=True, exist_ok=True)
    shutil.copy(STATIC / "compare.js", folder / "static" / "compare.js")
    corpus: dict = {}
    runs: dict = {"A": {"k": 1, "label": "r@1", "perPage": 50, "conversations": {}, "turns": {}}}
    runs["B"] = json.loads(json.dumps(runs["A"]))
    for cid, turn, verdict in points:
        corpus.setdefault(cid, {})[str(turn)] = ["q?", "gold", "cat", []]
        for name, code in (("A", "h"), ("B", "m")):
            conv = runs[name]["conversations"].setdefault(cid, {"pages": ["runs/x/c.html"], "points": []})
            conv["points"].append([turn, code, [], "an answer", verdict if name == "A" else "wrong"])
    data = f"window.evalsPoints = {{'c0ffee': {json.dumps(corpus)}}};\nwindow.evalsRuns = {json.dumps(runs)};\n"
    (folder / "data.js").write_text(data, encoding="utf-8")
    sections = "".join(
        f'<section class="flip" id="{escape(flip_anchor(cid, turn))}" data-flip="a" data-category="cat">'
        '<p class="q">q?</p></section>'
        for cid, turn, _ in points
    )
    html = (
        '<!doctype html><html><head><meta charset="utf-8"><script src="data.js" defer></script>'
        '<script src="static/compare.js" defer></script></head><body>'
        f'<div id="pair" data-a="A" data-b="B" data-corpus="c0ffee" data-root="">{sections}</div>'
        '<button id="flip-more" hidden></button></body></html>'
    )
    (folder / "page.html").write_text(html, encoding="utf-8")
    return "page.html"


@pytest.mark.browser
def test_partial_verdict_badge(tmp_path: Path, serve, browser):
    """A judge's "partial" verdict is badged "partial" on a compare page, not "not judged"."""
    page = browser.new_page()
    page.goto(serve(tmp_path) + _page(tmp_path, [("conv-1", 3, "partial")]))
    page.wait_for_selector("#pair[data-drawn]")
    badge = page.evaluate("() => document.querySelector('.side-a .answer .badge').textContent")
    assert badge == "partial"


@pytest.mark.browser
def test_ids_with_unusual_spaces_are_drawn(tmp_path: Path, serve, browser):
    """Flipped questions whose conversation id holds \\x1f, \\x85, U+FEFF or a space are each drawn, their ids split alike."""
    cids = ["a\x1fb", "a\x85b", "a\ufeffb", "a b"]
    page = browser.new_page()
    page.goto(serve(tmp_path) + _page(tmp_path, [(cid, 2, "correct") for cid in cids]))
    page.wait_for_selector("#pair[data-drawn]")
    drawn = page.evaluate("() => [...document.querySelectorAll('section.flip')].map(s => !!s.querySelector('.sides'))")
    assert drawn == [True] * len(cids)


@pytest.mark.browser
def test_hundreds_of_flips_are_drawn_a_bounded_number_at_once(tmp_path: Path, serve, browser):
    """Of 300 flipped questions, 25 are shown and drawn at first; "Show more" draws 25 more."""
    page = browser.new_page()
    page.goto(serve(tmp_path) + _page(tmp_path, [("conv-1", turn, "correct") for turn in range(300)]))
    page.wait_for_selector("#pair[data-drawn]")
    visible = "[...document.querySelectorAll('section.flip')].filter(s => !s.hidden).length"
    count = f"() => [{visible}, document.querySelectorAll('.sides').length]"
    assert page.evaluate(count) == [25, 25]
    page.click("#flip-more")
    assert page.evaluate(count) == [50, 50]


MALFORMED_HASHES = ["#category=%E0%A4%A", "#%", "#flip=%zz&category=%", "#category=cat%&flip=a%E0", "#%E0%A4%A=x"]


@pytest.mark.browser
@pytest.mark.parametrize("hash_", MALFORMED_HASHES)
def test_hash_parsing_survives_any_string(tmp_path: Path, serve, browser, hash_):
    """A URL hash with a malformed percent-escape stops neither script: the compare page draws its flips and a
    run page's category filter keeps every row, with no error on either page."""
    from helpers.browser import problems_on

    (tmp_path / "favicon.ico").write_bytes(b"")  # what the browser asks for beside any page
    base = serve(tmp_path)
    compare = browser.new_page()
    problems = problems_on(compare)
    compare.goto(base + _page(tmp_path, [("conv-1", turn, "correct") for turn in range(3)]) + hash_)
    compare.wait_for_selector("#pair[data-drawn]")
    drawn = "() => [...document.querySelectorAll('section.flip')].filter(s => !s.hidden && s.querySelector('.sides')).length"
    assert compare.evaluate(drawn) == 3
    shutil.copy(STATIC / "site.js", tmp_path / "static" / "site.js")
    rows = "".join(f'<tr data-category="{c}"><td>{c}</td></tr>' for c in ("a", "b", "b"))
    (tmp_path / "run.html").write_text(
        '<!doctype html><html><head><meta charset="utf-8"><script src="static/site.js" defer></script></head><body>'
        f'<table class="by-category"><tbody>{rows}</tbody></table></body></html>',
        encoding="utf-8",
    )
    run = browser.new_page()
    problems += problems_on(run)
    run.goto(base + "run.html" + hash_)
    run.wait_for_selector("label.category-filter")
    assert run.evaluate("() => [...document.querySelectorAll('tr[data-category]')].filter(r => !r.hidden).length") == 3
    assert problems == []
