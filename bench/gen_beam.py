"""A deterministic BEAM-shaped tier folder, for BEAM at scale (the importer's tests, and by hand).

Writes what ``evals import-corpus beam DIR`` reads from one of BEAM's tiers (``chats/10M``): numbered
conversation folders ``1/``, ``2/``, … each holding

- ``chat.json`` in the 10M tier's layout: a JSON array of plans, each a one-key object
  ``{"plan-N": [batch, …]}``, a batch ``{batch_number, time_anchor, turns: [[user, assistant], …]}``
  and a message ``{role, id, content, index, time_anchor?}``. Message ids run across the whole
  conversation (0, 1, …), as the questions' ``source_chat_ids`` do in BEAM's 10M tier; the ``plan-*/``
  parts BEAM keeps beside the chat are not written (the importer never reads them);
- ``probing_questions/probing_questions.json``: the ten abilities, ``--questions-per-ability`` each
  (two in BEAM), with ``source_chat_ids`` in each of BEAM's shapes (a list, a dict of lists, lists
  nested in a list; none for abstention), the expected fact under the field BEAM uses for that ability
  (``answer``, ``ideal_answer``, ``ideal_response``, ``ideal_summary``, ``expected_compliance``) and a
  ``rubric`` list.

The messages are filler drawn from a word list with a seeded ``random.Random``, about
``--tokens-per-message`` cl100k tokens each (user messages shorter, assistant ones longer, as in BEAM);
the facts the questions ask about are made-up code words (``zorvexmi-417``) planted in messages spread
over the whole conversation. ``--turns`` is messages per conversation (each a turn once imported);
a plan holds about 2,100 of them, so the "1M shape" (2,100 messages, ~1M tokens) is one plan and the
"10M shape" (21,000, ~10M tokens) ten, like BEAM's 10M tier.

The chat is written as it is made, one batch at a time: memory holds a batch, never a conversation.
The same arguments always give byte-identical folders.

    python bench/gen_beam.py OUT_DIR --conversations 10 --turns 21000 --tokens-per-message 475 --seed 0
    evals import-corpus beam OUT_DIR --out CORPUS
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import date, timedelta
from pathlib import Path

__all__ = ["ABILITIES", "GENERATOR_VERSION", "MESSAGES_PER_PLAN", "SHAPES", "generate"]

GENERATOR_VERSION = "1"
MESSAGES_PER_PLAN = 2_100
MESSAGES_PER_BATCH = 60  # 30 (user, assistant) turns a batch
# (conversations, messages per conversation, tokens per message): BEAM's 1M and 10M tiers, 10 conversations each
SHAPES = {"1M": (10, 2_100, 475), "10M": (10, 21_000, 475)}
ABILITIES = (
    "abstention",
    "contradiction_resolution",
    "event_ordering",
    "information_extraction",
    "instruction_following",
    "knowledge_update",
    "multi_session_reasoning",
    "preference_following",
    "summarization",
    "temporal_reasoning",
)
# cl100k tokens per filler word, measured over these words joined by spaces (the capital and the full stop
# add about one a message): 1.0, every word below is one token with its leading space.
_WORDS = [
    "the", "a", "we", "you", "it", "was", "is", "will", "to", "of", "and", "in", "on", "for", "with", "about",
    "project", "meeting", "trip", "garden", "recipe", "budget", "train", "weekend", "doctor", "office", "kitchen",
    "morning", "evening", "plan", "list", "email", "report", "music", "book", "film", "walk", "coffee", "market",
    "friend", "sister", "team", "client", "review", "draft", "schedule", "ticket", "package", "window", "server",
    "maybe", "probably", "really", "quite", "later", "soon", "again", "still", "already", "perhaps", "database",
    "think", "remember", "need", "want", "like", "found", "moved", "bought", "called", "asked", "fixed", "planned",
    "code", "test", "deploy", "query", "cache", "model", "data", "user", "page", "error", "build", "version",
]  # fmt: skip
_SYLLABLES = ["ka", "lo", "mi", "ren", "tu", "vex", "zor", "bel", "fyr", "nok", "sel", "pra", "dun", "qui", "ost", "wen"]
_THINGS = ["gate code", "locker number", "wifi password", "voucher code", "account alias", "parking spot", "door pin"]
_PLACES = ["the studio", "my gym", "the storage unit", "the Harbor project", "my bank", "the co-working space", "the cabin"]


def _code(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(3)) + f"-{rng.randint(100, 999)}"


def _filler(rng: random.Random, words: int) -> str:
    return " ".join(rng.choices(_WORDS, k=max(1, words))).capitalize() + "."


def _anchor(day: date) -> str:
    """A date as BEAM writes a time anchor: ``March-15-2024``."""
    return f"{day.strftime('%B')}-{day.day}-{day.year}"


class _Planner:
    """The questions of one conversation and the sentences planted for them, by message id."""

    def __init__(self, rng: random.Random, messages: int, per_ability: int) -> None:
        self.rng = rng
        self.messages = messages
        self.planted: dict[int, list[str]] = {}
        self.questions: dict[str, list[dict]] = {ability: [] for ability in ABILITIES}
        for ability in ABILITIES:
            for _ in range(per_ability):
                self.questions[ability].append(getattr(self, f"_{ability}")())

    def _ids(self, count: int) -> list[int]:
        """``count`` user-message ids (even), spread over the conversation, in increasing order."""
        users = max(1, self.messages // 2)
        return sorted(2 * i for i in self.rng.sample(range(users), min(count, users)))

    def _plant(self, at: int, sentence: str) -> int:
        self.planted.setdefault(at, []).append(sentence)
        return at

    def _fact(self) -> tuple[str, str, str]:
        return self.rng.choice(_THINGS), self.rng.choice(_PLACES), _code(self.rng)

    def _rubric(self, *points: str) -> list[str]:
        return [f"LLM response should state: {p}" for p in points]

    def _information_extraction(self) -> dict:
        thing, place, code = self._fact()
        (at,) = self._ids(1)
        self._plant(at, f"By the way, the {thing} for {place} is {code}.")
        return {"question": f"What is the {thing} for {place}?", "answer": code, "difficulty": "easy",
                "rubric": self._rubric(code), "source_chat_ids": [at]}  # fmt: skip

    def _knowledge_update(self) -> dict:
        thing, place, old = self._fact()
        new = _code(self.rng)
        first, second = self._ids(2)
        self._plant(first, f"The {thing} for {place} is {old}.")
        self._plant(second, f"Update: the {thing} for {place} changed, it is now {new}.")
        return {"question": f"What is the current {thing} for {place}?", "answer": new, "difficulty": "medium",
                "rubric": self._rubric(new), "source_chat_ids": {"original_info": [first], "updated_info": [second]}}  # fmt: skip

    def _contradiction_resolution(self) -> dict:
        _, place, code = self._fact()
        first, second = self._ids(2)
        self._plant(first, f"I have never worked with {code} at {place}.")
        self._plant(second, f"I spent the whole week setting up {code} at {place}.")
        return {"question": f"Have I worked with {code} at {place}?", "difficulty": "hard",
                "ideal_answer": f"Contradictory information: you said you never worked with {code}, and that you set it up",
                "rubric": self._rubric("the contradiction", code),
                "source_chat_ids": {"first_statement": [first], "second_statement": [second]}}  # fmt: skip

    def _event_ordering(self) -> dict:
        codes = [_code(self.rng) for _ in range(3)]
        ids = self._ids(4)
        for n, code in enumerate(codes):
            self._plant(ids[n], f"Milestone {code} is done.")
        self._plant(ids[3], f"Next I will plan the milestone after {codes[-1]}.")
        return {"question": "In what order did I finish my milestones?", "answer": ", ".join(codes), "difficulty": "medium",
                "rubric": self._rubric(*codes), "source_chat_ids": [[ids[0], ids[1]], [ids[2]], ids[3]]}  # fmt: skip

    def _multi_session_reasoning(self) -> dict:
        place = self.rng.choice(_PLACES)
        codes = [_code(self.rng) for _ in range(3)]
        ids = self._ids(3)
        for at, code in zip(ids, codes, strict=True):
            self._plant(at, f"I booked {code} for {place}.")
        return {"question": f"How many bookings did I make for {place}, and which?", "difficulty": "hard",
                "answer": f"three: {', '.join(codes)}", "rubric": self._rubric("three", *codes),
                "source_chat_ids": ids}  # fmt: skip

    def _temporal_reasoning(self) -> dict:
        start, end = _code(self.rng), _code(self.rng)
        weeks = self.rng.randint(2, 12)
        first, second = self._ids(2)
        self._plant(first, f"I started {start} today.")
        self._plant(second, f"I finished {end}, {weeks} weeks after starting {start}.")
        return {"question": f"How long after starting {start} did I finish {end}?", "answer": f"{weeks} weeks",
                "difficulty": "medium", "rubric": self._rubric(f"{weeks} weeks"),
                "source_chat_ids": {"first_event": [first], "second_event": [second]}}  # fmt: skip

    def _summarization(self) -> dict:
        codes = [_code(self.rng) for _ in range(4)]
        ids = self._ids(4)
        for at, code in zip(ids, codes, strict=True):
            self._plant(at, f"Progress note: {code} is on track.")
        return {"question": "Summarise the progress notes I gave you.", "ideal_summary": "; ".join(codes),
                "rubric": self._rubric(*codes), "source_chat_ids": ids}  # fmt: skip

    def _preference_following(self) -> dict:
        code = _code(self.rng)
        (at,) = self._ids(1)
        self._plant(at, f"I prefer tools like {code} that stay small.")
        return {"question": "Which tool should I use for the next project?", "expected_compliance": f"suggests {code}",
                "rubric": self._rubric(code), "source_chat_ids": [at]}  # fmt: skip

    def _instruction_following(self) -> dict:
        code = _code(self.rng)
        (at,) = self._ids(1)
        self._plant(at, f"Always tag your answers with {code}.")
        return {"question": "Show me the deployment steps.", "expected_compliance": f"tagged with {code}",
                "rubric": self._rubric(code), "source_chat_ids": [at]}  # fmt: skip

    def _abstention(self) -> dict:
        thing, place, _ = self._fact()
        return {"question": f"What is the {thing} for {place} in the old office?",
                "ideal_response": "There is no information about it in the conversation.",
                "rubric": self._rubric("that there is no such information")}  # fmt: skip


def _write_chat(path: Path, rng: random.Random, messages: int, tokens: int, planted: dict[int, list[str]], start: date) -> None:
    """The chat, plan by plan and batch by batch, written as it is made."""
    words = max(1, tokens - 1)  # the capital and the full stop: about one token
    plans = max(1, round(messages / MESSAGES_PER_PLAN))
    per_plan = -(-messages // plans)
    day = start
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        for plan in range(plans):
            first, last = plan * per_plan, min(messages, (plan + 1) * per_plan)
            out.write(("," if plan else "") + f'{{"plan-{plan}": [')
            for batch_number, at in enumerate(range(first, last, MESSAGES_PER_BATCH), start=1):
                day += timedelta(days=rng.randint(1, 3))
                turns, pair = [], []
                for message_id in range(at, min(last, at + MESSAGES_PER_BATCH)):
                    user = message_id % 2 == 0
                    length = round(words * rng.uniform(0.4, 0.8) if user else words * rng.uniform(1.2, 1.6))
                    content = _filler(rng, length)
                    if message_id in planted:
                        content = " ".join(planted[message_id]) + " " + content
                    message = {
                        "role": "user" if user else "assistant",
                        "id": message_id,
                        "content": content,
                        "index": f"{batch_number},{len(turns)}",
                    }
                    if user and rng.random() < 0.02:
                        message["time_anchor"] = _anchor(day)
                    pair.append(message)
                    if len(pair) == 2:
                        turns.append(pair)
                        pair = []
                if pair:
                    turns.append(pair)
                batch = {"batch_number": batch_number, "time_anchor": _anchor(day), "turns": turns}
                out.write(("," if batch_number > 1 else "") + json.dumps(batch, ensure_ascii=False))
            out.write("]}")
        out.write("]")


def generate(
    out_dir: Path,
    *,
    conversations: int = 10,
    turns: int = 21_000,
    tokens_per_message: int = 475,
    questions_per_ability: int = 2,
    seed: int = 0,
) -> Path:
    """Write the tier folder ``out_dir`` (conversations ``1/`` … ``N/``); ``turns`` messages each."""
    if turns < 8:
        raise ValueError("a conversation needs at least 8 messages to plant its facts in")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for number in range(1, conversations + 1):
        folder = out_dir / str(number)
        (folder / "probing_questions").mkdir(parents=True, exist_ok=True)
        planner = _Planner(random.Random(f"questions:{seed}:{number}"), turns, questions_per_ability)
        start = date(2024, 1, 1) + timedelta(days=30 * number)
        _write_chat(
            folder / "chat.json", random.Random(f"chat:{seed}:{number}"), turns, tokens_per_message, planner.planted, start
        )
        questions = json.dumps(planner.questions, indent=2, ensure_ascii=False)
        (folder / "probing_questions" / "probing_questions.json").write_text(questions, encoding="utf-8")
    return out_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--shape", choices=sorted(SHAPES), default=None, help="BEAM's 1M or 10M tier (sets the three sizes)")
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--turns", type=int, default=21_000, help="messages per conversation (default 21,000)")
    parser.add_argument("--tokens-per-message", type=int, default=475)
    parser.add_argument("--questions-per-ability", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    conversations, turns, tokens = SHAPES[args.shape] if args.shape else (args.conversations, args.turns, args.tokens_per_message)
    generate(
        args.out,
        conversations=conversations,
        turns=turns,
        tokens_per_message=tokens,
        questions_per_ability=args.questions_per_ability,
        seed=args.seed,
    )


if __name__ == "__main__":
    main()
