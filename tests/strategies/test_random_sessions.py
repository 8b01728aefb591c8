"""random_sessions: the chance floor of session documents."""

from __future__ import annotations

from helpers import build

TURNS = [("Ana: My cat is Biscuit.", "s1"), ("Ben: The port is 6543.", "s2"), ("Ana: Biscuit is nine.", "s1"),
         ("Cy: Rain today.", "s3"), ("Ben: Tea please.", "s4")]


def _memory(seed: int = 42):
    memory = build("random_sessions", seed=seed)
    memory.reset()
    for turn, (content, session) in enumerate(TURNS):
        memory.add("user", content, turn=turn, session=session)
    return memory


def test_each_record_is_a_whole_session_naming_its_turns():
    """A record holds every turn of one session, one a line, and names each of them."""
    records = _memory().retrieve("anything", 10)
    assert sorted(r.turns for r in records) == [(0, 2), (1,), (3,), (4,)]
    assert next(r for r in records if r.turns == (0, 2)).text == "Ana: My cat is Biscuit.\nAna: Biscuit is nine."


def test_the_draw_is_reproducible_and_its_first_k_are_the_draw_at_k():
    """The same question draws the same sessions, and the draw at k is the first k of the draw at a larger k."""
    first, again = _memory().retrieve("q", 4), _memory().retrieve("q", 2)
    assert [r.turns for r in again] == [r.turns for r in first[:2]]
