"""The Jinja environment: autoescaping, ``StrictUndefined``, hidden characters shown, and the number
and link filters of :mod:`evals.model.formatting`."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import jinja2
from markupsafe import Markup

from evals.model.formatting import decimal, milliseconds, number, percent, relative, usd, visible, web_link
from evals.site._pages import Page

__all__ = ["DEFAULT_TEMPLATES", "context_of", "make_environment", "render"]


def _default_templates() -> Path:
    # An installed wheel carries the templates as evals/site_templates (see
    # pyproject.toml); a source checkout, editable installs included, has
    # them at the top of the repository.
    package = Path(__file__).resolve().parents[1]
    installed = package / "site_templates"
    return installed if installed.is_dir() else package.parent / "site_templates"


DEFAULT_TEMPLATES = _default_templates()


def sortkey(value: float | int | str | None) -> str:
    """The ``data-sort`` value of a cell: plain digits for numbers, empty for none (sorted last)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(round(value, 9))
    return str(value)


def count(value: float | int) -> str:
    """A whole count (records or tokens held at most), without the decimals a float would bring."""
    return number(round(value))


def shown(value: object) -> object:
    """Every value a template prints (Jinja's ``finalize``), before it is escaped: text with its bidirectional
    controls, invisible formatting characters and control characters written as visible escapes
    (``\\u202e``, :func:`evals.model.formatting.visible`), so stored text never reorders or hides what a page
    says. In one place, so no page, attribute or title can miss it; the stored text itself is unchanged.
    Markup (what a macro rendered) has been through here already.

    Every character :func:`visible` escapes is one ``str.isprintable`` calls unprintable (controls, format
    characters, surrogates), so a printable text, as nearly every text is, is shown as it is without the scan."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return value if value.isprintable() else visible(value)
    return value


# The settings that shape a template's compiled code (Jinja keys its bytecode by the template's source alone).
_COMPILED_WITH = {"autoescape": True, "trim_blocks": True, "lstrip_blocks": True, "keep_trailing_newline": True}


def _bytecode_cache(templates: Path) -> jinja2.BytecodeCache | None:
    """Where the templates' compiled code is kept between builds: a folder beside the user cache
    (:func:`evals.io.cache.user_cache_path`; none when that is ``off``), named by Jinja's and Python's versions, the
    settings above, the finalizer and the templates' folder. Compiling the templates was a tenth of a rebuild
    that reuses every run's pages; Jinja checks each kept template against its source before using it."""
    import sys

    from evals.io.cache import digest, user_cache_path

    found = user_cache_path()
    if found is None:
        return None
    key = digest(jinja2.__version__, sys.version, repr(sorted(_COMPILED_WITH.items())), shown.__qualname__, str(templates))
    folder = found.parent / f"templates-{key[:16]}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # a read-only home: the templates are compiled each build, as before
    return jinja2.FileSystemBytecodeCache(str(folder))


def make_environment(templates_dir: Path | None = None) -> jinja2.Environment:
    templates = Path(templates_dir or DEFAULT_TEMPLATES).absolute()
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
        bytecode_cache=_bytecode_cache(templates),
        finalize=shown,
        undefined=jinja2.StrictUndefined,
        **_COMPILED_WITH,
        auto_reload=False,  # one build renders thousands of pages; never re-stat the templates
    )
    env.filters.update(
        pct=percent, num=number, ratio=decimal, ms=milliseconds, relative=relative, sortkey=sortkey, count=count, usd=usd,
        web_link=web_link,  # every link to elsewhere that comes from data goes through it: http(s) or not a link
    )
    return env


def context_of(page: Page) -> dict[str, object]:
    """The page's fields as top-level template variables (shallow: rows stay objects)."""
    return {f.name: getattr(page, f.name) for f in dataclasses.fields(page)}


def render(env: jinja2.Environment, page: Page) -> str:
    return env.get_template(page.template).render(context_of(page))
