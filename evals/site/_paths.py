"""Every file name of the site, decided once so that links and files agree."""

from __future__ import annotations

from evals.site._text import unique_slugs
from evals.store import RunSummary

__all__ = ["Paths", "config_id", "root_of"]


def config_id(summary: RunSummary) -> tuple[str, str]:
    """What the site follows through history: one configuration on one corpus."""
    return summary.corpus_digest, summary.config_key


def root_of(path: str) -> str:
    """The relative way back to the site root from the page at ``path``: "", "../", "../../"."""
    return "../" * path.count("/")


class Paths:
    """The site-relative path of every run, drill-down and history page."""

    def __init__(self, summaries: list[RunSummary]) -> None:
        self.run_slug = unique_slugs([s.run_id for s in summaries])
        configs = sorted({config_id(s) for s in summaries})
        self.config_slug = unique_slugs([f"{key}--{digest[:10]}" for digest, key in configs])
        self._config_name = {(digest, key): f"{key}--{digest[:10]}" for digest, key in configs}
        self._conversation_slugs: dict[str, dict[str, str]] = {}

    def run(self, run_id: str) -> str:
        return f"runs/{self.run_slug[run_id]}.html"

    def run_json(self, run_id: str) -> str:
        return f"runs/{self.run_slug[run_id]}.json"

    def set_conversations(self, run_id: str, conversation_ids: list[str]) -> None:
        """Name the drill-downs of a run; known only once the run itself is read."""
        self._conversation_slugs[run_id] = unique_slugs(conversation_ids)

    def conversation(self, run_id: str, conversation_id: str) -> str:
        return f"runs/{self.run_slug[run_id]}/{self._conversation_slugs[run_id][conversation_id]}.html"

    def history(self, digest: str, key: str) -> str:
        return f"history/{self.config_slug[self._config_name[(digest, key)]]}.html"
