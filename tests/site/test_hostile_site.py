"""The site under hostile input: `--out` holding the store, one huge turn, an incremental
build that trusts nothing it reuses, non-finite numbers in its JSON and hidden characters on its pages.

Every refused action leaves the store byte for byte as it was, and no input gives a traceback: the CLI
prints ``Error: …`` naming the file and field and exits 1 (2 for a bad option, as click does).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import ROOT
from helpers.cli import evals, stored_store
from helpers.corpora import conversation
from helpers.errors import one_line_error
from helpers.hostile import corpus_of, csv_rows

# -- 7. build-site --out must not hold the store ------------------------------------------------


def test_build_site_refuses_an_out_holding_the_store(tmp_path):
    """The CI pattern gone wrong: the store restored into the site's data/ folder and the site rebuilt
    over it would delete the store's cache of paid replies. Refused; nothing changes."""
    from evals.io.cache import Cache, cache_path_for

    first = stored_store(tmp_path / "store")
    site = tmp_path / "site"
    assert evals("build-site", "--store", first, "--out", site).exit_code == 0
    store = site / "data" / "results.duckdb"
    with Cache.open(cache_path_for(store)) as cache:
        cache.put("chat:x", "key", b"a paid reply")
    before = {p: p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}
    line = one_line_error(evals("build-site", "--store", store, "--out", site))
    assert line == (
        f"Error: --out {site.absolute()} holds the store {store.absolute()} (and its cache); a build replaces that whole "
        "folder, so it would delete them: choose another --out, or keep the store elsewhere"
    )
    assert {p: p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()} == before


def test_build_site_refuses_the_store_folder_itself(tmp_path):
    """--out naming the folder the store is in is refused the same way (if it were empty but for the store)."""
    store = stored_store(tmp_path / "store")
    line = one_line_error(evals("build-site", "--store", store, "--out", store.parent))
    assert f"holds the store {store.absolute()}" in line


# -- 8. one huge turn ---------------------------------------------------------------------------

HUGE = 2_000_000  # characters of the huge turn (the issue saw 50 MB; 2 MB shows the same)


