"""Deterministic synthetic corpus for benchmarking the harness.

Writes N conversations of T turns each, schema "1", one file per
conversation, named so that file-name order is id order. Turns alternate
user/assistant and are filler built from word lists; in each conversation P
facts are planted, each with a made-up code word (``zorvex-417``) as its
keyword, and each is asked about at a later user turn that carries
``test_at``. Fact and question positions are drawn at random, so the distance
between a fact and its question ranges from a couple of turns to most of the
conversation.

The same arguments always give byte-identical files: every conversation has
its own ``random.Random`` seeded from ``(seed, index)``, so conversation 7 is
the same whether 10 or 1,000 are generated.

    python bench/gen_corpus.py OUT_DIR --conversations 200 --turns 500 --test-points 5 --seed 0
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["GENERATOR_VERSION", "GeneratedCorpus", "conversation", "generate"]

# Bump when the output for given arguments changes, so caches keyed on it expire.
GENERATOR_VERSION = "1"

ID_PREFIX = "synthetic_"

# -- word lists -----------------------------------------------------------------------------

_SUBJECTS = [
    "the team", "our manager", "the new intern", "my neighbour", "the vendor", "the client",
    "the support desk", "my sister", "the landlord", "the designer", "our accountant",
    "the night shift", "the release crew", "the doctor", "my old roommate", "the committee",
    "the coach", "the library", "the contractor", "the finance group",
]
_VERBS = [
    "moved", "reviewed", "postponed", "cancelled", "approved", "rewrote", "discussed",
    "shipped", "fixed", "questioned", "booked", "painted", "measured", "ordered",
    "forgot", "cleaned", "reorganised", "priced", "tested", "mentioned",
]
_ADJECTIVES = [
    "quarterly", "blue", "noisy", "cheap", "overdue", "tiny", "shared", "second",
    "unfinished", "heavy", "weekly", "spare", "broken", "seasonal", "annual", "quiet",
]
_OBJECTS = [
    "report", "kitchen", "roadmap", "invoice", "garden shed", "budget", "meeting",
    "bicycle", "dashboard", "newsletter", "spreadsheet", "workshop", "parking permit",
    "backup plan", "contract", "menu", "playlist", "travel itinerary", "test suite", "bookshelf",
]
_PREPOSITIONS = ["before", "after", "during", "without", "around", "despite", "until"]
_TIMES = [
    "lunch", "the holidays", "the storm", "last Tuesday", "the audit", "the weekend",
    "the conference", "midnight", "the move", "the launch", "spring", "the outage",
]
_ADVERBS = ["quickly", "again", "carefully", "reluctantly", "finally", "twice", "quietly", "honestly"]

_USER_OPENERS = ["", "", "", "So,", "Also,", "Anyway,", "Okay,", "Hmm,", "By the way,", "Quick update:"]
_ASSISTANT_OPENERS = [
    "", "", "Got it.", "Understood.", "That makes sense.", "Sure.", "Noted.",
    "Thanks for the context.", "Interesting.", "Okay.",
]

_FACT_ATTRIBUTES = [
    "access code", "booking reference", "licence key", "project codename", "locker combination",
    "tracking number", "wifi password", "ticket number", "gate code", "account alias",
    "badge number", "voucher code",
]
_FACT_ENTITIES = [
    "the Lisbon office", "the Harbor project", "my gym", "the storage unit", "the cabin trip",
    "the Orion migration", "the staging server", "my bank", "the warehouse", "the Kestrel launch",
    "the dentist", "the co-working space",
]
_FACT_TEMPLATES = [
    "Please remember that the {attr} for {entity} is {kw}.",
    "For the record, the {attr} for {entity} is {kw}, so don't lose it.",
    "Note this down: {entity} uses {kw} as its {attr}.",
    "I just got it confirmed, the {attr} for {entity} is {kw}.",
]
_QUESTION_TEMPLATES = [
    "What was the {attr} for {entity} again?",
    "Can you remind me of the {attr} for {entity}?",
    "I need the {attr} for {entity}, what was it?",
    "Do you remember the {attr} we have for {entity}?",
]
_SYLLABLES = [
    "zor", "vex", "qua", "lim", "tra", "nok", "bel", "fyr", "gan", "dru",
    "sel", "mip", "kav", "ost", "rue", "jin", "pol", "wex", "hal", "cyn",
]

MIN_WORDS, MAX_WORDS = 8, 40


# -- building blocks ------------------------------------------------------------------------


def _sentence(rng: random.Random, *, capitalize: bool = True) -> list[str]:
    """One filler sentence of about 5–12 words, as a list of words."""
    words = rng.choice(_SUBJECTS).split() + [rng.choice(_VERBS), "the"]
    if rng.random() < 0.6:
        words.append(rng.choice(_ADJECTIVES))
    words += rng.choice(_OBJECTS).split()
    if rng.random() < 0.5:
        words += [rng.choice(_PREPOSITIONS)] + rng.choice(_TIMES).split()
    if rng.random() < 0.3:
        words.append(rng.choice(_ADVERBS))
    if capitalize:
        words[0] = words[0].capitalize()
    words[-1] += "."
    return words


def _filler(rng: random.Random, role: str, target: int) -> str:
    """Filler of about ``target`` words: whole sentences, at least one (which may run over)."""
    opener = rng.choice(_USER_OPENERS if role == "user" else _ASSISTANT_OPENERS)
    words = opener.split()
    sentences = 0
    while True:
        sentence = _sentence(rng, capitalize=not (words and words[-1].endswith(",")))
        if sentences and len(words) + len(sentence) > target:
            break
        sentences += 1
        words += sentence
        if len(words) >= target:
            break
    return " ".join(words)


def _keyword(rng: random.Random, taken: list[str]) -> str:
    """A made-up code word such as ``zorvex-417``, not a substring of (nor containing) one in ``taken``."""
    while True:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))
        kw = f"{word}-{rng.randint(100, 999)}"
        if not any(kw in t or t in kw for t in taken):
            return kw


def _positions(rng: random.Random, turns: int, test_points: int) -> list[tuple[int, int]]:
    """(fact turn, question turn) pairs, all on distinct user turns, each fact before its question.

    The 2P chosen user turns are walked in order; at each, either a new fact is
    opened or a random pending fact is asked about (a random bracket sequence),
    which leans facts early and gives both short and long distances.
    """
    user_turns = list(range(0, turns, 2))
    if len(user_turns) > 2 * test_points:
        user_turns = user_turns[1:]  # keep the greeting turn free of facts
    chosen = sorted(rng.sample(user_turns, 2 * test_points))
    pairs: list[tuple[int, int]] = []
    pending: list[int] = []
    opened = 0
    for index in chosen:
        must_open = not pending
        must_close = opened == test_points
        if must_open or (not must_close and rng.random() < 0.6):
            pending.append(index)
            opened += 1
        else:
            fact = pending.pop(rng.randrange(len(pending)))
            pairs.append((fact, index))
    return sorted(pairs)


def _check(turns: int, test_points: int) -> None:
    if turns < 1 or test_points < 0:
        raise ValueError("need turns >= 1 and test_points >= 0")
    if test_points * 2 > (turns + 1) // 2:
        raise ValueError(
            f"{test_points} test points need {2 * test_points} user turns ({4 * test_points - 1} turns), got {turns} turns"
        )
    if test_points > len(_FACT_ATTRIBUTES) * len(_FACT_ENTITIES):
        raise ValueError(f"at most {len(_FACT_ATTRIBUTES) * len(_FACT_ENTITIES)} test points per conversation")


def conversation(index: int, *, turns: int, test_points: int, seed: int, width: int) -> dict:
    """Conversation number ``index`` as a schema-"1" document."""
    _check(turns, test_points)
    rng = random.Random(f"evals-bench:{seed}:{index}")
    roles = ["user" if i % 2 == 0 else "assistant" for i in range(turns)]
    items: list[dict] = [
        {"role": role, "content": _filler(rng, role, rng.randint(MIN_WORDS, MAX_WORDS))} for role in roles
    ]

    subjects = rng.sample([(a, e) for a in _FACT_ATTRIBUTES for e in _FACT_ENTITIES], test_points)
    keywords: list[str] = []
    for (fact_at, ask_at), (attr, entity) in zip(_positions(rng, turns, test_points), subjects, strict=True):
        kw = _keyword(rng, keywords)
        keywords.append(kw)
        fact = rng.choice(_FACT_TEMPLATES).format(attr=attr, entity=entity, kw=kw)
        before = _filler(rng, "user", rng.randint(4, 16))
        items[fact_at]["content"] = f"{before} {fact}" if rng.random() < 0.7 else f"{fact} {before}"
        question = rng.choice(_QUESTION_TEMPLATES).format(attr=attr, entity=entity)
        items[ask_at] = {
            "role": "user",
            "content": question,
            "test_at": {
                "question": question,
                "expected_fact": f"the {attr} for {entity} is {kw}",
                "expected_keywords": [kw],
            },
        }
    return {
        "schema_version": "1",
        "id": f"{ID_PREFIX}{index:0{width}d}",
        "description": (
            f"Synthetic bench conversation {index}: {turns} turns of filler with {test_points} planted "
            f"code-word facts, each asked about later (seed {seed})."
        ),
        "turns": items,
    }


@dataclass(frozen=True)
class GeneratedCorpus:
    directory: Path
    conversations: int
    turns: int
    test_points: int

    @property
    def total_test_points(self) -> int:
        return self.conversations * self.test_points


def generate(
    out_dir: str | Path, conversations: int = 200, turns: int = 500, test_points: int = 5, seed: int = 0
) -> GeneratedCorpus:
    """Write the corpus into ``out_dir`` (created if needed) and describe it.

    Files from an earlier generation into the same folder that this one does
    not rewrite are removed; any other ``*.json`` there is refused, because the
    harness would read it as part of the corpus.
    """
    if conversations < 1:
        raise ValueError("need conversations >= 1")
    _check(turns, test_points)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    foreign = sorted(p.name for p in out.glob("*.json") if not p.name.startswith(ID_PREFIX))
    if foreign:
        raise ValueError(f"{out} holds other *.json files ({', '.join(foreign[:3])}…); use an empty folder")
    width = max(4, len(str(conversations - 1)))
    written: set[str] = set()
    for index in range(conversations):
        doc = conversation(index, turns=turns, test_points=test_points, seed=seed, width=width)
        name = f"{doc['id']}.json"
        (out / name).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.add(name)
    for stale in out.glob(f"{ID_PREFIX}*.json"):
        if stale.name not in written:
            stale.unlink()
    return GeneratedCorpus(directory=out, conversations=conversations, turns=turns, test_points=test_points)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path, help="folder to write the conversation *.json files into")
    parser.add_argument("--conversations", type=int, default=200, help="number of conversations (default 200)")
    parser.add_argument("--turns", type=int, default=500, help="turns per conversation (default 500)")
    parser.add_argument("--test-points", type=int, default=5, help="planted facts/test points per conversation (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)
    try:
        made = generate(args.out_dir, args.conversations, args.turns, args.test_points, args.seed)
    except ValueError as exc:
        parser.error(str(exc))
    print(
        f"wrote {made.conversations} conversations × {made.turns} turns, "
        f"{made.total_test_points} test points -> {made.directory}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
