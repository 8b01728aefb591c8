"""What a run's LLM requests cost: a price table, and dollars and tokens per correct answer.

The table maps a model to US dollars per 1 million input (prompt) and output (completion) tokens,
each price with the date and the source it was stated at. ``evals/model/prices.toml`` ships the prices we
can cite; a user's table (``--prices FILE``, a suite's ``[prices]``) overrides it model by model.
A model with no price has no dollar figure, and the reports say which model lacks one.

The arithmetic reads a run's usage as the store keeps it (:func:`evals.model.results.usage_json`): per
kind of request (``answer``, ``judge``, ``memory_write``) the tokens sent and the tokens served from
the cache, and the price the run was costed at. Two figures, two questions:

* **$ spent**: what this run paid, every kind, requests sent only; a reply served from the cache
  cost nothing now, so a rerun served from the cache spent $0 (with or without a price).
* **$ / correct answer** and **tokens / correct answer**: what a correct answer costs with this
  configuration, whatever the cache held: the answer and memory-write requests at list price, sent
  or cached, over the answers the judge graded correct. The judge's requests are the evaluation's
  cost, not the memory's, so they are left out (and reported apart).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from evals.errors import EvalsError

__all__ = [
    "COSTED_KINDS",
    "Price",
    "PriceError",
    "PriceTable",
    "family",
    "load_prices",
    "parse_prices",
    "priced_usage",
    "same_model",
    "served_elsewhere",
    "shipped_prices",
    "tokens_per_correct",
    "unpriced",
    "usd_per_correct",
    "usd_spent",
]

# The kinds whose tokens a correct answer costs (the judge's are the evaluation's).
COSTED_KINDS = ("answer", "memory_write")
# The largest price accepted, in $ per 1M tokens: far above any list price, small enough to be a typo's bound.
MAX_PRICE = 10_000.0
_MAX_PRICES_FILE = 1024**2

# A dated snapshot's suffix: -2024-07-18 (OpenAI), -20240620 (Anthropic), -0613 (OpenAI's older MMDD).
_DATED = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$")


class PriceError(EvalsError):
    """A price table that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Price:
    input: float  # $ per 1M prompt tokens
    output: float  # $ per 1M completion tokens
    date: str | None  # when it was stated (None: not said)
    source: str  # where: a URL, or the file that gave it

    def as_json(self) -> dict[str, Any]:
        return {"input": self.input, "output": self.output, "date": self.date, "source": self.source}


def family(model: str) -> str:
    """The undated name of a dated snapshot (``gpt-4o-mini-2024-07-18`` -> ``gpt-4o-mini``); else the name."""
    return _DATED.sub("", model)


def same_model(asked: str, served: str) -> bool:
    """Whether the endpoint served what was asked: the same name, or a dated snapshot of the undated
    name asked for (asked ``gpt-4o-mini``, served ``gpt-4o-mini-2024-07-18``). A pinned snapshot served
    as another snapshot, or another model, differs."""
    return served == asked or family(served) == asked


@dataclass(frozen=True)
class PriceTable:
    prices: Mapping[str, Price]

    def lookup(self, model: str) -> Price | None:
        """The model's price; a dated snapshot not listed takes its undated name's; None when neither is listed."""
        found = self.prices.get(model)
        return found if found is not None else self.prices.get(family(model))

    def override(self, other: PriceTable) -> PriceTable:
        """This table with ``other``'s prices taking precedence, model by model."""
        return PriceTable({**self.prices, **other.prices})


def _number(value: Any, where: str) -> float:
    # bool is an int to Python, not a price to anyone else.
    if type(value) not in (int, float) or not math.isfinite(value) or not 0 <= value <= MAX_PRICE:
        raise PriceError(f"{where}: expected a number of dollars per 1M tokens from 0 to {MAX_PRICE:g}, got {value!r}")
    return float(value)


def parse_prices(table: Any, where: str) -> PriceTable:
    """A ``[prices]`` table: ``"MODEL" = {input = $, output = $, date = "YYYY-MM-DD", source = "..."}``
    (date and source optional; the source defaults to ``where``). Errors name ``where`` and the key."""
    if not isinstance(table, dict):
        raise PriceError(f"{where}: expected a table of models, each with input and output prices")
    prices = {}
    for model, entry in table.items():
        at = f"{where}.{model!r}" if not re.fullmatch(r"[A-Za-z0-9_-]+", model) else f"{where}.{model}"
        if not isinstance(entry, dict):
            raise PriceError(f"{at}: expected a table with input and output (dollars per 1M tokens)")
        unknown = sorted(set(entry) - {"input", "output", "date", "source"})
        if unknown:
            raise PriceError(f"{at}.{unknown[0]}: unknown key (a price has input, output, date and source)")
        for name in ("input", "output"):
            if name not in entry:
                raise PriceError(f"{at}: no {name} price (dollars per 1M tokens)")
        date, source = entry.get("date"), entry.get("source", where)
        if date is not None and not isinstance(date, str):
            date = str(date)  # TOML's own dates are welcome too
        if not isinstance(source, str) or not source.strip():
            raise PriceError(f"{at}.source: expected a non-empty string")
        prices[model] = Price(_number(entry["input"], f"{at}.input"), _number(entry["output"], f"{at}.output"), date, source)
    return PriceTable(prices)