@pytest.fixture
def huge_site(tmp_path):
    """A site of bm25 and full_history runs on a conversation whose first turn is 2 MB, with the answer at its start."""
    filler = ("lorem ipsum dolor sit amet " * (HUGE // 27 + 1))[: HUGE - 40]
    big = "The deploy bucket is larkspur-prod-7. " + filler + " THE END."
    turns = [{"role": "user", "content": big}, {"role": "assistant", "content": "Noted."}]
    for i in range(3):
        turns += [
            {"role": "user", "content": f"filler {i}"},
            {"role": "assistant", "content": f"ok {i}"},
            {
                "role": "user",
                "content": f"question {i}",
                "test_at": {
                    "question": "Which bucket for deploys?",
                    "expected_fact": "larkspur-prod-7",
                    "expected_keywords": ["larkspur-prod-7"],
                },
            },
        ]
    corpus = corpus_of(tmp_path / "huge", {"schema_version": "1", "id": "huge", "description": "one huge turn", "turns": turns})
    store = tmp_path / "results.duckdb"
    for runner in ("bm25", "full_history"):
        assert evals("run", "--runner", runner, "--corpus", corpus, "--store", store).exit_code == 0
    assert evals("build-site", "--store", store, "--out", tmp_path / "site").exit_code == 0
    return tmp_path / "site", big


@pytest.mark.slow
def test_huge_turn_gives_bounded_pages(huge_site):
    """No page holds the huge turn whole: every drill-down stays far below its size."""
    site, big = huge_site
    pages = list((site / "runs").rglob("*.html"))
    assert pages and max(p.stat().st_size for p in pages) < 200_000


@pytest.mark.slow
def test_capped_text_states_its_length_and_links_the_whole(huge_site):
    """A capped text shows its start and end, says how long it is, and the transcript links the whole turn."""
    import re

    site, big = huge_site
    page = next(p for p in (site / "runs").rglob("huge.html") if "larkspur" in p.read_text(encoding="utf-8"))
    html = page.read_text(encoding="utf-8")
    assert f"{len(big):,} characters" in html
    assert "THE END." in html and "<mark>larkspur-prod-7</mark>" in html
    # The drill-down links the turn in the corpus's transcript, which links the whole turn as plain text.
    (turn,) = set(re.findall(r'href="([^"]+/c/huge\.html)#t-0"', html))
    transcript = (page.parent / turn).resolve()
    links = set(re.findall(r'href="([^"]+\.txt)"', transcript.read_text(encoding="utf-8")))
    assert len(links) == 1
    (link,) = links
    assert (transcript.parent / link).resolve().read_text(encoding="utf-8") == big


def test_short_texts_are_not_capped(tmp_path):
    """A corpus of ordinary turns shows every text whole, with no omission note."""
    store = stored_store(tmp_path / "store", runner="bm25")
    assert evals("build-site", "--store", store, "--out", tmp_path / "site").exit_code == 0
    for page in (tmp_path / "site" / "runs").rglob("*.html"):
        assert "characters omitted" not in page.read_text(encoding="utf-8")
    assert not list((tmp_path / "site").rglob("*.txt"))


# -- incremental build-site trusts nothing it reuses --------------------------


def site_files(root: Path) -> dict[str, bytes]:
    """Every file of a built site (the store copy aside), by site-relative path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and p.parent.name != "data"
    }


def run_unit(site: Path) -> tuple[str, dict]:
    """The manifest's run unit (key, entry) of a site built from one run."""
    manifest = json.loads((site / ".evals-manifest.json").read_text(encoding="utf-8"))
    return next((key, unit) for key, unit in manifest["units"].items() if key.startswith("run:"))


def edit_manifest(site: Path, edit) -> None:
    """Rewrite the site's manifest after ``edit(document)`` changed it in place."""
    path = site / ".evals-manifest.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    edit(document)
    path.write_text(json.dumps(document), encoding="utf-8")


@pytest.fixture
def built(tmp_path) -> tuple[Path, Path]:
    """A store of one run and the site built from it: (store, site)."""
    store = stored_store(tmp_path / "store")
    site = tmp_path / "site"
    assert evals("build-site", "--store", store, "--out", site).exit_code == 0
    return store, site


def rebuild(store: Path, site: Path) -> list[str]:
    """``evals build-site`` over the earlier build: it must succeed without a traceback; its output lines."""
    result = evals("build-site", "--store", store, "--out", site)
    assert result.exit_code == 0 and result.exception is None, (result.output, result.exception)
    return result.output.splitlines()


def full_build(store: Path, tmp_path: Path) -> dict[str, bytes]:
    assert evals("build-site", "--store", store, "--out", tmp_path / "full", "--full").exit_code == 0
    return site_files(tmp_path / "full")


@pytest.mark.slow
def test_edited_unit_file_is_rendered_again_and_said(built, tmp_path):
    """A drill-down edited by hand after the build is not reused: the rebuild renders its run again, says
    which file had changed, and gives exactly the site a full build gives."""
    store, site = built
    _, unit = run_unit(site)
    page = next(path for path in unit["files"] if path.count("/") == 2)
    with (site / page).open("a", encoding="utf-8") as file:
        file.write("<p>edited by hand</p>")
    lines = rebuild(store, site)
    assert "(1 runs and corpora rendered, 1 reused)" in lines[0]
    assert lines[1:] == [
        (
            "warning: rendered 1 of the last build's runs and corpora again instead of reusing their files: "
            f"{page} changed since the last build wrote it"
        )
    ]
    assert site_files(site) == full_build(store, tmp_path)


@pytest.mark.parametrize("where", ["folder", "file"])
@pytest.mark.slow
def test_symlink_in_a_reused_path_is_not_followed(built, tmp_path, where):
    """A run's folder (or one file) moved out of the site and replaced by a symbolic link to it: nothing
    is linked from outside --out, what is outside stays as it was, and the run is rendered again."""
    store, site = built
    _, unit = run_unit(site)
    page = next(path for path in unit["files"] if path.count("/") == 2)
    outside = tmp_path / "outside"
    moved = site / (page.rpartition("/")[0] if where == "folder" else page)
    shutil.move(moved, outside)
    moved.symlink_to(outside)
    kept = outside / page.rpartition("/")[2] if where == "folder" else outside
    before = (kept.read_bytes(), kept.stat().st_ino, kept.stat().st_nlink)
    lines = rebuild(store, site)
    problem = "passes through a symbolic link" if where == "folder" else "is a symbolic link"
    assert f"{page} {problem}" in lines[1]
    assert (kept.read_bytes(), kept.stat().st_ino, kept.stat().st_nlink) == before
    assert not (site / page).is_symlink() and (site / page).stat().st_ino != kept.stat().st_ino
    assert site_files(site) == full_build(store, tmp_path)


@pytest.mark.slow
def test_manifest_entry_through_a_symlink_links_nothing_from_outside(built, tmp_path):
    """The issue's case: a link in the site to a folder outside it, and the manifest listing a file through
    it with that file's true digest. The file is not hard-linked into the site, nor read; it stays as it was."""
    import hashlib

    store, site = built
    outside = tmp_path / "private"
    outside.mkdir()
    secret = outside / "key.txt"
    secret.write_text("not for publishing\n", encoding="utf-8")
    (site / "escape").symlink_to(outside)
    key, _ = run_unit(site)
    digest = hashlib.sha256(secret.read_bytes()).hexdigest()
    edit_manifest(site, lambda document: document["units"][key]["files"].update({"escape/key.txt": digest}))
    lines = rebuild(store, site)
    assert "escape/key.txt passes through a symbolic link" in lines[1]
    assert not (site / "escape").exists() and secret.stat().st_nlink == 1
    assert secret.read_text(encoding="utf-8") == "not for publishing\n"
    assert site_files(site) == full_build(store, tmp_path)


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/etc/hostname", "an absolute path; the files of a site are named relative to it"),
        ("runs/../../outside.txt", "a path that leads out of its folder (..)"),
        (".evals-texts/x", "not a plain path inside the site (an empty or dot-named part, a backslash or a NUL)"),
    ],
)
@pytest.mark.slow
def test_path_out_of_the_site_in_the_manifest_means_a_full_build(built, tmp_path, path, reason):
    """An absolute or ``..`` path in the manifest (once a traceback on every build): one warning naming the
    field, every unit rendered again, nothing outside --out touched, and the next build is clean."""
    store, site = built
    (tmp_path / "outside.txt").write_text("outside\n", encoding="utf-8")
    key, _ = run_unit(site)
    edit_manifest(site, lambda document: document["units"][key]["files"].update({path: "0" * 64}))
    lines = rebuild(store, site)
    assert "(2 runs and corpora rendered, 0 reused)" in lines[0]
    assert lines[1:] == [
        (
            f"warning: ignored {site.absolute() / '.evals-manifest.json'} "
            f'(units["{key}"].files[{json.dumps(path)}]: {reason}) and rendered every run and corpus again'
        )
    ]
    assert (tmp_path / "outside.txt").read_text(encoding="utf-8") == "outside\n"
    assert rebuild(store, site)[1:] == []


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "invalid JSON at line 1, column 2: Expecting property name enclosed in double quotes"),
        ("[]", "not a JSON object"),
        ('{"version": 99, "units": {}}', "version: 99 is not a manifest version this build knows (2)"),
        ('{"version": 2, "units": []}', "units: not a JSON object"),
        ('{"version": 2, "units": {"run:x": {"fingerprint": NaN, "files": {}}}}', "NaN is not a number JSON allows"),
        (
            '{"version": 2, "units": {"run:x": {"fingerprint": "x", "files": {}}}}',
            'units["run:x"].fingerprint: not a SHA-256 in hex',
        ),
        (
            '{"version": 2, "units": {"run:x": {"fingerprint": "' + "a" * 64 + '", "files": {"a.html": 7}}}}',
            'units["run:x"].files["a.html"]: not a SHA-256 in hex',
        ),
        ('{"version": 2, "version": 2, "units": {}}', "key 'version' appears twice"),
    ],
)
def test_malformed_manifest_means_a_full_build_with_one_warning(built, content, reason):
    """A manifest that is not what a build writes is untrusted input: one warning saying what is wrong, a full build."""
    store, site = built
    (site / ".evals-manifest.json").write_text(content, encoding="utf-8")
    lines = rebuild(store, site)
    assert "(2 runs and corpora rendered, 0 reused)" in lines[0]
    assert lines[1:] == [
        f"warning: ignored {site.absolute() / '.evals-manifest.json'} ({reason}) and rendered every run and corpus again"
    ]


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_manifest_that_is_not_a_regular_file_is_not_read(built, tmp_path, kind):
    """A manifest replaced by a symlink (to a manifest outside the site) or a FIFO is not read: a full build, one warning."""
    import os

    store, site = built
    manifest = site / ".evals-manifest.json"
    if kind == "symlink":
        shutil.move(manifest, tmp_path / "elsewhere.json")
        manifest.symlink_to(tmp_path / "elsewhere.json")
    else:
        manifest.unlink()
        os.mkfifo(manifest)
    lines = rebuild(store, site)
    reason = "it is a symbolic link" if kind == "symlink" else "it is not a regular file"
    assert lines[1:] == [
        f"warning: ignored {site.absolute() / '.evals-manifest.json'} ({reason}) and rendered every run and corpus again"
    ]


