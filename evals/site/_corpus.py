"""Each corpus's texts, read from the store once per build into a file that every process reads a piece of.

A build reads each corpus's texts from the store once, a slice of turns at a
time (the store keeps a row per turn), for a big store in a process of its own
that ends when it is done (:func:`prepare`), and writes them to an Arrow IPC
file, a few conversations per record batch; the processes that render read
just the batches they need (:class:`TextsFile`), and read no texts from the store.
The same pass computes the corpus's layout (:mod:`evals.site._layout`) from
per-turn keys held as compact arrays, so a build holds neither the texts nor
a Python object per turn.
"""

from __future__ import annotations

import hashlib
import multiprocessing
from array import array
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from evals.io.interrupts import shielded_children
from evals.site._layout import CorpusLayout, corpus_layout
from evals.store import Store

__all__ = ["TextsFile", "prepare", "prepare_here"]

BATCH_CONVERSATIONS = 4  # conversations per record batch of a texts file: the unit a reader reads
# Turns read from the store per query (a store keeps a row per turn, so a query reads those turns alone).
# With 4 conversations a batch, reading a 100-question LongMemEval_m corpus peaked at 337 MiB (20,000 turns
# and 8 conversations: 522).
READ_TURNS = 10_000

_SCHEMA = pa.schema(
    [
        ("conversation_id", pa.string()),
        ("description", pa.string()),
        ("roles", pa.list_(pa.string())),
        ("contents", pa.list_(pa.string())),
    ]
)


@dataclass(frozen=True)
class TextsFile:
    """One corpus's conversations in an Arrow IPC file, and which record batch holds each."""

    path: Path
    batches: dict[str, int]  # conversation id -> record batch

    def read(self, conversation_ids: Sequence[str]) -> Iterator[dict[str, Any]]:
        """The rows (``conversation_id``, ``description``, ``roles``, ``contents``) of these conversations, in file order."""
        wanted = set(conversation_ids)
        with pa.OSFile(str(self.path)) as source:
            reader = pa.ipc.open_file(source)
            for batch in sorted({self.batches[cid] for cid in wanted}):
                for row in reader.get_batch(batch).to_pylist():
                    if row["conversation_id"] in wanted:
                        yield row

    def contents(self, conversation_ids: Sequence[str]) -> dict[str, list[str]]:
        """Each conversation's turn texts (a ``contents`` source for ``Store.iter_run``)."""
        return {row["conversation_id"]: row["contents"] for row in self.read(conversation_ids)}

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every conversation, in corpus order."""
        with pa.OSFile(str(self.path)) as source:
            reader = pa.ipc.open_file(source)
            for batch in range(reader.num_record_batches):
                yield from reader.get_batch(batch).to_pylist()


def _key(role: str, content: str) -> tuple[int, int]:
    digest = hashlib.blake2b(
        content.encode("utf-8", "surrogatepass"), digest_size=8, person=role.encode("utf-8", "surrogatepass")[:16]
    )
    return int.from_bytes(digest.digest(), "little"), len(content)


def prepare_here(store_path: Path, digests: Sequence[str], directory: Path) -> dict[str, tuple[TextsFile, CorpusLayout]]:
    """Write each corpus's texts file into ``directory``; return it with the corpus's layout."""
    out: dict[str, tuple[TextsFile, CorpusLayout]] = {}
    with Store.open(store_path, read_only=True) as store:
        store.use_threads(1)
        for digest in digests:
            path = directory / f"{digest[:16]}.arrow"
            batches: dict[str, int] = {}
            # Per conversation, each turn's key and length (8 + 8 bytes a turn: a 100-question LongMemEval_m
            # corpus has 500,000 turns, which as tuples of Python ints took 60 MB).
            keys: list[tuple[str, array, array]] = []
            pending: list[tuple[str, str, list[str], list[str]]] = []
            with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, _SCHEMA) as writer:

                def write(rows: list[tuple[str, str, list[str], list[str]]]) -> None:
                    columns = list(zip(*rows, strict=True))
                    writer.write_batch(
                        pa.record_batch(
                            [pa.array(list(c), type=t.type) for c, t in zip(columns, _SCHEMA, strict=True)], schema=_SCHEMA
                        )
                    )
                    rows.clear()

                count = 0
                for cid, description, roles, contents, _ in store.iter_conversations(digest, batch_turns=READ_TURNS):
                    hashes, lengths = array("Q"), array("Q")
                    for role, content in zip(roles, contents, strict=True):
                        key, length = _key(role, content)
                        hashes.append(key)
                        lengths.append(length)
                    keys.append((cid, hashes, lengths))
                    batches[cid] = count // BATCH_CONVERSATIONS
                    pending.append((cid, description, roles, contents))
                    count += 1
                    if len(pending) == BATCH_CONVERSATIONS:
                        write(pending)
                if pending:
                    write(pending)
            out[digest] = (TextsFile(path, batches), corpus_layout(digest, [(cid, zip(h, n, strict=True)) for cid, h, n in keys]))
            del keys
    return out


def prepare(store_path: Path, digests: Sequence[str], directory: Path) -> dict[str, tuple[TextsFile, CorpusLayout]]:
    """:func:`prepare_here` in a process of its own, so the memory reading the texts takes ends with it."""
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        with shielded_children():
            future = pool.submit(prepare_here, store_path, list(digests), directory)
        try:
            return future.result()
        except KeyboardInterrupt:  # Ctrl-C: stop the child now, not when it has read every text
            for process in list(pool._processes.values()):  # the executor offers no public way
                process.terminate()
            raise
