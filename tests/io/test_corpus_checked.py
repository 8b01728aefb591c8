"""A corpus whose exact bytes passed the strict check before is not checked again: its note
(evals.io.checked) gives its digest, and pydantic validates its files straight from their bytes."""

import json
import shutil
from pathlib import Path

import pytest
from helpers import FIXTURES

from evals.io import checked
from evals.model.corpus import CorpusError, load_corpus

GOLDEN = FIXTURES / "golden"


@pytest.fixture
def notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "notes"
    monkeypatch.setenv(checked.CHECKED_ENV, str(folder))
    return folder


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return Path(shutil.copytree(GOLDEN, tmp_path / "corpus"))


def name_a_key_twice(path: Path) -> None:
    """Edit a conversation file after its note: its first object names "description" twice."""
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"id":', '"description": "x", "id":', 1), encoding="utf-8")


def test_a_checked_corpus_is_noted(notes: Path, corpus: Path):
    """Loading a valid corpus leaves one note holding its digest."""
    loaded = load_corpus(corpus)
    (note,) = notes.iterdir()
    assert note.read_text().strip() == loaded.digest


def test_the_second_load_gives_the_same_corpus(notes: Path, corpus: Path):
    """Loaded again from its note, the corpus has the same conversations and digest as when checked in full."""
    first = load_corpus(corpus)
    again = load_corpus(corpus)
    assert (list(again.conversations), again.digest) == (list(first.conversations), first.digest)


def test_the_second_load_does_not_check_again(notes: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch):
    """With a note for its bytes, the full check (_check) is not run."""
    import evals.model.corpus as module

    load_corpus(corpus)
    monkeypatch.setattr(module, "_check", lambda directory: pytest.fail("checked again"))
    assert len(load_corpus(corpus).conversations) == 3


def test_an_edited_file_is_checked_in_full(notes: Path, corpus: Path):
    """A file changed after the note (here: a key named twice) is checked again and refused."""
    load_corpus(corpus)
    name_a_key_twice(corpus / "01_colour.json")
    with pytest.raises(CorpusError, match="appears twice"):
        load_corpus(corpus)


def test_a_corpus_with_a_problem_is_never_noted(notes: Path, corpus: Path):
    """A corpus that fails the check leaves no note, and fails again the next time."""
    path = corpus / "01_colour.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["id"] = "renamed"
    path.write_text(json.dumps(document), encoding="utf-8")
    for _ in range(2):
        with pytest.raises(CorpusError, match="differs from the file name"):
            load_corpus(corpus)
    assert not notes.exists() or not any(notes.iterdir())


def test_notes_can_be_turned_off(corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """EVALS_CHECKED=off keeps no note (every load checks in full)."""
    monkeypatch.setenv(checked.CHECKED_ENV, "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    load_corpus(corpus)
    assert not (tmp_path / "xdg").exists() and not (tmp_path / "home").exists()


def test_equal_texts_are_shared_on_the_second_load(notes: Path, tmp_path: Path):
    """Loaded from its note, equal turn texts in two conversations are one string object, as when checked."""
    folder = tmp_path / "twins"
    folder.mkdir()
    for name in ("a", "b"):
        turns = [{"role": "user", "content": "".join(["shared ", "text"])}, {"role": "assistant", "content": "ok"}]
        turns[1]["test_at"] = {"question": "q", "expected_fact": "shared"}
        (folder / f"{name}.json").write_text(json.dumps({"id": name, "description": "d", "turns": turns}), encoding="utf-8")
    load_corpus(folder)
    a, b = load_corpus(folder).conversations
    assert a.turns[0].content is b.turns[0].content


def test_by_default_notes_are_kept_outside_home(corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Without $EVALS_CHECKED, notes go to a folder of this user's own in the temporary folder, not $HOME."""
    monkeypatch.delenv(checked.CHECKED_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr("tempfile.tempdir", None)  # read $TMPDIR afresh
    load_corpus(corpus)
    assert not (tmp_path / "home").exists()
    assert len(list((tmp_path / "tmp").glob("mneme-evals*/checked/*"))) == 1


def test_a_note_in_a_folder_others_may_write_is_not_trusted(notes: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch):
    """A notes folder that other users may write to is ignored: the corpus is checked in full."""
    import evals.model.corpus as module

    load_corpus(corpus)
    notes.chmod(0o777)
    monkeypatch.setattr(module, "_remembered", lambda *args: pytest.fail("trusted a note others may write"))
    assert len(load_corpus(corpus).conversations) == 3


# -- a corpus too big to hold: remembered by its files' sha256s, read as walked -------------------------


@pytest.fixture
def big(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every corpus counts as too big to hold (read from its files as walked)."""
    import evals.model.corpus as module

    monkeypatch.setattr(module, "HELD_BYTES", 1)


def test_a_big_corpus_is_remembered_without_a_check(notes: Path, corpus: Path, big, monkeypatch: pytest.MonkeyPatch):
    """Loaded again, a big corpus whose bytes were checked is not checked again, and gives the same corpus."""
    import evals.model.corpus as module

    first = load_corpus(corpus)
    assert not first.conversations.held
    monkeypatch.setattr(module, "_check", lambda directory: pytest.fail("checked again"))
    again = load_corpus(corpus)
    assert (list(again.conversations), again.digest) == (list(first.conversations), first.digest)


def test_a_big_corpus_edited_after_its_note_is_checked_in_full(notes: Path, corpus: Path, big):
    """A file of a big corpus changed after the note is checked again, and refused."""
    load_corpus(corpus)
    name_a_key_twice(corpus / "01_colour.json")
    with pytest.raises(CorpusError, match="appears twice"):
        load_corpus(corpus)


def test_a_remembered_big_corpus_edited_while_loaded_is_refused_when_read(notes: Path, corpus: Path, big):
    """A file changed after a big corpus was loaded from its note is refused when walked, not read as it is now."""
    load_corpus(corpus)
    loaded = load_corpus(corpus)
    path = corpus / "01_colour.json"
    path.write_text(path.read_text(encoding="utf-8").replace("colour", "color"), encoding="utf-8")
    with pytest.raises(CorpusError, match="changed since the corpus was checked"):
        list(loaded.conversations)
