"""What the tests share that is not a fixture: builders, parsers, servers and checks, one module a kind.

Fixtures live in ``tests/conftest.py``; a test module imports from here, never from another test
module (``tests/project/test_test_tree.py`` checks it).

- :mod:`helpers.html`: a tiny DOM over ``html.parser``, following a relative link, Markdown table rows;
- :mod:`helpers.browser`: a folder over HTTP on 127.0.0.1, headless Chromium, and a page's problems;
- :mod:`helpers.cli`: ``evals ARGS`` in-process, a store holding one genuine run, forbidding the work of a run;
- :mod:`helpers.errors`: the one-line ``Error: …`` a refused command prints;
- :mod:`helpers.corpora`: conversations and benchmark files written by the tests, and imported as corpora;
- :mod:`helpers.stores`: provenance, stores of real runs, the site built from one, what a store holds byte for byte;
- :mod:`helpers.runs`: `evals run` against the local LLM server, the runs it stored, export and import;
- :mod:`helpers.results`: a result document's figures in the shapes the tests compare;
- :mod:`helpers.plugins`: the metadata pip writes for an entry-point strategy;
- :mod:`helpers.strategies`: the toy memory the tests' own strategies extend;
- :mod:`helpers.tokens`: faults in the token counter's child, made on purpose;
- :mod:`helpers.llm_server`, :mod:`helpers.benchmark_server`: local stand-ins for an LLM and the benchmarks' hosts;
- :mod:`helpers.cognee_replies`: the LLM server's replies to cognee's cognify prompts;
- :mod:`helpers.protocol_sources`: stand-ins for the published files the protocols read;
- :mod:`helpers.pairs`: a LoCoMo-shaped store of two memories and its site, for the compare pages;
- :mod:`helpers.audit`: a published answer-key audit of LoCoMo (its layout and entries), for the planted fixture;
- :mod:`helpers.hostile`: corpora, files and exports the hostile-input tests write on purpose;
- :mod:`helpers.lane`: the fast lane's markers, and which tests a file leaves to ``--run-slow``, read without importing it.

Test modules live in the folder of the layer they test (``tests/store/``, ``tests/site/``...) or in
``tests/project/``; they reach the repository through ``ROOT``, ``FIXTURES`` and ``PLUGINS``, never by
climbing from their own file.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
PLUGINS = ROOT / "tests" / "plugins"  # plug-in strategies and benchmarks the tests put on a path


def build(name: str, **options):
    """The registered strategy ``name`` with these options, built as a run builds it."""
    from evals.strategies import BuildContext, Registry

    return Registry().plan(name, options, BuildContext()).build()


def configuration(name: str, **options) -> dict:
    """The configuration a run of strategy ``name`` with these options records, found without building it."""
    from evals.strategies import BuildContext, Registry

    return Registry().plan(name, options, BuildContext()).configuration
