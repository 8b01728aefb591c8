"""A deterministic LongMemEval-shaped file, for the memory benchmark and the streaming tests.

Writes one JSON list in LongMemEval's format (``longmemeval_s.json``'s keys:
``question_id``, ``question_type``, ``question``, ``answer``,
``question_date``, ``haystack_session_ids``, ``haystack_dates``,
``haystack_sessions`` with ``has_answer`` on evidence turns, and
``answer_session_ids``), which ``evals import-corpus longmemeval`` reads.

As in the real file, each question's haystack is drawn from a shared pool of
sessions, so the same session texts recur across questions; one session per
question is its own evidence session, holding a made-up fact (a code word
such as ``zorvex-417``) on a ``has_answer`` turn; every ``--abs-every``-th
question is an abstention (``_abs``: asked about something never said).
At the defaults a question's haystack is about 48 sessions x 10 turns and
roughly 115k cl100k tokens (``--shape s``); ``--shape m`` gives ~500 sessions
a question, like ``longmemeval_m``.

The same arguments always give byte-identical output.

    python bench/gen_longmemeval.py OUT.json --questions 500 [--shape s|m] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import datetime, timedelta
from pathlib import Path

from evals.benchmarks.longmemeval import QUESTION_TYPE_NAMES as LONGMEMEVAL_QUESTION_TYPES

__all__ = ["GENERATOR_VERSION", "SHAPES", "generate"]

GENERATOR_VERSION = "1"
# sessions per question, turns per session, words per turn, sessions in the shared pool
SHAPES = {"s": (48, 10, 240, 2_000), "m": (500, 10, 240, 5_000)}
QUESTION_TYPES = LONGMEMEVAL_QUESTION_TYPES
_SYLLABLES = ["ka", "lo", "mi", "ren", "tu", "vex", "zor", "bel", "fyr", "nok", "sel", "pra", "dun", "qui", "ost", "wen"]
_WORDS = [
    "the", "a", "we", "I", "you", "it", "was", "is", "will", "to", "of", "and", "in", "on", "for", "with", "about",
    "project", "meeting", "trip", "garden", "recipe", "budget", "train", "weekend", "doctor", "office", "kitchen",
    "morning", "evening", "plan", "list", "email", "report", "music", "book", "film", "walk", "coffee", "market",
    "friend", "sister", "team", "client", "review", "draft", "schedule", "ticket", "invoice", "package", "window",
    "maybe", "probably", "really", "quite", "later", "soon", "again", "still", "already", "perhaps", "honestly",
    "think", "remember", "need", "want", "like", "found", "moved", "bought", "called", "asked", "fixed", "planned",
]  # fmt: skip
_THINGS = ["gate code", "locker number", "wifi password", "voucher code", "account alias", "parking spot", "door pin"]
_PLACES = ["the studio", "my gym", "the storage unit", "the Harbor project", "my bank", "the co-working space", "the cabin"]


def _code(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(3)) + f"-{rng.randint(100, 999)}"


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."


def _session(rng: random.Random, turns: int, words: int) -> list[dict[str, str]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": _text(rng, words)} for i in range(turns)]


def _pool(seed: int, size: int, turns: int, words: int) -> list[list[dict[str, str]]]:
    rng = random.Random(f"pool:{seed}")
    return [_session(rng, turns, words) for _ in range(size)]


def _question(index: int, seed: int, pool: list, sessions: int, turns: int, words: int, abs_every: int) -> dict:
    rng = random.Random(f"question:{seed}:{index}")
    thing, place, code = rng.choice(_THINGS), rng.choice(_PLACES), _code(rng)
    abstention = abs_every > 0 and index % abs_every == abs_every - 1
    picked = rng.sample(range(len(pool)), sessions - 1)
    haystack = [[dict(turn) for turn in pool[i]] for i in picked]
    ids = [f"pool_{i}" for i in picked]
    evidence = _session(rng, turns, words)
    if not abstention:
        said = f"By the way, the {thing} for {place} is {code}. {_text(rng, words - 12)}"
        evidence[0] = {"role": "user", "content": said, "has_answer": True}
    at = rng.randrange(sessions)
    haystack.insert(at, evidence)
    ids.insert(at, f"answer_{index}")
    start = datetime(2023, 1, 1) + timedelta(days=rng.randrange(200))
    dates = [(start + timedelta(hours=7 * n)).strftime("%Y/%m/%d (%a) %H:%M") for n in range(sessions)]
    return {
        "question_id": f"q{index:05d}" + ("_abs" if abstention else ""),
        "question_type": QUESTION_TYPES[index % len(QUESTION_TYPES)],
        "question": f"What was the {thing} for {place}?",
        "answer": "The information was not mentioned." if abstention else code,
        "question_date": (start + timedelta(hours=7 * sessions)).strftime("%Y/%m/%d (%a) %H:%M"),
        "haystack_session_ids": ids,
        "haystack_dates": dates,
        "haystack_sessions": haystack,
        "answer_session_ids": [] if abstention else [f"answer_{index}"],
    }


def generate(out: Path, questions: int, *, shape: str = "s", seed: int = 0, abs_every: int = 16) -> None:
    """Write the file, one question at a time (a 500-question ``_s`` file is about a quarter of a gigabyte)."""
    sessions, turns, words, pool_size = SHAPES[shape]
    pool = _pool(seed, pool_size, turns, words)
    with Path(out).open("w", encoding="utf-8") as handle:
        handle.write("[\n")
        for index in range(questions):
            if index:
                handle.write(",\n")
            json.dump(_question(index, seed, pool, sessions, turns, words, abs_every), handle, ensure_ascii=False)
        handle.write("\n]\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="s")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--abs-every", type=int, default=16, help="every Nth question is an abstention (_abs); 0: none")
    args = parser.parse_args()
    generate(args.out, args.questions, shape=args.shape, seed=args.seed, abs_every=args.abs_every)
    print(f"wrote {args.out}: {args.questions} questions, shape {args.shape}, {args.out.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
