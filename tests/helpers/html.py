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


def parse(path: Path) -> Node:
    """The document at ``path``, parsed (a stray end tag fails the test)."""
    builder = _TreeBuilder()
    builder.feed(path.read_text(encoding="utf-8"))
    builder.close()
    return builder.root


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
