"""The local test server's replies to graphiti-core's prompts (hooked into tests/helpers/llm_server.py).

Graphiti's ``OpenAIGenericClient`` names the answer it wants in each request:
``response_format.json_schema.name`` is its pydantic model (``ExtractedEntities``,
``ExtractedEdges``, …), so that name picks the reply here. The replies are
deterministic and read only the prompt:

* entities of the current message ``role: content``: the speaker (``User`` or
  ``Assistant``) and the message's longest word (its first, on a tie);
* one fact per message, from the speaker to that word: ``"User said: <content>"``
  (as mem0's scripted extraction words it), so a stored fact is a rewritten turn and
  says which turn it came from;
* no entity is a duplicate; an existing fact is a duplicate of the new one when
  their texts are equal, ignoring case (so a sentence said twice is one fact
  citing both turns); no dates; summaries empty.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["SCHEMAS", "handles", "reply"]

_CURRENT = re.compile(r"<CURRENT[ _]MESSAGE>\n(.*?)\n</CURRENT[ _]MESSAGE>", re.DOTALL)
_ENTITIES = re.compile(r"<ENTITIES>\n(.*?)\n</ENTITIES>", re.DOTALL)
_EXISTING = re.compile(r"<EXISTING FACTS>\n(.*?)\n</EXISTING FACTS>", re.DOTALL)
_NEW_FACT = re.compile(r"<NEW FACT>\n(.*?)\n</NEW FACT>", re.DOTALL)
_WORD = re.compile(r"[A-Za-z0-9']+")

SCHEMAS = (
    "ExtractedEntities",
    "ExtractedEdges",
    "EdgeTimestamps",
    "BatchEdgeTimestamps",
    "NodeResolutions",
    "EdgeDuplicate",
    "SummarizedEntities",
    "EntitySummary",
    "Summary",
    "SummaryDescription",
)


def _schema(body: dict[str, Any]) -> str | None:
    found = body.get("response_format")
    if not isinstance(found, dict) or found.get("type") != "json_schema":
        return None
    return (found.get("json_schema") or {}).get("name")


def handles(body: dict[str, Any]) -> bool:
    """Whether ``body`` is one of graphiti-core's requests."""
    return _schema(body) in SCHEMAS


def _message(prompt: str) -> tuple[str, str]:
    found = _CURRENT.search(prompt)
    role, _, content = (found.group(1) if found else "").partition(": ")
    return role.strip().capitalize() or "Someone", content.strip()


def _topic(content: str) -> str:
    words = _WORD.findall(content) or ["nothing"]
    return max(words, key=len)


def _parsed(pattern: re.Pattern[str], prompt: str) -> Any:
    found = pattern.search(prompt)
    if found is None:
        return []
    try:
        return json.loads(found.group(1))
    except ValueError:
        return []


def reply(body: dict[str, Any]) -> str:
    """The JSON text of the reply to graphiti-core's request ``body``."""
    name = _schema(body)
    prompt = "\n".join(m["content"] for m in body["messages"])
    if name == "ExtractedEntities":
        speaker, content = _message(prompt)
        entities = [{"name": speaker, "entity_type_id": 0}, {"name": _topic(content), "entity_type_id": 0}]
        return json.dumps({"extracted_entities": entities})
    if name == "ExtractedEdges":
        speaker, content = _message(prompt)
        names = [e.get("name") for e in _parsed(_ENTITIES, prompt) if isinstance(e, dict)]
        target = next((n for n in names if n != speaker), speaker)
        fact = {"source_entity_name": speaker, "target_entity_name": target, "relation_type": "SAID",
                "fact": f"{speaker} said: {content}", "valid_at": None, "invalid_at": None}
        return json.dumps({"edges": [fact]})
    if name == "NodeResolutions":
        entities = [e for e in _parsed(_ENTITIES, prompt) if isinstance(e, dict)]
        return json.dumps({"entity_resolutions": [
            {"id": e.get("id", i), "name": e.get("name", ""), "duplicate_candidate_id": -1} for i, e in enumerate(entities)
        ]})
    if name == "EdgeDuplicate":
        new = (_NEW_FACT.search(prompt).group(1) if _NEW_FACT.search(prompt) else "").strip().lower()
        existing = [e for e in _parsed(_EXISTING, prompt) if isinstance(e, dict)]
        same = [e["idx"] for e in existing if str(e.get("fact", "")).strip().lower() == new and "idx" in e]
        return json.dumps({"duplicate_facts": same, "contradicted_facts": []})
    if name == "EdgeTimestamps":
        return json.dumps({"valid_at": None, "invalid_at": None})
    if name == "BatchEdgeTimestamps":
        return json.dumps({"timestamps": []})
    if name == "SummarizedEntities":
        return json.dumps({"summaries": []})
    if name == "SummaryDescription":
        return json.dumps({"description": ""})
    return json.dumps({"summary": ""})
