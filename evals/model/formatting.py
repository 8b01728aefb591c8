"""How results are written as text, once, for the CLI, the Markdown table and the site.

An empty value is never 0: it is :data:`DASH` ("—") on the site and in
Markdown, and :data:`NULL` ("null", as JSON says it) in the CLI's tables, where
"—" is kept for a number the store did not record yet (runs stored before strict
recall and MRR existed). Every function here takes the placeholder it should
print for an empty value, so each caller keeps its own.

A number counted with the ~4-characters-per-token estimate instead of the
tokenizer says so wherever it is shown: :data:`ESTIMATED` in plain text (the
site marks it with an ``(est.)`` abbreviation instead).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from evals.model.tokens import EXACT

__all__ = [
    "DASH",
    "ESTIMATED",
    "NULL",
    "commit_text",
    "csv_cell",
    "decimal",
    "estimate_mark",
    "interval",
    "milliseconds",
    "is_estimated",
    "json_text",
    "number",
    "p_value_text",
    "percent",
    "percent_interval",
    "printable",
    "relative",
    "short_commit",
    "tokens",
    "visible",
    "web_link",
    "whole_number",
    "with_interval",
]

DASH = "\u2014"
NULL = "null"
ESTIMATED = "~"

_HEX = frozenset("0123456789abcdef")
# Characters that change or hide how text reads without showing themselves: bidirectional marks,
# embeddings, overrides and isolates (U+202E turns "gpj.exe" into "exe.jpg"), and invisible formatting
# characters (zero-width space, word joiner, invisible operators, byte-order mark, tag characters).
# The joiners U+200C and U+200D are left alone: scripts and emoji sequences need them.
_HIDDEN = "\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f"
# Control characters (C0 with tab and newlines, DEL, C1), the hidden ones above, and surrogates (a file
# name's undecodable bytes): a terminal acts on them, or cannot print them.
_UNPRINTABLE = re.compile(f"[\x00-\x1f\x7f-\x9f{_HIDDEN}\ud800-\udfff]")
# The same on a web page, but for tab and line breaks, which a page shows as the text meant them.
_UNSHOWABLE = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{_HIDDEN}\ud800-\udfff]")
# A cell starting with one of these is a formula to a spreadsheet (OWASP, "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _empty(value: float | int | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def short_commit(commit: str) -> str:
    """A full 40-hex commit as its first 7 characters (git's own short form); anything else, such as "no-git", as is."""
    return commit[:7] if len(commit) == 40 and _HEX.issuperset(commit) else commit


def commit_text(commit: str, dirty: bool) -> str:
    """The short commit, with "+dirty" when the run was made from a tree with uncommitted changes."""
    return short_commit(commit) + ("+dirty" if dirty else "")


def is_estimated(tokenizer: str) -> bool:
    """Whether a run's tokens were estimated (~4 characters per token) rather than counted."""
    return tokenizer != EXACT


def estimate_mark(tokenizer: str) -> str:
    """:data:`ESTIMATED` for a run whose tokens were estimated, else ""."""
    return ESTIMATED if is_estimated(tokenizer) else ""


def percent(value: float | None, digits: int = 1, empty: str = DASH) -> str:
    """A proportion as a percentage: ``0.5`` is "50.0%"."""
    return empty if _empty(value) else f"{value * 100:.{digits}f}%"


def number(value: float | int | None, digits: int = 1, empty: str = DASH) -> str:
    """A count or an amount with thousands separators: "1,234" for an int, "1,234.5" for a float."""
    if _empty(value):
        return empty
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def decimal(value: float | None, digits: int = 3, empty: str = DASH) -> str:
    """A number with a fixed number of decimals and no separators (recall and MRR as 0.833)."""
    return empty if _empty(value) else f"{value:.{digits}f}"


def interval(low: float | None, high: float | None, digits: int = 3, empty: str = DASH) -> str:
    """A 95% interval as "[low, high]" in decimals; ``empty`` when there is none (no observation)."""
    if _empty(low) or _empty(high):
        return empty
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def with_interval(value: float | None, low: float | None, high: float | None, digits: int = 3, empty: str = DASH) -> str:
    """A proportion and its interval, "0.833 [0.436, 0.970]"; the value alone when there is no interval."""
    if _empty(value):
        return empty
    bounds = interval(low, high, digits, empty="")
    return f"{value:.{digits}f} {bounds}" if bounds else f"{value:.{digits}f}"


def percent_interval(low: float | None, high: float | None, digits: int = 1) -> str:
    """An interval in percentages, "[43.6%, 97.0%]", a missing end as a dash."""
    return f"[{percent(low, digits)}, {percent(high, digits)}]"


def tokens(value: float | None, tokenizer: str, digits: int = 1, empty: str = DASH) -> str:
    """Tokens per test point, marked with :data:`ESTIMATED` when they were estimated."""
    return empty if _empty(value) else f"{estimate_mark(tokenizer)}{value:.{digits}f}"


def milliseconds(seconds: float | None, empty: str = DASH) -> str:
    """A short duration, three significant figures: "4.94 µs" below a millisecond, "0.507 ms"... "23.1 ms" above."""
    if _empty(seconds):
        return empty
    ms = seconds * 1000
    if ms < 0.1:
        return f"{ms * 1000:.3g} µs"
    return f"{ms:.3g} ms" if ms < 10 else f"{ms:,.1f} ms"


def usd(value: float | None, empty: str = DASH) -> str:
    """US dollars: cents from $1 up ("$12.35", "$1,234.50"), two significant figures below ("$0.042",
    "$0.00031"), so a run that cost a fraction of a cent does not read as "$0.00"; exactly "$0" when nothing."""
    if _empty(value):
        return empty
    if value == 0:
        return "$0"
    return f"${value:,.2f}" if value >= 1 else f"${value:.2g}" if value >= 1e-4 else f"${value:.1e}"


def relative(value: float | None, empty: str = DASH) -> str:
    """A cost relative to the reference run as a percentage: whole percents, one decimal below 10%."""
    if _empty(value):
        return empty
    return percent(value, 0) if value >= 0.1 else percent(value, 1)


def p_value_text(p: float) -> str:
    """A p-value: four decimals, or scientific notation when tiny."""
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"


def csv_cell(value: object) -> object:
    """``value`` made safe as a CSV cell: text that a spreadsheet would run as a formula (it starts
    with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) gets a leading ``'``, OWASP's rule.

    Only text is changed: numbers stay numbers (``-0.5`` is still ``-0.5``), and None, booleans
    and anything else pass through for the writer to format as it does. Every CSV this tool
    writes puts each cell through here."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: control characters (newlines included), bidirectional
    overrides and lone surrogates are written as escapes (``\\x1b``, ``\\u202e``) instead of being
    acted on. For what the CLI prints from stored data: ids, questions, names, error messages."""
    return _UNPRINTABLE.sub(_escape, text)


def visible(text: str) -> str:
    """``text`` as a web page should show it: the escapes of :func:`printable` for the same characters,
    but for tab and line breaks, which pages keep. The site puts every text it shows through here."""
    return _UNSHOWABLE.sub(_escape, text)


# What a browser drops from a URL before reading its scheme (the WHATWG URL standard): C0 controls and
# spaces at either end, and every tab and line break anywhere ("java\tscript:" is "javascript:").
_URL_ENDS = "".join(map(chr, range(0x21)))
_URL_DROPPED = re.compile(r"[\t\n\r]")
_WEB_SCHEMES = ("http", "https")


def web_link(url: str) -> str:
    """``url`` as a link may carry it, if it is an http(s) address, else "" (show it as text): the one
    place that decides which links from data (a claim's source, a pinned file) a page may render, so no
    ``javascript:``, ``data:`` or disguised scheme becomes something to click. Returns the URL as the
    browser would read it, without what it drops."""
    cleaned = _URL_DROPPED.sub("", url.strip(_URL_ENDS))
    scheme, colon, rest = cleaned.partition(":")
    if not colon or scheme.lower() not in _WEB_SCHEMES or not rest.lstrip("/\\"):
        return ""
    return cleaned


def json_text(value: Any, *, indent: int | None = None, sort_keys: bool = False) -> str:
    """``value`` as standard JSON (RFC 8259), which any strict parser reads: a number that is not finite
    (NaN, Infinity, which Python's json would write as bare words) is written ``null``, as orjson writes
    it in each run's JSON. The site's JSON files and the CLI's JSON output are all written through here."""
    return json.dumps(_finite(value), indent=indent, sort_keys=sort_keys, ensure_ascii=False, allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def clip_text(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the cut marked with "…" (terminal tables that must stay narrow)."""
    return text if len(text) <= width else text[: width - 1] + "…"


# Up to 18 ASCII digits: within 64 bits, and short of the 4,300 digits past which int() refuses a string.
_WHOLE_NUMBER = re.compile(r"[0-9]{1,18}")


def whole_number(text: str) -> int | None:
    """``text`` read as a whole number written in ASCII digits (at most 18 of them), else None.

    The one reader of a number typed as text (a cutoff, a metric's ``@K``, a port): ``str.isdigit()``
    and a regex's ``\\d`` also accept other scripts' digits and superscripts, which ``int()`` then
    reads as something else (``'٣'`` is 3) or refuses (``'²'``, with a traceback)."""
    return int(text) if _WHOLE_NUMBER.fullmatch(text) else None
