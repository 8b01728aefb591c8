"""Faults in the token counter's child process, made on purpose."""

from __future__ import annotations

import os

import pytest

from evals.model.tokens import TokenCounter


def child_dies_at(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """Make a forked counting child exit (status 3) when it reaches ``text``; the parent counts as before."""
    parent, real_count = os.getpid(), TokenCounter.count

    def count_then_die(self, counted, pieces=None):
        if os.getpid() != parent and counted == text:
            os._exit(3)
        return real_count(self, counted, pieces)

    monkeypatch.setattr(TokenCounter, "count", count_then_die)
