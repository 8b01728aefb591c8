"""The local test server's replies to cognee's cognify prompts (tests/helpers/llm_server.py).

cognee's LLM gets two requests per chunk, each with the chunk as the user message: a knowledge-graph extraction
(its system prompt opens "You are a top-tier algorithm designed for extracting information in structured formats
to build a knowledge graph") and a summary ("Summarize the chunk for retrieval."). The replies are JSON its
response models accept: one node per capitalised word of the chunk (no edges), and the chunk's text as its summary.
"""

from __future__ import annotations

import json
import re
from typing import Any

GRAPH = "You are a top-tier algorithm designed for extracting information in structured formats to build a knowledge graph"
SUMMARY = "Summarize the chunk for retrieval."
_NAME = re.compile(r"\b[A-Z][a-z]+\b")


def kind(first: str) -> str | None:
    """``"graph"`` or ``"summary"`` for a cognee request's first (system) message, else None."""
    if first.startswith(GRAPH):
        return "graph"
    if first.startswith(SUMMARY):
        return "summary"
    return None


def reply(first: str, messages: list[dict[str, Any]]) -> str:
    chunk = messages[-1]["content"]
    if kind(first) == "graph":
        names = sorted(set(_NAME.findall(chunk)))
        nodes = [
            {"id": name.lower(), "name": name, "type": "Entity", "description": f"{name}, named in the chunk"} for name in names
        ]
        return json.dumps({"nodes": nodes, "edges": []})
    return json.dumps({"summary": f"This chunk is about: {chunk}"})
