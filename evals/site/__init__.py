"""The static leaderboard site: page models, charts and the build.

``build_site(store, out)`` reads the results store (read-only) and writes a
static site of plain HTML files: a front page listing the benchmarks, a
leaderboard per benchmark (a board and accuracy-versus-cost chart per corpus),
the test points the label audit flags per benchmark, a page per run, a drill-down per run and
conversation, each conversation's transcript once per corpus (turns that recur
across conversations once per corpus too), a history page per configuration,
a comparison of the two latest commits, and downloads (CSV, JSON, each run's
JSON in the original harness's shape, gzipped, and the store file while it is
small). A build over an earlier one reuses the pages of runs and corpora made
from the same inputs (:mod:`evals.site._manifest`). Templates live in
``site_templates/``; each page's context is a dataclass in its page kind's
module (those several kinds share, and the ``Page`` base, in :mod:`evals.site._pages`). Each kind of page is a publisher
(:mod:`evals.site._publisher`) listed in :mod:`evals.site._registry`.
"""

from evals.site._build import BuildReport, SiteError, build_site, build_site_from
from evals.site._render import DEFAULT_TEMPLATES

__all__ = ["DEFAULT_TEMPLATES", "BuildReport", "SiteError", "build_site", "build_site_from"]
