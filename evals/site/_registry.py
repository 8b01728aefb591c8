"""The page kinds a build publishes, in registry order.

A new kind of page is a module with a :class:`~evals.site._publisher.Publisher`
subclass (and its page models, in the same module, and template in
``site_templates/``), listed here; the build and the navigation pick it up.
Classes, not instances: each build and each worker process makes its own, so
no state leaks from one build to the next.
"""

from __future__ import annotations

from evals.site._about import AboutPublisher
from evals.site._across import AcrossPublisher
from evals.site._compare import ComparePublisher
from evals.site._history import HistoryPublisher
from evals.site._leaderboard import LeaderboardPublisher
from evals.site._pairs import PairsPublisher
from evals.site._publisher import Publisher
from evals.site._run import RunPublisher
from evals.site._suspects import SuspectsPublisher
from evals.site._transcripts import TranscriptPublisher

__all__ = ["PUBLISHERS"]

PUBLISHERS: tuple[type[Publisher], ...] = (
    LeaderboardPublisher,
    AcrossPublisher,
    RunPublisher,
    TranscriptPublisher,
    HistoryPublisher,
    ComparePublisher,
    PairsPublisher,
    AboutPublisher,
    SuspectsPublisher,
)