def load_prices(path: str | Path) -> PriceTable:
    """The ``[prices]`` table of the TOML file ``path`` (as ``evals/model/prices.toml`` is written)."""
    import tomllib  # here, not at the top: a run that prices nothing never parses TOML

    from evals.io.jsonfile import JSONFileError, decode, read_bytes

    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise PriceError(f"{path}: no such price file")
    try:  # regular files only, and bounded: a FIFO would block, /dev/zero never ends
        if path.is_file() and path.stat().st_size > _MAX_PRICES_FILE:
            raise PriceError(f"{path}: larger than {_MAX_PRICES_FILE // 1024} KiB; a price table is a few lines")
        data = tomllib.loads(decode(read_bytes(path, _MAX_PRICES_FILE), str(path)))
    except JSONFileError as exc:
        raise PriceError(str(exc)) from None
    except OSError as exc:
        raise PriceError(f"{path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise PriceError(f"{path}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - {"prices"})
    if unknown:
        raise PriceError(f"{path}: {unknown[0]}: unknown key (a price file has one [prices] table)")
    if "prices" not in data:
        raise PriceError(f'{path}: no [prices] table (write [prices."MODEL"] with input and output)')
    return parse_prices(data["prices"], f"{path}: prices")


def shipped_prices() -> PriceTable:
    """The prices that ship with evals (``evals/model/prices.toml``)."""
    import tomllib

    text = resources.files("evals.model").joinpath("prices.toml").read_text(encoding="utf-8")
    return parse_prices(tomllib.loads(text)["prices"], "evals/model/prices.toml")


# -- the arithmetic, on a run's usage as stored (kind -> RequestTally.as_json()) -----------------------


def priced_usage(usage: Mapping[str, Any], table: PriceTable) -> dict[str, Any]:
    """``usage`` with each kind's price looked up in ``table`` (None where the table has none)."""
    out = {}
    for kind, tally in usage.items():
        price = table.lookup(tally["model"])
        out[kind] = {**tally, "price": price.as_json() if price is not None else None}
    return out


def _usd(tally: Mapping[str, Any], sent_only: bool) -> float | None:
    prompt, completion = tally["prompt_tokens"], tally["completion_tokens"]
    if not sent_only:
        prompt, completion = prompt + tally["cached_prompt_tokens"], completion + tally["cached_completion_tokens"]
    if prompt == 0 and completion == 0:
        return 0.0  # nothing to pay, priced or not
    price = tally.get("price")
    if price is None:
        return None
    return (prompt * price["input"] + completion * price["output"]) / 1e6


def usd_spent(usage: Mapping[str, Any]) -> float | None:
    """Dollars of every request the run sent (cached replies cost nothing); None where a kind that sent
    tokens has no price."""
    parts = [_usd(tally, sent_only=True) for tally in usage.values()]
    return None if any(p is None for p in parts) else sum(parts)  # type: ignore[misc]


def _costed(usage: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [usage[kind] for kind in COSTED_KINDS if kind in usage]


def usd_per_correct(usage: Mapping[str, Any], correct: int | None) -> float | None:
    """Dollars of the answer and memory-write requests at list price (sent or cached) per correct answer;
    None without a correct answer or without a price."""
    if not correct:
        return None
    parts = [_usd(tally, sent_only=False) for tally in _costed(usage)]
    if not parts or any(p is None for p in parts):
        return None
    return sum(parts) / correct  # type: ignore[arg-type]


def tokens_per_correct(usage: Mapping[str, Any], correct: int | None) -> float | None:
    """Prompt and completion tokens of the answer and memory-write requests (sent or cached) per correct answer."""
    if not correct or not _costed(usage):
        return None
    total = sum(
        t["prompt_tokens"] + t["completion_tokens"] + t["cached_prompt_tokens"] + t["cached_completion_tokens"]
        for t in _costed(usage)
    )
    return total / correct


def unpriced(usage: Mapping[str, Any]) -> list[str]:
    """The models of the kinds that used tokens and have no price, each once, in kind order."""
    models = [t["model"] for t in usage.values() if t.get("price") is None and any(t[n] for n in _TOKEN_FIELDS)]
    return list(dict.fromkeys(models))


_TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "cached_prompt_tokens", "cached_completion_tokens")


def served_elsewhere(usage: Mapping[str, Any]) -> list[tuple[str, str, str, int, int]]:
    """Where the endpoint said another model served a kind's requests than the one asked for (beyond a
    dated snapshot of the undated name asked, :func:`same_model`): ``(kind, asked, served, requests, of)``
    per such model. A reply that named no model is not counted as differing (the endpoint did not say)."""
    out = []
    for kind, tally in usage.items():
        total = sum(s["requests"] for s in tally.get("served", []))
        by_model: dict[str, int] = {}
        for served in tally.get("served", []):
            if served["model"] is not None and not same_model(tally["model"], served["model"]):
                by_model[served["model"]] = by_model.get(served["model"], 0) + served["requests"]
        out.extend((kind, tally["model"], model, count, total) for model, count in by_model.items())
    return out
