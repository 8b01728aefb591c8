"""Pages and tables read as the tests read them: a tiny DOM over the standard library's ``html.parser``, links followed,
and Markdown table rows."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    """An element: its tag, attributes and children (elements and text)."""

    def __init__(self, tag: str, attrs: dict[str, str | None], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self):
        for child in self.children:
            if isinstance(child, Node):
                yield child
                yield from child.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> list[Node]:
        return [
            n
            for n in self.iter()
            if (tag is None or n.tag == tag)
            and (cls is None or cls in n.classes)
            and all(n.attrs.get(k) == v for k, v in attrs.items())
        ]

    def find(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> Node:
        found = self.find_all(tag, cls, **attrs)
        assert found, f"no <{tag} class={cls} {attrs}>"
        return found[0]


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, None)
        self.current = self.root

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Node(tag, dict(attrs), self.current))

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None and node.parent is not None, f"stray </{tag}>"
        self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def parse(path: Path, drawn: bool = True) -> Node:
    """The document at ``path``, parsed (a stray end tag fails the test). With ``drawn``, a drill-down's records that
    are one turn (``ol.records li[data-t]``) are drawn as static/site.js draws them (:func:`draw_records`; a browser
    test, tests/site/test_site_shared_turns.py, checks the script draws the same)."""
    builder = _TreeBuilder()
    builder.feed(path.read_text(encoding="utf-8"))
    builder.close()
    if drawn:
        draw_records(builder.root)
    return builder.root


def draw_records(root: Node) -> None:
    """What site.js's drawRecords and linkTouched do to a drill-down: each ``li[data-t]`` of an ``ol.records`` gets its
    turn's link, the benchmark's name and date, "evidence turn" and the slot of its text, and each line of the turns
    touched its link to the transcript, as the page showed before."""
    import json

    ids = [n for n in root.iter() if n.attrs.get("id") == "turn-ids"]
    if not ids:
        return
    items = [li for ol in root.find_all("ol", cls="records") for li in ol.find_all("li") if "data-t" in li.attrs]
    base, dates = ids[0].attrs.get("data-href") or "", json.loads(ids[0].attrs.get("data-dates") or "[]")
    # linkTouched: each line of the turns touched links its turn in the transcript.
    for ol in root.find_all("ol", cls="transcript"):
        for li in ol.children:
            if isinstance(li, Node) and li.tag == "li" and "value" in li.attrs and not li.find_all("a", cls="more"):
                more = Node("a", {"class": "more", "href": f"{base}#t-{li.attrs['value']}"}, li)
                more.children.append(f"turn {li.attrs['value']} in the transcript")
                li.children += [" ", more]
    for li in items:
        turn = li.attrs.pop("data-t")
        label, d = li.attrs.get("data-id") or "", li.attrs.get("data-d")
        date = dates[int(d)] if d is not None else ""
        link = Node("a", {"href": li.attrs.get("data-h") or f"{base}#t-{turn}"}, li)
        link.children.append(f"turn {turn}")
        head: list[Node | str] = [link]
        if label or date:
            tid = Node("span", {"class": "tid"}, li)
            tid.children.append("(" + label + (", " if label and date else "") + date + ")")
            head += [" ", tid]
        li.children[:0] = [*head, " \u00b7 "]
        if "evi" in li.classes:
            strong = Node("strong", {}, li)
            strong.children.append("evidence turn")
            li.children += [" \u00b7 ", strong]
        slot = Node("div", {"class": "txt", "data-fill": ""}, li)
        if li.attrs.get("data-n") is not None:
            fold = Node("details", {}, li)
            summary = Node("summary", {}, fold)
            summary.children.append(f"{int(li.attrs['data-n']):,} characters")
            slot.parent = fold
            fold.children += [summary, slot]
            li.children.append(fold)
        else:
            li.children.append(slot)


def follow(page: Path, href: str) -> tuple[Path, str]:
    """The file and fragment a relative link on ``page`` points to."""
    parts = urlsplit(href)
    target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
    return target, parts.fragment


def markdown_rows(text: str) -> list[list[str]]:
    """The cells of every Markdown table row, header and separator included."""
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines() if line.startswith("|")]


def record_text(page: Path, node: Node) -> str:
    """A drill-down record's text (its ``div.txt``) as a reader sees it: its own, or for a record that is a turn,
    the text site.js fills in (``data-fill``) from the line in its transcript that the record's first link names."""
    if "data-fill" not in node.attrs:
        return node.text()
    item = node.parent
    while item is not None and item.tag != "li":  # a long record's text sits in its <details>
        item = item.parent
    assert item is not None
    path, _, anchor = item.find("a").attrs["href"].partition("#")
    return parse((page.parent / unquote(path)).resolve()).find("li", id=anchor).find("span", cls="txt").text()
