"""LoCoMo-Plus (xjtuleeyf/Locomo-Plus, its ``data/`` folder) -> a schema-"1" corpus.

The input is the folder holding ``locomo_plus.json`` (401 items ``{relation_type, cue_dialogue,
trigger_query, time_gap, …}``) and ``locomo10.json`` (LoCoMo's file, which the repository ships beside it);
``locomo_plus.json`` itself names the same folder. Each item is stitched into a LoCoMo conversation as the
benchmark's ``data/unified_input.py`` does, deterministically: item *i* goes into conversation
``i % 10`` (its ``_process_locomo_plus``), and ``build_conv.build_context`` places it: the conversation's
sessions (``session_1``, ``session_2``, … until one is missing) at their dates, the trigger query a week
after the last session, the cue dialogue ``time_gap`` before the query (``parse_time_gap``: weeks, months
of 30 days, years of 365; a gap it cannot read is 0 days), all sorted by time, a stable sort, so a cue at
a session's very time comes after it. ``A`` and ``B`` become the conversation's ``speaker_a`` and
``speaker_b`` (``map_speaker``). ``build_conv.py``'s own ``__main__`` draws the conversation at random,
unseeded; that choice is not followed.

One corpus conversation per item: the stitched turns (``"Speaker: text"``, with ``" [shares <caption>]"``
as the LoCoMo importer writes them), then the trigger query as the test point on a turn after them with
``record: false``. The cue dialogue's turns are its evidence: that is what the trigger must bring back, and
the two share few words. A LoCoMo turn keeps its session and date; a cue turn's session is
``locomo_plus_cue`` and its date the cue's computed time (``"%Y-%m-%d %H:%M"``, as ``build_context``
reports it); the question's date is the query's. The category is ``Cognitive`` (unified_input.py's name
for the sixth category). There is no reference answer: the expected fact is the cue dialogue.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from evals.benchmarks.kit import Conversation, ImportFormatError, ImportReport, Source, build, conversation_id, write_corpus

__all__ = ["CATEGORY", "CUE_SESSION", "import_locomo_plus", "parse_time_gap"]

CATEGORY = "Cognitive"
CUE_SESSION = "locomo_plus_cue"
PLUS = "locomo_plus.json"
LOCOMO = "locomo10.json"
_NUM_WORD = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
             "ten": 10, "eleven": 11, "twelve": 12}  # fmt: skip
_GAP = re.compile(
    r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a|an)\b\s*(week|weeks|month|months|year|years)\b"
)


def parse_time_gap(time_gap: str) -> int:
    """Days back from the query to the cue, as build_conv.parse_time_gap reads ``time_gap``."""
    found = _GAP.search(time_gap.lower().strip())
    if not found:
        return 0
    number, unit = found.groups()
    count = int(number) if number.isdigit() else 1 if number in ("a", "an") else _NUM_WORD.get(number, 0)
    return count * (7 if unit.startswith("week") else 30 if unit.startswith("month") else 365)


def _ab(text: str, speaker_a: str, speaker_b: str) -> list[tuple[str, str]]:
    """build_conv.parse_ab_dialogue then map_speaker: (speaker, text) of each ``A:`` / ``B:`` line."""
    turns = []
    for line in text.split("\n"):
        line = line.strip()
        if line.startswith("A:"):
            turns.append((speaker_a, line[2:].strip()))
        elif line.startswith("B:"):
            turns.append((speaker_b, line[2:].strip()))
    return turns


def _sessions(source: Source, conversation: dict[str, Any], where: str) -> list[tuple[str, list[Any], str, datetime]]:
    """(key, turns, date as written, parsed time) of session_1, session_2, … until one is missing."""
    found = []
    number = 1
    while f"session_{number}" in conversation:
        key = f"session_{number}"
        date = source.get(conversation, where, f"{key}_date_time", str)
        try:
            when = datetime.strptime(date, "%I:%M %p on %d %B, %Y")
        except ValueError:
            message = f'{date!r} is not a LoCoMo session time ("1:56 pm on 8 May, 2023")'
            raise source.fail(f"{where}.{key}_date_time", message) from None
        found.append((key, source.items(conversation[key], f"{where}.{key}"), date, when))
        number += 1
    if not found:
        raise source.fail(where, "no session_1; expected LoCoMo's conversation object")
    return found


def _conversation(plus: Source, item: Any, position: int, locomo: Source, samples: list[Any]) -> dict[str, Any]:
    path = f"[{position}]"
    cue = plus.get(item, path, "cue_dialogue", str)
    trigger = plus.get(item, path, "trigger_query", str)
    gap = plus.get(item, path, "time_gap", str)
    relation = plus.get(item, path, "relation_type", str, required=False) or "—"
    index = position % len(samples)
    where = f"[{index}].conversation"
    conversation = locomo.get(samples[index], f"[{index}]", "conversation", dict)
    speaker_a = locomo.get(conversation, where, "speaker_a", str)
    speaker_b = locomo.get(conversation, where, "speaker_b", str)
    sessions = _sessions(locomo, conversation, where)
    query_time = sessions[-1][3] + timedelta(days=7)
    try:
        cue_time = query_time - timedelta(days=parse_time_gap(gap))
    except (OverflowError, ValueError):
        too_far = f"{gap[:60]!r} puts the cue dialogue before the year 1; expected a gap such as '2 weeks'"
        raise plus.fail(f"{path}.time_gap", too_far) from None
    cue_turns = _ab(cue, speaker_a, speaker_b)
    query_turns = _ab(trigger, speaker_a, speaker_b)
    if not cue_turns or not query_turns:
        raise plus.fail(f"{path}.{'cue_dialogue' if not cue_turns else 'trigger_query'}", "holds no 'A:' or 'B:' line")

    def role(speaker: str) -> str:
        return "user" if speaker == speaker_a else "assistant"

    events: list[tuple[datetime, list[dict[str, Any]]]] = []
    for key, turns, date, when in sessions:
        block = []
        for t, turn in enumerate(turns):
            here = f"{where}.{key}[{t}]"
            speaker = locomo.get(turn, here, "speaker", str)
            text = locomo.get(turn, here, "text", str)
            caption = locomo.get(turn, here, "blip_caption", str, required=False)
            content = f"{speaker}: {text}" + (f" [shares {caption}]" if caption else "")
            block.append({"role": role(speaker), "content": content, "session": key, "date": date if date.strip() else None})
        events.append((when, block))
    stamp = cue_time.strftime("%Y-%m-%d %H:%M")
    events.append(
        (
            cue_time,
            [{"role": role(s), "content": f"{s}: {t}", "session": CUE_SESSION, "date": stamp, "cue": True} for s, t in cue_turns],
        )
    )
    events.sort(key=lambda event: event[0])  # stable, as build_context's list.sort
    turns: list[dict[str, Any]] = []
    evidence = []
    for _, block in events:
        for turn in block:
            if turn.pop("cue", False):
                evidence.append(len(turns))
            turns.append(turn)
    question = "\n".join(f"{s}: {t}" for s, t in query_turns)
    fact = "\n".join(turns[i]["content"] for i in evidence)
    turns.append(
        {
            "role": role(query_turns[0][0]),
            "content": question,
            "record": False,
            "date": query_time.strftime("%Y-%m-%d %H:%M"),
            "test_at": {
                "question": question,
                "expected_fact": fact,
                "evidence_turns": evidence,
                "category": CATEGORY,
                "evidence_sessions": [CUE_SESSION],
            },
        }
    )
    sample_id = samples[index].get("sample_id") if isinstance(samples[index], dict) else None
    name = str(sample_id) if sample_id is not None else f"locomo-{index}"
    return {
        "id": conversation_id(position, f"plus-{name}"),
        "description": f"LoCoMo-Plus item {position} ({relation}, {gap}): its cue dialogue and trigger query stitched into "
        f"LoCoMo {name} as data/unified_input.py does (cue at {stamp}, query at {query_time:%Y-%m-%d %H:%M}).",
        "turns": turns,
    }


def import_locomo_plus(folder: Path, out: Path) -> ImportReport:
    """Read LoCoMo-Plus's data folder (``locomo_plus.json`` beside ``locomo10.json``) and write its corpus."""
    folder = Path(folder)
    if folder.is_file():
        folder = folder.parent
    for name in (PLUS, LOCOMO):
        if not (folder / name).is_file():
            raise ImportFormatError(f"{folder}: no {name}; LoCoMo-Plus is imported from its data/ folder ({PLUS} and {LOCOMO})")
    report = ImportReport(source=str(folder / PLUS), out=Path(out))
    with Source.open(folder / LOCOMO) as locomo, Source.open(folder / PLUS) as plus:
        samples = locomo.items(locomo.data, "")
        if not samples:
            raise locomo.fail("", "holds no LoCoMo conversation")
        items = plus.items(plus.data, "")

        def conversations() -> Iterator[Conversation]:
            for position, item in enumerate(items):
                data = _conversation(plus, item, position, locomo, samples)
                report.questions += 1
                report.with_evidence += 1
                yield build(plus, f"[{position}]", data)

        report.conversations = write_corpus(conversations(), out, benchmark="locomo_plus")
    return report