def test_manifest_claiming_a_page_the_build_writes_means_a_full_build(built, tmp_path):
    """A unit listing index.html (with its true digest) would have the build write through a link into the
    old site: the build notices, renders everything again with a warning, and the old site is never written."""
    import hashlib

    store, site = built
    key, _ = run_unit(site)
    index = (site / "index.html").read_bytes()
    edit_manifest(
        site, lambda document: document["units"][key]["files"].update({"index.html": hashlib.sha256(index).hexdigest()})
    )
    old = site / "index.html"
    inode = old.stat().st_ino
    lines = rebuild(store, site)
    assert lines[1:] == [
        (
            f"warning: ignored {site.absolute() / '.evals-manifest.json'} (it lists index.html, which this build writes itself) "
            "and rendered every run and corpus again"
        )
    ]
    assert (site / "index.html").stat().st_ino != inode
    assert site_files(site) == full_build(store, tmp_path)


def test_there_is_no_verify_flag_and_the_docs_say_why():
    """Every build checks what it reuses, so build-site has no --verify; docs/site.md says so."""
    docs = (ROOT / "docs" / "site.md").read_text(encoding="utf-8")
    assert "no `--verify`" in docs
    assert "--verify" not in evals("build-site", "--help").output


# -- non-finite numbers in the site's JSON, hidden characters on its pages ---


