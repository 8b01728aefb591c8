"""What a QA figure is: its protocol, judge and endpoint in words, and the badges a reader must see first.

A row with answers is only comparable to another when both were asked and judged the same way, so each QA
figure says under which protocol, by which judge model and at which endpoint host it was made; and a badge
flags a run whose verdicts were mostly unparsed (more than :data:`evals.judge.answer_metrics.UNPARSED_LIMIT`),
whose endpoint is local (a test server, not the provider), or whose dollars were priced from another
provider than the endpoint it called. (A model served other than the one asked for is
:func:`evals.views.tables.served_caveat`'s badge, shown beside these.)
"""

from __future__ import annotations

from urllib.parse import urlsplit

from evals.judge.answer_metrics import UNPARSED_LIMIT
from evals.model.formatting import percent
from evals.store import RunSummary
from evals.views.tables import Caveat

__all__ = ["QA", "endpoint_host", "qa_caveats", "qa_note", "twin_note"]

QA = "qa"  # the kind of these caveats (a Caveat's css class)
_LOCAL = ("localhost", "::1", "0.0.0.0")


def endpoint_host(base_url: str | None) -> str:
    """The host (and port) of an OpenAI-compatible endpoint's base URL ("" when there is none)."""
    if not base_url:
        return ""
    parts = urlsplit(base_url)
    return parts.netloc.rsplit("@", 1)[-1] or base_url


def _is_local(host: str) -> bool:
    name = host.rsplit(":", 1)[0].strip("[]") if host.count(":") <= 1 or host.startswith("[") else host
    return name in _LOCAL or name.startswith("127.") or name.endswith(".localhost") or name.endswith(".local")


def _domain(host: str) -> str:
    """The last two labels of a host name: the provider (api.openai.com and community.openai.com -> openai.com)."""
    name = host.rsplit(":", 1)[0]
    return ".".join(name.split(".")[-2:]) if "." in name else name


def qa_note(s: RunSummary) -> str:
    """``protocol locomo · judge gpt-4o-mini · api.openai.com``; "" for a run without answers."""
    if s.answer_model is None:
        return ""
    parts = [f"protocol {s.answer_protocol or 'harness'}", f"judge {s.judge_model}" if s.judge_model else "no judge"]
    host = endpoint_host(s.llm_base_url)
    if host:
        parts.append(host)
    return " · ".join(parts)


def _price_domains(s: RunSummary) -> set[str]:
    found = set()
    for usage in (s.llm_usage or {}).values():
        price = usage.get("price") if isinstance(usage, dict) else None
        source = price.get("source") if isinstance(price, dict) else None
        if isinstance(source, str) and source.startswith(("http://", "https://")):
            found.add(_domain(urlsplit(source).netloc))
    return found


def qa_caveats(s: RunSummary) -> list[Caveat]:
    """The badges of a run with answers: unparsed verdicts past the limit, a local endpoint, prices from another provider."""
    if s.answer_model is None:
        return []
    out = []
    unparsed = s.metric("answer_unparsed")
    if unparsed is not None and unparsed.value is not None and unparsed.value > UNPARSED_LIMIT:
        out.append(
            Caveat(
                QA,
                f"{percent(unparsed.value)} unparsed",
                f"The judge's reply could not be parsed into a verdict for {percent(unparsed.value)} of the counted answers "
                f"(more than {percent(UNPARSED_LIMIT)}). They count as not correct, so the accuracy says as much about the "
                "judge's replies as about the answers.",
            )
        )
    host = endpoint_host(s.llm_base_url)
    if host and _is_local(host):
        out.append(
            Caveat(
                QA,
                "local endpoint",
                f"The answers and verdicts came from {host}, an endpoint on the machine that made the run (a test server or a "
                "local model), not a provider's; any dollar figure is the listed price of the model asked for, not what was "
                "paid.",
            )
        )
    elif host and (domains := _price_domains(s)) and _domain(host) not in domains:
        out.append(
            Caveat(
                QA,
                "priced elsewhere",
                f"The requests went to {host}, but their dollars are priced from {', '.join(sorted(domains))}: the cost is "
                "what that provider lists, not what this endpoint charges.",
            )
        )
    return out


def twin_note(s: RunSummary, others: list[RunSummary]) -> str:
    """In words, how this row differs from rows of the same memory, settings, model and k (answers, judging);
    "" when it has no such twin."""
    same = (s.strategy, s.strategy_config, s.model, s.k)
    twins = [o for o in others if o.run_id != s.run_id and (o.strategy, o.strategy_config, o.model, o.k) == same]
    if not twins:
        return ""
    if s.answer_model is None:
        mine = "retrieval only, no answers"
    else:
        mine = f"answers by {s.answer_model}" + (f", judged by {s.judge_model}" if s.judge_model else ", not judged")
        mine += f" under protocol {s.answer_protocol or 'harness'}"
    answered = any((o.answer_model is None) != (s.answer_model is None) for o in twins)
    what = "answers or judging" if answered else "judging or protocol"
    rows = f"{len(twins)} other row{'s' if len(twins) != 1 else ''}"
    return f"Same memory, settings and k as {rows}; differs only in {what}: {mine}."
