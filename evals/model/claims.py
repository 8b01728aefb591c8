"""Published claims: the figures systems' makers and other harnesses publish for a benchmark, as data.

Each benchmark unit ships its own (``claims.toml`` in its folder, read by :func:`claims_in`), each with
where it was read (repository, commit and path, or a URL); :func:`evals.benchmarks.published_claims` gathers
them. They are never ranked and never mixed into runs: someone else computed them, on their copy of the
data, often with an LLM judge we do not have. :mod:`evals.views.claims` says which claims a board shows
and which run, if any, measures the same figure the same way.

A file with a bad claim is refused whole, with the file and the field named, so a typo never turns into a
silently missing row.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from evals.errors import EvalsError
from evals.model.formatting import web_link

__all__ = ["Claim", "ClaimError", "ClaimSource", "ClaimsFile", "claims_in", "load_claims", "parse_claims"]

CLAIMS_FILE = "claims.toml"  # the file a unit's claims are in, in the unit's folder
_MAX_FILE = 1024 * 1024


class ClaimError(EvalsError):
    """A claims file that cannot be read or holds a claim that is not well formed."""


def _text(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank_string", "must be a non-empty string")
    return value


def _fraction(value: float) -> float:
    if not 0 <= value <= 1:
        raise PydanticCustomError(
            "not_a_fraction", "must be between 0 and 1 (a fraction, not a percentage), got {value}", {"value": value}
        )
    return value


def _positive(value: int) -> int:
    if value < 1:
        raise PydanticCustomError("not_positive", "must be a positive integer, got {value}", {"value": value})
    return value


def _web_address(value: str) -> str:
    if not web_link(value):
        raise PydanticCustomError("not_a_web_address", "must be an http(s) address, got {value!r}", {"value": value})
    return value


def _commit(value: str) -> str:
    if len(value) != 40 or any(c not in "0123456789abcdef" for c in value):
        raise PydanticCustomError("not_a_commit", "must be a full 40-digit lower-case commit hash (a pinned source)")
    return value


Text = Annotated[str, AfterValidator(_text)]
Positive = Annotated[StrictInt, AfterValidator(_positive)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ClaimSource(_Strict):
    """Where a claim was read: a repository at a pinned commit and a path in it, or a URL (or both)."""

    repository: Text | None = None  # owner/name on GitHub
    commit: Annotated[str, AfterValidator(_commit)] | None = None
    path: Text | None = None
    url: Annotated[str, AfterValidator(_web_address)] | None = None  # shown as a link: http(s) only

    @model_validator(mode="after")
    def _pinned(self) -> ClaimSource:
        if self.repository is None and self.url is None:
            raise PydanticCustomError("no_source", "needs a repository (with commit and path) or a url")
        if self.repository is not None and (self.commit is None or self.path is None):
            raise PydanticCustomError("unpinned", "a repository source needs the commit and the path it was read at")
        return self

    @property
    def text(self) -> str:
        """The source in one line: ``owner/name@commit12 path`` and the URL."""
        parts = []
        if self.repository is not None:
            parts.append(f"{self.repository}@{(self.commit or '')[:12]} {self.path}")
        if self.url is not None:
            parts.append(self.url)
        return "; ".join(parts)

    @property
    def href(self) -> str:
        """A link to the source as read: the file at its commit on GitHub, else the URL."""
        if self.repository is not None:
            return f"https://github.com/{self.repository}/blob/{self.commit}/{self.path}"
        return self.url or ""


class Claim(_Strict):
    """One published figure of one system on one benchmark."""

    benchmark: Text  # the benchmark unit: locomo, longmemeval, beam
    corpus: Text | None = None  # the registry's corpus it was measured on (locomo, beam_10m), when the source says
    system: Text
    version: Text  # "not stated" where the source names none
    figure: Text  # the figure as the source names it
    value: Annotated[float, Field(strict=False), AfterValidator(_fraction)]
    metric: Text  # the harness's name for it: recall_any, recall_frac, answer_accuracy, nugget_score...
    k: Positive | None = None
    budget: Positive | None = None  # a context budget in tokens, where the figure is at one instead of at k
    level: Literal["turn", "session"] | None = None  # retrieval figures: what a hit is counted on
    population: Text  # which questions, in words
    questions: Positive | None = None  # how many, where the source says
    # What a question without evidence counts as, where the source counts it (MemPalace: 1.0); None: left out,
    # as the harness leaves it out. A run's figure is set beside such a claim over the same population
    # (evals.judge.metrics.over_every_point).
    without_evidence: Annotated[float, Field(strict=False), AfterValidator(_fraction)] | None = None
    judge: Text | None = None  # the judging model of a QA figure ("not stated" when the source does not say)
    measured_by: Text  # who produced the figure: the maker (self-reported) or another harness
    note: Text | None = None
    source: ClaimSource
    # Who added it, where not the benchmark's own unit in this package: a plug-in's distribution and version, or a
    # suite file. Set by whoever reads the file (a file cannot claim to be built in), and shown with the claim.
    origin: str = ""

    @property
    def label(self) -> str:
        added = f" (added by {self.origin})" if self.origin else ""
        return f"{self.system}: {self.figure}{added}"


def parse_claims(data: object, where: str, benchmark: str | None = None) -> list[Claim]:
    """The claims of a parsed claims file (``[[claim]]`` tables); errors name ``where`` and the field.

    ``benchmark``: the unit whose file it is; a claim there names no benchmark, or that one."""
    if not isinstance(data, dict):
        raise ClaimError(f"{where}: expected [[claim]] tables")
    unknown = sorted(set(data) - {"claim"})
    if unknown:
        raise ClaimError(f"{where}: {unknown[0]}: unknown key (a claims file has [[claim]] tables only)")
    rows = data.get("claim", [])
    if not isinstance(rows, list):
        raise ClaimError(f"{where}: claim: expected [[claim]] tables")
    claims = []
    for n, row in enumerate(rows):
        if isinstance(row, dict) and "origin" in row:
            raise ClaimError(f"{where}: claim[{n}].origin: unknown key (who added a claim is said by where it is read)")
        if benchmark is not None and isinstance(row, dict):
            if row.get("benchmark", benchmark) != benchmark:
                raise ClaimError(f"{where}: claim[{n}].benchmark: this file holds the claims of {benchmark!r}")
            row = {"benchmark": benchmark, **row}
        try:
            claims.append(Claim.model_validate(row))
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(part) for part in error["loc"])
            at = f"claim[{n}]" + (f".{field}" if field else "")
            system = row.get("system") if isinstance(row, dict) else None
            named = f" ({system})" if isinstance(system, str) else ""
            raise ClaimError(f"{where}: {at}{named}: {error['msg']}") from None
    return claims


def load_claims(path: str | Path, benchmark: str | None = None) -> list[Claim]:
    """The claims of the TOML file ``path`` (written as a unit's ``claims.toml`` is)."""
    path = Path(path)
    try:
        if path.stat().st_size > _MAX_FILE:
            raise ClaimError(f"{path}: larger than {_MAX_FILE // 1024} KiB")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ClaimError(f"{path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ClaimError(f"{path}: not UTF-8 text") from None
    return _parse_text(text, str(path), benchmark)


def _parse_text(text: str, where: str, benchmark: str | None = None) -> list[Claim]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ClaimError(f"{where}: not valid TOML: {exc}") from None
    return parse_claims(data, where, benchmark)


@dataclass(frozen=True)
class ClaimsFile:
    """A reader of the claims of ``benchmark`` in ``package``'s file ``file``, read once, on first use (call it).

    A unit hands one to the registry (``Unit(claims=claims_in(__name__, NAME))``); a plug-in adding claims to any
    registered benchmark names one by an entry point of ``mneme_evals.claims`` named for that benchmark. Every
    claim in it is of ``benchmark``: a row naming another is refused with the file."""

    package: str
    benchmark: str
    file: str = CLAIMS_FILE

    def __call__(self) -> list[Claim]:
        return list(_read_packaged(self.package, self.file, self.benchmark))


@cache
def _read_packaged(package: str, file: str, benchmark: str) -> tuple[Claim, ...]:
    try:
        text = resources.files(package).joinpath(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ClaimError(f"{package.replace('.', '/')}/{file}: cannot be read: {exc}") from None
    return tuple(_parse_text(text, f"{package.replace('.', '/')}/{file}", benchmark))


def claims_in(package: str, benchmark: str, file: str = CLAIMS_FILE) -> ClaimsFile:
    """The claims of ``benchmark`` in ``package``'s ``file`` (``claims.toml`` beside a unit), as a reader for a unit's
    ``claims`` field or a claims entry point."""
    return ClaimsFile(package, benchmark, file)