def strict_json(text: str):
    """``text`` parsed as standard JSON: NaN, Infinity and -Infinity are refused, as strict parsers do."""

    def refuse(constant: str):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def non_finite_site(tmp_path) -> Path:
    """A site whose configuration holds NaN and -Infinity (an option ``x=nan`` stored by an older evals)."""
    import duckdb

    store = stored_store(tmp_path / "store")
    with duckdb.connect(str(store)) as connection:
        connection.execute("""UPDATE runs SET strategy_config = '{"name": "no_memory", "x": NaN, "y": -Infinity}'""")
    site = tmp_path / "site"
    result = evals("build-site", "--store", store, "--out", site)
    assert result.exit_code == 0, result.output
    return site


def test_non_finite_option_values_give_standard_json(non_finite_site):
    """Every JSON file of the site parses with a strict parser, and the non-finite values are written null."""
    import gzip

    documents = [p for p in non_finite_site.rglob("*") if p.name.endswith((".json", ".json.gz"))]
    # leaderboard.json, the manifest, the run's JSON, the corpus's label suspects, the across-benchmarks tables
    assert len(documents) == 5
    for path in documents:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        strict_json(data.decode("utf-8"))
    (row,) = strict_json((non_finite_site / "leaderboard.json").read_text(encoding="utf-8"))
    assert row["strategy_config"] == {"name": "no_memory", "x": None, "y": None}


def test_non_finite_option_values_in_the_csv_settings_cell_are_standard_json(non_finite_site):
    """leaderboard.csv's settings cell holds the same standard JSON as leaderboard.json."""
    (row,) = csv_rows((non_finite_site / "leaderboard.csv").read_text(encoding="utf-8"))
    assert strict_json(row["strategy_config"]) == {"name": "no_memory", "x": None, "y": None}


@pytest.mark.parametrize("command", [("leaderboard", "--format", "json"), ("runs", "--format", "json")])
def test_non_finite_option_values_give_standard_json_on_the_command_line(tmp_path, command):
    """`evals leaderboard/runs --format json` print standard JSON too: a stored NaN or -Infinity is null."""
    import duckdb

    store = stored_store(tmp_path / "store")
    with duckdb.connect(str(store)) as connection:
        connection.execute("""UPDATE runs SET strategy_config = '{"name": "no_memory", "x": NaN, "y": -Infinity}'""")
    result = evals(*command, "--store", store)
    assert result.exit_code == 0, result.output
    (row,) = strict_json(result.output)
    assert row["strategy_config"] == {"name": "no_memory", "x": None, "y": None}


