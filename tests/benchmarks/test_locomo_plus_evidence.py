"""`--protocol locomo_plus` on a LoCoMo corpus: the judge's ``{evidence}`` is the question's evidence turns, as
LoCoMo-Plus's data/unified_input.py fills it (``_evidence_to_text``: each ``Dn:k`` id is session n's k-th turn,
written ``<speaker>：<text>``, a line each)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers import FIXTURES

from evals.benchmarks.formats import import_corpus
from evals.benchmarks.locomo_plus.protocol import LoCoMoPlusProtocol
from evals.model.corpus import load_corpus
from evals.run.evaluate import RunConfig, evaluate
from evals.run.executors._play import collector

LOCOMO = FIXTURES / "importers" / "locomo_small.json"
TEMPLATE = "[{name}] gold=<{{gold}}> pred=<{{pred}}> evidence=<{{evidence}}>"
NAMES = ("multi-hop", "temporal", "common-sense", "single-hop", "adversarial", "Cognitive", "default")
PROTOCOL = LoCoMoPlusProtocol(
    {**{f"judge:{name}": TEMPLATE.format(name=name) for name in NAMES}, "CONV_START_PROMPT": "{} and {}: "}
)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "common-sense", 4: "single-hop", 5: "adversarial"}


def unified_inputs_evidence(conversation: dict, evidence: list[str]) -> str | None:
    """The evidence text by unified_input.py's rule; None where an id names no turn (it writes a placeholder)."""
    lines = []
    for entry in evidence:
        for part in (p.strip() for p in entry.split(";")):
            session, turn = re.fullmatch(r"D(\d+):(\d+)", part).groups()
            turns = conversation.get(f"session_{int(session)}", [])
            if not 0 <= int(turn) - 1 < len(turns):
                return None
            lines.append(f"{turns[int(turn) - 1]['speaker']}：{turns[int(turn) - 1]['text']}")
    return "\n".join(lines)


def test_judge_prompts_carry_the_evidence_unified_input_gives(tmp_path: Path):
    """Every judge prompt of a LoCoMo-shaped corpus whose evidence ids all name a turn equals the one whose
    ``{evidence}`` unified_input.py's rule fills, category template and gold included."""
    import_corpus("locomo", LOCOMO, tmp_path / "corpus")
    corpus = load_corpus(tmp_path / "corpus")
    run = evaluate(RunConfig(strategy="oracle", corpus=tmp_path / "corpus", k=3, cutoffs=(3,))).run
    asked: dict = {}
    collect = collector(asked, k=3, records=True)
    for conversation, result in zip(corpus.conversations, run.conversations, strict=True):
        for point in result.test_points:
            collect(conversation.id, point, None, conversation)
    source = json.loads(LOCOMO.read_text())
    expected, built = [], []
    for sample, conversation in zip(source, corpus.conversations, strict=True):
        for qa, point in zip(sample["qa"], asked[conversation.id], strict=True):
            evidence = unified_inputs_evidence(sample["conversation"], qa["evidence"])
            if evidence is None:
                continue
            name = CATEGORIES[qa["category"]]
            gold = "" if name == "adversarial" else str(qa["answer"])
            expected.append("A and B: " + TEMPLATE.format(name=name).format(gold=gold, pred="an answer", evidence=evidence))
            (message,) = PROTOCOL.judge_request(point, "an answer").messages
            built.append(message["content"])
    assert built == expected and len(built) == 6
