"""About: the methodology page, with the fixed LLM prompts as this build's package ships them."""

from __future__ import annotations

from evals.benchmarks import units
from evals.judge.headline import EVIDENCE, KEYWORD
from evals.judge.metrics import METRICS
from evals.model.tokens import APPROXIMATE, EXACT
from evals.site._leaderboard import metric_column
from evals.site._output import Output
from evals.site._pages import AboutPage, PromptView, RuleView
from evals.site._publisher import Publisher, Site
from evals.strategies import REFERENCE_STRATEGY

__all__ = ["AboutPublisher"]


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
                title="Methodology",
                root="",
                nav=self.name,
                store_note=site.note,
                store_href=site.store_href,
                navigation=site.navigation,
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
    from evals.benchmarks.protocols.prompts import PROMPT_NAMES, prompt, prompt_digests

    digests = prompt_digests()
    return [
        PromptView(name=name, file=f"evals/benchmarks/protocols/prompts/{name}.txt", digest=digests[name], text=prompt(name))
        for name in PROMPT_NAMES
    ]