HIDDEN = "\u202e\u2066\u200b\ufeff\U000e0041\x1b"  # an override, an isolate, a zero-width space, a BOM, a tag, ESC


@pytest.fixture
def hidden_site(tmp_path) -> tuple[Path, Path]:
    """A site whose conversation id, description, turns, question, fact and keyword hold hidden characters: (store, site)."""
    cid = "c\u202e1"
    corpus = corpus_of(
        tmp_path / "corpus",
        conversation(
            cid,
            description=f"gpj{HIDDEN}.exe",
            turns=[
                {"role": "user", "content": f"I use vim{HIDDEN} daily"},
                {
                    "role": "user",
                    "content": "q",
                    "test_at": {
                        "question": f"which{HIDDEN} editor?",
                        "expected_fact": f"vim{HIDDEN}",
                        "expected_keywords": ["vim"],
                    },
                },
            ],
        ),
    )
    store = tmp_path / "results.duckdb"
    assert evals("run", "--runner", "full_history", "--corpus", corpus, "--store", store).exit_code == 0
    assert evals("build-site", "--store", store, "--out", tmp_path / "site").exit_code == 0
    return store, tmp_path / "site"


def test_hidden_characters_are_shown_escaped_on_every_page(hidden_site):
    """No page holds a bidirectional control or invisible character raw: each is shown as its escape
    (in text, titles and attributes alike), where the question, the id and the turns are shown."""
    import re

    _, site = hidden_site
    pages = {p.relative_to(site).as_posix(): p.read_text(encoding="utf-8") for p in site.rglob("*.html")}
    raw = re.compile("[\u202a-\u202e\u2066-\u2069\u200b\ufeff\U000e0000-\U000e007f\x00-\x08\x0b\x0c\x0e-\x1f]")
    assert {path: raw.findall(text) for path, text in pages.items() if raw.search(text)} == {}
    escaped = "\\u202e\\u2066\\u200b\\ufeff\\U000e0041\\x1b"
    drilldown = next(text for path, text in pages.items() if path.startswith("runs/") and path.count("/") == 2)
    assert f"which{escaped} editor?" in drilldown
    run_page = next(text for path, text in pages.items() if path.startswith("runs/") and path.count("/") == 1)
    assert ">c\\u202e1</a>" in run_page


def test_hidden_characters_stay_in_the_stored_text(hidden_site):
    """Only the pages escape: the run's JSON download holds the question exactly as stored."""
    import gzip

    _, site = hidden_site
    (download,) = site.glob("runs/*.json.gz")
    document = strict_json(gzip.decompress(download.read_bytes()).decode("utf-8"))
    assert document["conversations"][0]["test_points"][0]["question"] == f"which{HIDDEN} editor?"


# -- links from data ------------------------------------------------------------------------------

HOSTILE_SOURCES = ["javascript:alert(1)", "data:text/html,<script>alert(1)</script>", "java\tscript:alert(1)",
                   " JavaScript:alert(1)", "\x01javascript:alert(1)", "vbscript:x", "https:"]


def test_only_http_links_are_rendered():
    """A claim's source that is no http(s) address, however disguised, is shown as text, never as a link;
    an https source is a link."""
    from html.parser import HTMLParser

    from evals.site._leaderboard import ClaimRow
    from evals.site._render import make_environment

    def row(href: str) -> ClaimRow:
        return ClaimRow(system="S", version="1", figure="R@10", measure="recall_frac@10 (turn)", population="all",
                        judge="", measured_by="self", value=0.5, source=f"source {href!r}", source_href=href, note="",
                        retrieval=True)

    rows = [row(href) for href in [*HOSTILE_SOURCES, "https://example.org/paper"]]
    html = make_environment().from_string('{% import "_claims.html" as c %}{{ c.table(rows, "") }}').render(rows=rows)

    class Links(HTMLParser):
        hrefs: list[str] = []

        def handle_starttag(self, tag, attrs):
            if tag == "a":
                self.hrefs.append(dict(attrs).get("href"))

    links = Links()
    links.feed(html)
    assert links.hrefs == ["https://example.org/paper"]
    assert html.count("<tr class=\"reference\">") == len(rows)

