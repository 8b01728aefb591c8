"""About: the methodology page, with the fixed LLM prompts as this build's package ships them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from evals.benchmarks import units
from evals.judge.headline import EVIDENCE, KEYWORD
from evals.judge.metrics import METRICS
from evals.model.tokens import APPROXIMATE, EXACT
from evals.site._leaderboard import metric_column
from evals.site._output import Output
from evals.site._pages import MetricColumn, Page
from evals.site._publisher import Publisher, Site
from evals.strategies import REFERENCE_STRATEGY

__all__ = ["AboutPage", "AboutPublisher", "PromptView", "RuleView"]


# -- its page models (what its templates may use) ----------------------------------------------


@dataclass(frozen=True)
class AboutPage(Page):
    template: ClassVar[str] = "about.html"

    exact_tokenizer: str
    approx_tokenizer: str
    reference_strategy: str  # what the leaderboard's relative cost is relative to
    metrics: list[MetricColumn] = field(default_factory=list)  # every declared metric (evals.judge.metrics)
    prompts: list[PromptView] = field(default_factory=list)
    rules: list[RuleView] = field(default_factory=list)  # each headline rule (evals.judge.headline)


@dataclass(frozen=True)
class RuleView:
    """One headline rule, as the methodology page states it."""

    corpus: str  # which corpora it judges
    label: str
    population: str
    follows: str
    note: str


@dataclass(frozen=True)
class PromptView:
    """One fixed prompt, as shipped."""

    name: str
    file: str
    digest: str  # what a run records in its LLM settings
    text: str


class AboutPublisher(Publisher):
    """about.html: how to read the numbers."""

    name = "about"
    pages = (AboutPage,)
    nav_label = "Methodology"
    nav_href = "about.html"
    nav_order = 40

    def publish(self, site: Site, output: Output) -> None:
        output.page(
            site.env,
            "about.html",
            AboutPage(
                **site.frame("Methodology", self.name),
                exact_tokenizer=EXACT,
                approx_tokenizer=APPROXIMATE,
                reference_strategy=REFERENCE_STRATEGY,
                metrics=[metric_column(m) for m in METRICS.values()],
                prompts=prompt_views(),
                rules=[RuleView(r.corpora, r.label, r.population, r.follows, r.note) for r in rules()],
            ),
        )


def rules() -> list:
    """Every registered benchmark's own headline rule, in registry order, then the harness's two."""
    declared = [u.rule for u in units().values() if u.rule is not None]
    return [*declared, EVIDENCE, KEYWORD]


def prompt_views() -> list[PromptView]:
    """The fixed prompts as this build's package ships them."""
    # From where evals.run.llm has them, without importing it: that would load the OpenAI client into every build.
    from evals.benchmarks.protocols.prompts import PROMPT_NAMES, prompt, prompt_digests

    digests = prompt_digests()
    return [
        PromptView(name=name, file=f"evals/benchmarks/protocols/prompts/{name}.txt", digest=digests[name], text=prompt(name))
        for name in PROMPT_NAMES
    ]
