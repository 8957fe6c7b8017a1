"""The errors of the index and its stores (a leaf module: it imports nothing of the package)."""

from __future__ import annotations

from typing import Any

__all__ = [
    "InvalidSettingError",
    "NotAnIndexError",
    "SettingsMismatchError",
    "SimhashIndexError",
    "StoreError",
    "StoreFullError",
]


class SimhashIndexError(Exception):
    """Base class of the index's errors."""


class InvalidSettingError(ValueError):
    """A ``SIMHASH_*`` setting or a spider argument (``-a simhash_reset=...``) has a value that
    cannot be used; the message names it, the value and what is accepted."""


class SettingsMismatchError(SimhashIndexError, ValueError):
    """An existing index was built with other settings than the ones requested.

    ``setting``, ``stored`` and ``requested`` say which and how; the message names the fix.
    """

    def __init__(self, message: str, setting: str = "", stored: Any = None, requested: Any = None) -> None:
        super().__init__(message)
        self.setting = setting
        self.stored = stored
        self.requested = requested


class NotAnIndexError(SimhashIndexError):
    """The location holds something else than an index (foreign files, a corrupt or truncated
    database). Nothing there was modified."""


#: Kinds of :class:`StoreError` and the fix each message names.
STORE_ERROR_FIXES: dict[str, str] = {
    "disk_full": "free space on the disk that holds the index, or point SIMHASH_DIR to another disk",
    "permission": "give the user running the crawl read and write access to the directory and its files",
    "lock_file": (
        "stop every process that uses the index and open it again; never delete lock.mdb while a "
        "process has the index open (LMDB cannot protect an index whose lock file was replaced)"
    ),
    "corrupt": "restore the index from a copy, or delete it (SIMHASH_RESET = True, or `scrapy-simhash DIR reset --yes`) to rebuild it from a new crawl",
    "io": "check the disk and the file system that hold the index",
    "connection": "check that the Redis server is running and reachable (SIMHASH_REDIS_URL, else REDIS_URL)",
    "memory_full": "raise the Redis server's maxmemory, or give the index its own server",
    "lost": (
        "the Redis index vanished while in use (a restart without persistence, FLUSHALL): it is never "
        "re-created behind a running crawl; restart the crawl, and turn on persistence (appendonly yes)"
    ),
    "rolled_back": (
        "the Redis server went back to an older snapshot (a restart that loaded its last RDB snapshot): "
        "what was written after the snapshot is gone, so pages decided since then may be kept or exported "
        "again; stop the crawl, turn on the append-only file (appendonly yes) and start the crawl again"
    ),
    "eviction": (
        "set the Redis server's maxmemory-policy to noeviction (in redis.conf, or CONFIG SET maxmemory-policy "
        "noeviction): an evicting policy deletes fingerprints and records without telling anyone; the index "
        "checks at its next open whether it lost keys"
    ),
    "lost_keys": (
        "keys of the Redis index were evicted (a maxmemory-policy other than noeviction) or deleted (DEL, FLUSHDB, "
        "another program): pages it decided would be kept and exported again, and its recrawl schedule is "
        "incomplete; delete it (SIMHASH_RESET = True) and crawl again with maxmemory-policy noeviction, or "
        "restore it from a copy"
    ),
    "foreign_key": (
        "another program wrote the named key under the index's prefix: give the index a prefix of its own "
        "(SIMHASH_REDIS_PREFIX), or move that key away"
    ),
    "busy": (
        "another crawler process held this page's record longer than the lock allows (it stopped or stalled "
        "mid-decision); the page is decided again at its next fetch"
    ),
}


class StoreError(SimhashIndexError):
    """A store could not read or write (the disk is full, permission denied, an I/O error).

    ``path`` names the store's location, ``kind`` the cause (a key of :data:`STORE_ERROR_FIXES`:
    ``disk_full``, ``permission``, ``lock_file``, ``corrupt``, ``io``; Redis:
    ``connection``, ``memory_full``, ``lost``, ``rolled_back``, ``eviction``, ``lost_keys``,
    ``foreign_key``, ``busy``), ``cause`` the underlying
    error's text. The operation that raised it changed nothing.
    """

    def __init__(self, path: str | None, kind: str, cause: str, action: str = "access") -> None:
        where = "the in-memory index" if path is None else f"the index at {path}"
        fix = STORE_ERROR_FIXES.get(kind, STORE_ERROR_FIXES["io"])
        super().__init__(f"Could not {action} {where} ({kind.replace('_', ' ')}: {cause}); {fix}")
        self.path = path
        self.kind = kind
        self.cause = cause


class StoreFullError(Exception):
    """Internal: the store ran out of room in a group of operations (:meth:`FingerprintStore.begin`);
    it aborted the group and grew, and the index replays the group. Never seen by users."""
