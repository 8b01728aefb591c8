"""A test-only strategy that says where it ran: recency, except that each conversation it begins
writes a file named after the conversation, in ``marks``, holding the id of the Ray node playing it
("local" outside Ray), and then waits ``seconds`` (so one node alone cannot play them all first).

tests/run/test_ray_cluster.py plays it on a two-node cluster to see that both nodes took conversations.
Referenced as ``node_marking_strategy:SPEC`` with tests/plugins on the path.
"""

from __future__ import annotations

import time
from pathlib import Path

from evals.strategies import Recency, spec_from_factory


def _node() -> str:
    try:
        import ray
    except ImportError:
        return "local"
    return ray.get_runtime_context().get_node_id() if ray.is_initialized() else "local"


class NodeMarking(Recency):
    name = "node_marking"

    def __init__(self, *, marks: str, seconds: float) -> None:
        super().__init__()
        self._marks, self._seconds = Path(marks), seconds

    def begin_conversation(self, conversation_id: str) -> None:
        (self._marks / conversation_id).write_text(_node(), encoding="utf-8")
        time.sleep(self._seconds)


def make(marks: str = "", seconds: float = 0.5) -> NodeMarking:
    """recency that records, per conversation, the Ray node that played it."""
    return NodeMarking(marks=marks, seconds=seconds)


SPEC = spec_from_factory("node_marking", make)
