"""A deterministic LoCoMo-shaped file, for the site's size budgets and the metrics benchmark.

Writes one JSON list in LoCoMo's format (``locomo10.json``'s keys: ``sample_id``, ``conversation``
with ``speaker_a``, ``speaker_b``, ``session_N`` lists of ``{speaker, dia_id, text}`` and
``session_N_date_time``, and ``qa``: ``{question, answer, evidence: [dia_id], category}``), which
``evals import-corpus locomo`` reads. At the defaults it is the real file's size: 10 conversations of
about 590 turns in 24 sessions, 199 questions each (1,990 in all), one to three evidence turns a
question, categories 1 to 5 (5, adversarial, with an answer the conversation does not hold).

Each question's evidence turns hold a made-up fact (a code word such as ``zorvex-417``) that its
question names, so a lexical retriever finds some and misses others. The same arguments always give
byte-identical output.

    python bench/gen_locomo.py OUT.json [--conversations 10] [--sessions 24] [--turns 25] [--questions 199] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import datetime, timedelta
from pathlib import Path

__all__ = ["generate"]

WORDS = (
    "garden trip music dinner weekend project coffee book movie friend family school office train beach "
    "city market recipe game photo class river mountain concert museum bakery bicycle painting festival "
    "holiday library puppy kitten neighbour cousin teacher doctor hobby yoga running swimming camping"
).split()
SYLLABLES = ("zor", "vex", "kal", "mir", "tup", "dra", "nel", "qui", "sor", "bam", "lit", "fen")


def _code(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(2)) + f"-{rng.randrange(100, 1000)}"


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def generate(
    out: Path, conversations: int = 10, sessions: int = 24, turns: int = 25, questions: int = 199, seed: int = 0
) -> None:
    """Write the file (see the module's docstring)."""
    rng = random.Random(seed)
    samples = []
    for number in range(conversations):
        a, b = f"Speaker{number}a", f"Speaker{number}b"
        conversation: dict[str, object] = {"speaker_a": a, "speaker_b": b}
        ids: list[str] = []
        texts: dict[str, dict[str, str]] = {}
        start = datetime(2023, 1, 1) + timedelta(days=rng.randrange(300))
        for s in range(1, sessions + 1):
            when = start + timedelta(days=7 * s, hours=rng.randrange(9, 21), minutes=rng.randrange(60))
            stamp = when.strftime("%-I:%M %p on %-d %B, %Y")
            conversation[f"session_{s}_date_time"] = stamp.replace("AM", "am").replace("PM", "pm")
            rows = []
            for t in range(1, turns + 1):
                dia = f"D{s}:{t}"
                row = {"speaker": a if t % 2 else b, "dia_id": dia, "text": _sentence(rng, rng.randrange(12, 30))}
                rows.append(row)
                ids.append(dia)
                texts[dia] = row
            conversation[f"session_{s}"] = rows
        qa = []
        for q in range(questions):
            category = 1 + q % 5
            evidence = sorted(rng.sample(ids, rng.choice((1, 1, 2, 3))), key=ids.index)
            code = _code(rng)
            topic = rng.choice(WORDS)
            for dia in evidence:
                texts[dia]["text"] += f" The {topic} code is {code}."
            question = {"question": f"What is the {topic} code {rng.choice(WORDS)}?", "evidence": evidence, "category": category}
            if category == 5:
                question["adversarial_answer"] = code
            else:
                question["answer"] = code
            qa.append(question)
        samples.append({"sample_id": f"conv-{number + 1}", "conversation": conversation, "qa": qa})
    out.write_text(json.dumps(samples, indent=1) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--sessions", type=int, default=24)
    parser.add_argument("--turns", type=int, default=25)
    parser.add_argument("--questions", type=int, default=199)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    generate(args.out, args.conversations, args.sessions, args.turns, args.questions, args.seed)


if __name__ == "__main__":
    main()
