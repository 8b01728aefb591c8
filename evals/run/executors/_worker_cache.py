"""The cache a Ray worker's strategy sees: what the driver sent, what it asks the driver's file for,
and a record of what it computed, which goes back to the driver to be written.

Workers never open the cache file for writing: only the driver does, once the
tasks have finished (DuckDB admits one writing process, and a worker may be
on another machine).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from evals.io.cache import CountedCache

__all__ = ["WorkerCache"]


class WorkerCache(CountedCache):
    """The :class:`evals.io.cache.Cache` interface over a snapshot (namespace -> key -> value), with
    ``reader`` (an :class:`evals.io.cache.CacheReader` Ray actor on the driver's machine, or None) asked for keys
    the snapshot lacks.
    :attr:`written` holds every entry put, first value kept, as the file would."""

    def __init__(self, snapshot: Mapping[str, Mapping[str, bytes]] | None = None, reader: Any = None) -> None:
        super().__init__()
        self._entries: dict[str, dict[str, bytes]] = defaultdict(dict)
        for namespace, entries in (snapshot or {}).items():
            self._entries[namespace].update(entries)
        self._reader = reader
        self.written: dict[str, dict[str, bytes]] = defaultdict(dict)

    def get_many(self, namespace: str, keys: Iterable[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(keys))
        entries = self._entries[namespace]
        found = {key: entries[key] for key in wanted if key in entries}
        unknown = [key for key in wanted if key not in found]
        if unknown and self._reader is not None:
            import ray

            fetched = ray.get(self._reader.get_many.remote(namespace, unknown))
            entries.update(fetched)
            found.update(fetched)
        return self._counted(namespace, wanted, found)

    def put_many(self, namespace: str, items: Mapping[str, bytes]) -> None:
        entries, written = self._entries[namespace], self.written[namespace]
        for key, value in items.items():
            if key not in entries:
                entries[key] = value
                written[key] = value
