"""Redis store: one index shared by every crawler process of a distributed crawl (scrapy-redis).

Every operation is one Lua script call (EVALSHA, packed here and sent on a connection of the
client's pool; the script is loaded again after a ``NOSCRIPT`` reply): one round trip, atomic on
the server, so two machines that add copies of one page at the same instant keep exactly one. The
script carries the table layout, so that it can find the buckets of a key's earlier fingerprint
without a second round trip.

Keys of one index, under one prefix ``P = "{<prefix>}:"`` whose hash tag puts the index's own keys
in one Redis Cluster slot (every script's keys are on one node); on a cluster the records and the
evidence are in keys of their own, spread over the other slots (below):

``P meta``
    The index's JSON metadata. ``P id``: a random token written with it; every call checks it,
    so an index whose keys vanished while it was open (a restart without persistence, a
    ``FLUSHALL``) is reported (``StoreError``, kind ``lost``) instead of silently re-created.
``P t00`` .. ``P tNN``
    One hash per table: bucket -> the bucket's distinct fingerprints packed back to back
    (``value_width`` bytes each). The bucket is the top 16 bits of the table key (all of it for the
    default 64-bit layout with 4 tables), so a table has at most 65536 fields however big it grows.
``P fps``
    Hash: fingerprint -> the keys that have it, joined by ``0xFF`` (never a byte of UTF-8).
``P r0`` .. ``P r1023``
    Hashes: key -> the key's entry, split by ``crc32(key) % 1024`` so that :meth:`scan` reads one
    bounded piece at a time (the store's order: shard, then key bytes). An entry holds all that the
    index keeps of a key but its evidence and due time, so that the key is stored once for it: a
    flags byte (1: a fingerprint, 2: a record, 4: a hot state), the fingerprint (``value_width``
    bytes), the hot state (:func:`~scrapy_simhash.store.hot.hot_of`, what a selection reads: a
    record with a due time has one) and the record. ``P n``, ``P nr``, ``P nh``, ``P ne``: the
    numbers of fingerprints, records, hot states and entries. No due index: a record's due time
    is the first field of its hot state, and :meth:`records_due` reads them all, shard by shard,
    as a selection does (the sorted set it replaced cost ~134 B a URL). The stored metadata names the key layout first (``"redis_layout": 2``): an index
    of an earlier layout is refused, to be rebuilt.
``{<prefix>:r0}`` .. ``{<prefix>:r1023}`` (a cluster only: ``"redis_layout": 3``)
    Hashes, each a hash tag of its own (:func:`_record_shards`): key -> a flags byte (2: a record,
    4: a hot state), the hot state and the record, split as ``P r<shard>`` is; the entries of
    ``P r<shard>`` then hold the fingerprint only. A decision reads the key's record first, then
    the index's snapshot, then the records of the keys found; it writes the index's part (as on a
    server, conditional), then the key's record only where it is still the one read (else it
    decides again): no lock, no undo.
``P aux``
    Hash: name -> blob.
``E <key>``
    A kept page's novelty evidence (a string), where ``E`` is the prefix without its hash tag
    (``"<prefix>:e:"``): keys of their own, spread over a cluster's slots (the evidence is most of
    a kept page's bytes; the index's slot keeps the rest). On a server, a record's evidence is
    written (or deleted) by the script that writes its record; on a cluster (another slot), and
    when the record is deleted, by a call of its own. Either way the evidence carries the fingerprint of the content it was made
    of, so evidence left by a record that was not written (a crash between the two, a group
    undone) is never taken for another content's: it reads as missing (the page that resembles it
    is kept). Read with ``MGET``, only when a page resembles a kept one.
``P w``
    The number of writes. Every call sends the highest count this client was answered and fails
    (``StoreError``, kind ``rolled_back``, for good in this process) where the server has fewer:
    a restart that loaded an older RDB snapshot, whose ``P id`` still matches (or a failover to
    a replica that missed the last writes).
``P L<key>``
    The lock of a key's record while a group decides on it (:meth:`hold`): a random token,
    expiring; taken by the group's first call and released by its write of the record.

Every write checks, before its first write, that each key it may write holds its type or
nothing (a Lua script that fails half-way is not rolled back): a foreign key fails the call
(``foreign_key``) with nothing written. :meth:`open` refuses a server whose ``maxmemory-policy``
evicts keys (``eviction``), and an index whose shards hold fewer entries, keys, records or hot
states than ``P ne``, ``P n``, ``P nr`` and ``P nh`` count, or that lacks a table, its token or its
write count (``lost_keys``: evicted or deleted). Every :data:`EVICTION_CHECK_CALLS`-th call of a process checks in its script that the
server evicted nothing since the process opened the index (``INFO stats``) and still has
``noeviction``; after an eviction every later call fails (``eviction``).

Groups (:meth:`begin`): each call stays atomic on its own and visible to other processes at once;
the store keeps what each call replaced, and :meth:`abort` puts it back in one call (only where
nobody changed it since), so an aborted group leaves nothing of its own. A group that reads,
decides on and writes one key's record holds that key's lock (:meth:`hold`), so that two
processes deciding on one URL at once do it one after the other.

Connection loss: a call is retried a few times (scripts are idempotent), then raises
:class:`~scrapy_simhash.errors.StoreError` (kind ``connection``). From then on calls fail at once,
without touching the network, while a background thread pings the server every 0.25 s; the first
answer ends that. So only the call that finds the server gone waits (up to three times
``socket_connect_timeout`` or ``socket_timeout`` for a host that does not answer at all).
"""

from __future__ import annotations

import contextlib
import heapq
import json
import logging
import os
import threading
import time
import zlib
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import redis
from redis.backoff import NoBackoff
from redis.crc import key_slot
from redis.retry import Retry

from scrapy_simhash.errors import NotAnIndexError, SimhashIndexError, StoreError
from scrapy_simhash.store.base import (
    MAX_DUE,
    FingerprintStore,
    Probe,
    Snapshot,
    TableLayout,
    Writes,
    due_ms,
    sort_hits,
    wide_found,
)
from scrapy_simhash.store.hot import HOT, hot_of
from scrapy_simhash.store.redis_scripts import ADMIN_LUA, BUCKET_BITS, HOT_WIDTH, RECORDS_LUA, SHARDS, main_lua

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from scrapy.crawler import Crawler
    from typing_extensions import Self

__all__ = ["RedisStore"]

logger = logging.getLogger(__name__)

DEFAULT_URL = "redis://127.0.0.1:6379/0"
#: Attempts of a call when the connection fails, and the pause before each retry.
ATTEMPTS = 3
RETRY_PAUSE_S = 0.05
#: After a connection failure, calls fail at once (no network) while a background thread pings
#: the server this often; the first answer ends that.
PROBE_INTERVAL_S = 0.25
#: A group's hold on a key's record (:meth:`RedisStore.hold`) expires after this long, so that a
#: process that dies holding it delays that key's next decision by at most this much; a process
#: waits as long for a held key before it gives up (``StoreError``, kind ``busy``).
LOCK_TTL_S = 10.0
#: The eviction policy an index needs: any other deletes its keys when memory runs out.
NO_EVICTION = "noeviction"
#: Every this many calls of a process, the call's script first checks that the server evicted no
#: key since the index was opened and still has ``noeviction`` (``INFO``: some microseconds, no
#: round trip of its own); every call while the policy is found evicting.
EVICTION_CHECK_CALLS = 8
#: Connection defaults when neither the URL nor REDIS_PARAMS set them (seconds): a crawl waits
#: at most this long for a server that does not answer.
_CLIENT_DEFAULTS = {"socket_timeout": 5.0, "socket_connect_timeout": 2.0}
#: scrapy-redis's REDIS_PARAMS keys that are not redis-py connection arguments.
_NOT_CLIENT_PARAMS = frozenset({"redis_cls", "encoding", "decode_responses"})
_KEY_SEP = b"\xff"
#: Entries read per call by :meth:`RedisStore.records_due` (whole shards: a little more).
_DUE_PAGE = 20_000
#: Record shards whose hot states one pipeline reads on a cluster.
_HOT_SHARDS = 64
#: The key layout of an index this version writes, named first in its stored metadata (an index of
#: an earlier layout is refused: rebuilt, never converted).
LAYOUT = 2
#: The key layout of an index on a Redis Cluster: the records in shards of their own hash tags
#: (spread over the cluster's slots), the index's own keys in its slot.
CLUSTER_LAYOUT = 3


def _with_layout(meta: bytes, layout: int = LAYOUT) -> bytes:
    """The index's JSON metadata as stored: the layout named first (the index's bytes kept as they are)."""
    if not meta.startswith(b"{"):
        return meta
    field = b'"redis_layout": %d' % layout
    return b"{" + field + (b"}" if meta[1:].strip() == b"}" else b", " + meta[1:])


def _without_layout(stored: bytes, layout: int = LAYOUT) -> bytes | None:
    """The index's metadata as it wrote it, from the stored one; ``None``: written in another layout."""
    field = b'"redis_layout": %d' % layout
    if stored == b"{" + field + b"}":
        return b"{}"
    head = b"{" + field + b", "
    return b"{" + stored[len(head) :] if stored.startswith(head) else None


def _record_entry(value: bytes, hot: bytes) -> bytes:
    """A record's entry in a cluster's record shard: flags (2: a record, 4: a hot state), the hot state, the record."""
    return (b"\x06" + hot if hot else b"\x02") + value


def _record_shards(base: str, prefix: str) -> list[bytes]:
    """The names of a cluster's record shards (``{<prefix>:r<shard>}``, hash tags of their own), a
    name whose slot is the index's own made another (``{<prefix>:r<shard>:<n>}``): the index alone in its slot."""
    home = key_slot((prefix + "meta").encode())
    names = []
    for shard in range(SHARDS):
        name, n = f"{{{base}:r{shard}}}".encode(), 0
        while key_slot(name) == home:
            n += 1
            name = f"{{{base}:r{shard}:{n}}}".encode()
        names.append(name)
    return names


def _record_of(entry: bytes | None) -> bytes | None:
    """The record of an entry of a cluster's record shard (``None``: none)."""
    if not entry:
        return None
    return entry[1 + HOT_WIDTH :] if entry[0] & 4 else entry[1:]


def _present(values: list[list[Any]]) -> list[bytes | None]:
    """Script replies of ``{value}`` or ``{}`` (absent) as bytes or ``None``."""
    return [bytes(v[0]) if v else None for v in values]


def _pack(parts: Sequence[Any]) -> bytes:
    """A command as RESP: bytes as they are, ``str`` in UTF-8, numbers in decimal (redis-py's
    encoding)."""
    out = [b"*%d\r\n" % len(parts)]
    for part in parts:
        kind = type(part)
        if kind is not bytes:
            if kind is str:
                part = part.encode()
            elif kind is int:
                part = b"%d" % part
            elif kind is float:
                part = repr(part).encode()
            elif isinstance(part, (bytes, bytearray, memoryview)):
                part = bytes(part)
            else:
                raise redis.DataError(f"Invalid input of type: {kind.__name__!r}")
        out.append(b"$%d\r\n%s\r\n" % (len(part), part))
    return b"".join(out)


def shard_of(key: bytes) -> int:
    """The key's shard of the key and record hashes (the store's scan order: shard, then key)."""
    return zlib.crc32(key) % SHARDS


def _with_shards(keys: Sequence[bytes]) -> list[Any]:
    """Script arguments ``key, shard`` of each key."""
    return [x for key in keys for x in (key, shard_of(key))]


def _server_info(client: Any, key: bytes) -> dict[str, Any]:
    """``INFO`` of the server (of a cluster: of the node that holds ``key``): its
    ``maxmemory_policy`` and ``evicted_keys`` (allowed where ``CONFIG`` is disabled, as on managed
    services)."""
    if hasattr(client, "get_node_from_key"):  # RedisCluster
        return dict(client.info(target_nodes=client.get_node_from_key(key)))
    return dict(client.info())


def _text(value: bytes) -> str:
    return value.decode(errors="replace")


def _public_url(url: str) -> str:
    """``url`` without its password (for messages)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    user = f"{parts.username}:***@" if parts.username else ":***@"
    return urlunsplit((parts.scheme, user + host, parts.path, parts.query, parts.fragment))


def client_params(settings: Any) -> tuple[str, dict[str, Any]]:
    """The Redis URL and client arguments of a crawl: `SIMHASH_REDIS_URL`, else scrapy-redis's
    ``REDIS_URL`` (or ``REDIS_HOST``/``REDIS_PORT``), with scrapy-redis's ``REDIS_PARAMS``."""
    url = settings.get("SIMHASH_REDIS_URL") or settings.get("REDIS_URL")
    if not url:
        host, port = settings.get("REDIS_HOST"), settings.get("REDIS_PORT")
        url = f"redis://{host or '127.0.0.1'}:{port or 6379}/0" if host or port else DEFAULT_URL
    params = settings.getdict("REDIS_PARAMS") if settings.get("REDIS_PARAMS") else {}
    params = {k: v for k, v in params.items() if k not in _NOT_CLIENT_PARAMS}
    return str(url), params


class RedisStore(FingerprintStore):
    """:class:`~scrapy_simhash.store.base.FingerprintStore` on a Redis server or cluster.

    :param url: the server (``redis://[[user]:password@]host:port/db``, ``rediss://`` for TLS,
        ``unix://``); a Redis Cluster is recognised and used through any of its nodes.
    :param prefix: the index's key prefix: its keys are ``{<prefix>}:...``, so that one index
        lives in one cluster slot. A prefix that already has a ``{hash tag}`` is used as it is.
    :param params: more redis-py client arguments (scrapy-redis's ``REDIS_PARAMS``).
    :param client: a redis-py client to use instead (``redis.Redis`` or ``redis.cluster.RedisCluster``,
        with ``decode_responses=False``).
    """

    def __init__(
        self,
        url: str = DEFAULT_URL,
        prefix: str = "simhash",
        *,
        params: Mapping[str, Any] | None = None,
        client: Any = None,
    ) -> None:
        if not prefix or not isinstance(prefix, str):
            raise ValueError(f"prefix ({prefix!r}) is invalid: it must be a non-empty str")
        if not isinstance(url, str) or urlsplit(url).scheme not in ("redis", "rediss", "unix"):
            raise ValueError(
                f"the Redis URL ({url!r}) is invalid: it must look like redis://host:6379/0, rediss://host:6380/0 "
                "or unix:///path/redis.sock (SIMHASH_REDIS_URL, else REDIS_URL)"
            )
        tag = prefix if "{" in prefix and "}" in prefix.split("{", 1)[1] else "{" + prefix + "}"
        self.prefix = tag + ":"
        base = tag.replace("{", "").replace("}", "")
        self.evidence_prefix = (base + ":e:").encode()
        self._record_shards = _record_shards(base, self.prefix)  # a cluster's: hash tags of their own
        self.url = url
        self.path = f"{_public_url(url)} (keys {self.prefix}*)"
        self._params = dict(params or {})
        self._client = client
        self._own_client = client is None
        self._admin: Any = None
        self._main: Any = None
        self._records: Any = None  # a cluster's: the script of the record shards (layout 3)
        self._layout: TableLayout | None = None
        self._token: bytes | None = None
        self._meta_key = (self.prefix + "meta").encode()
        self._down = False  # the server did not answer: calls fail at once until the probe gets an answer
        self._pinger: threading.Thread | None = None
        self._down_lock = threading.Lock()
        self._undo: list[tuple[str, list[bytes]]] | None = None
        self._seen = 0  # the highest write count of the index this process was answered
        self._rolled_back = False
        self._evicted_base: int | None = None  # the server's evicted_keys at open (None: INFO refused)
        self._evicted: str | None = None  # why every call fails: the server evicted keys while open
        self._policy_bad = False  # the last check found an evicting policy: check every call
        self._recount = False  # the server's evicted_keys went back (a restart): counted from there
        self._calls = 0
        self._rcalls = 0  # a cluster's record shard calls
        self._node_evicted: dict[str, int] = {}  # a cluster's: each node's evicted_keys at open
        self._held: list[bytes] = []  # the keys whose records the group holds (hold())
        self._pending: list[bytes] = []  # the keys the group's next call locks
        self._lock_token = os.urandom(16).hex().encode()

    @classmethod
    def from_crawler(cls, crawler: Crawler, path: Path) -> Self:
        """Reads `SIMHASH_REDIS_URL` (else scrapy-redis's ``REDIS_URL``, ``REDIS_PARAMS``) and
        `SIMHASH_REDIS_PREFIX` (``%(spider)s``: the spider's name); the index's name (``pages``,
        ``items``) ends the prefix."""
        from scrapy_simhash import defaults

        url, params = client_params(crawler.settings)
        template = crawler.settings.get("SIMHASH_REDIS_PREFIX") or defaults.SIMHASH_REDIS_PREFIX
        try:
            prefix = str(template) % {"spider": path.parent.name}
        except (KeyError, ValueError, TypeError) as exc:
            raise ValueError(
                f"SIMHASH_REDIS_PREFIX ({template!r}) is invalid: {exc}; it may use %(spider)s and no other field"
            ) from None
        return cls(url, f"{prefix}:{path.name}", params=params)

    # -- connection ------------------------------------------------------------------------

    def _connect(self) -> Any:
        if self._client is not None:
            return self._client
        params: dict[str, Any] = {**_CLIENT_DEFAULTS, **self._params, "decode_responses": False}
        params["retry"] = Retry(NoBackoff(), 0)  # this store retries itself (bounded)
        client: Any = redis.Redis.from_url(self.url, **params)
        try:
            enabled = client.info("cluster").get("cluster_enabled")
        except redis.RedisError as exc:
            client.close()
            raise self._error(exc, "connect to") from exc
        if enabled:
            from redis.cluster import RedisCluster

            client.close()
            client = RedisCluster.from_url(self.url, **params)
        self._client = client
        return client

    def _error(self, exc: BaseException, action: str) -> StoreError:
        text = str(exc)
        if "SIMHASH_EVICTED" in text:
            return self._evicted_error(text.split("SIMHASH_EVICTED", 1)[1].split(), action)
        if ("SIMHASH_LOST" in text or "SIMHASH_ROLLBACK" in text) and (evicted := self._evicted_since()) is not None:
            self._evicted = evicted  # its token or its write count went with the evicted keys
            return StoreError(self.path, "eviction", evicted, action)
        if "SIMHASH_LOST" in text:
            return StoreError(
                self.path, "lost", "its keys were deleted while it was open (a restart without persistence?)", action
            )
        if "SIMHASH_ROLLBACK" in text:
            self._rolled_back = True  # every later call fails too: the index lost writes this process made or saw
            count = text.split("SIMHASH_ROLLBACK", 1)[1].split(" <")[0].strip()
            return StoreError(
                self.path,
                "rolled_back",
                f"it has {count} writes, fewer than this process saw ({self._seen})",
                action,
            )
        if "SIMHASH_EXPIRED" in text:
            key = text.split("SIMHASH_EXPIRED", 1)[1].strip()
            return StoreError(
                self.path, "busy", f"this process held the lock of the record of {key} past its expiry", action
            )
        if "SIMHASH_FOREIGN" in text:
            return StoreError(self.path, "foreign_key", text.split("SIMHASH_FOREIGN", 1)[1].strip(), action)
        if isinstance(exc, (redis.ConnectionError, redis.TimeoutError)):
            kind = "connection"
        elif isinstance(exc, redis.exceptions.OutOfMemoryError) or "OOM command not allowed" in text:
            # redis-py strips the reply's "OOM" prefix into the exception type
            kind = "memory_full"
        elif isinstance(exc, redis.AuthenticationError) or text.startswith("NOPERM"):
            kind = "permission"
        else:
            kind = "io"
        return StoreError(self.path, kind, f"{type(exc).__name__}: {text}", action)

    def _evicted_error(
        self, words: list[str], action: str, node_base: int | None = None, node: str = "the server"
    ) -> StoreError:
        """The error of a script's eviction check (``<evicted_keys> <policy>``; ``node_base``: of a
        cluster's node that holds records, its ``evicted_keys`` at open)."""
        count, policy = int(words[0]), words[1].split("<")[0].strip().rstrip(".")
        base = (self._evicted_base or 0) if node_base is None else node_base
        restarted = count < base and policy == NO_EVICTION  # a restart (or CONFIG RESETSTAT): nothing evicted
        if node_base is None and restarted:
            self._evicted_base, self._recount = count, True
            return StoreError(self.path, "eviction", "the server's count of evicted keys went back", action)
        if count != base:
            self._evicted = (
                f"{node} evicted {count - base:,} keys while the index was open (maxmemory-policy {policy}): "
                "fingerprints and records of the index may be among them"
            )
            return StoreError(self.path, "eviction", self._evicted, action)
        self._policy_bad = True
        return StoreError(
            self.path, "eviction", f"{node}'s maxmemory-policy became {policy} while the index was open", action
        )

    def _evicted_since(self) -> str | None:
        """Why the index's keys may be gone, where the server evicted keys since the index was
        opened (``None``: it did not, or it cannot be told)."""
        if self._evicted_base is None or self._client is None:
            return None
        try:
            info = _server_info(self._client, self._meta_key)
        except redis.RedisError:
            return None
        count = int(info.get("evicted_keys", 0))
        if count <= self._evicted_base:
            return None
        return (
            f"the server evicted {count - self._evicted_base:,} keys while the index was open "
            f"(maxmemory-policy {info.get('maxmemory_policy')}): its own keys among them"
        )

    def _run(self, script: Any, args: Sequence[Any], action: str = "access") -> Any:
        """One script call, retried when the connection fails, errors raised as
        :class:`StoreError`; while the server is known to be down, a call fails at once."""
        if self._down:
            raise StoreError(
                self.path, "connection", "the server stopped answering; waiting for it to come back", action
            )
        for attempt in range(ATTEMPTS):
            try:
                if self._direct(self._client):
                    return self._evalsha(script, args)
                return script(keys=[self._meta_key], args=args)
            except (redis.ConnectionError, redis.TimeoutError) as exc:
                if attempt + 1 < ATTEMPTS:
                    time.sleep(RETRY_PAUSE_S * (attempt + 1))
                    continue
                self._went_down()
                raise self._error(exc, action) from exc
            except redis.RedisError as exc:
                raise self._error(exc, action) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _direct(client: Any) -> bool:
        """Whether the store's script calls go straight to a connection of ``client``'s pool (a
        server's client with a pool; a cluster's calls go through redis-py's ``Script``)."""
        return isinstance(client, redis.Redis) and client.connection is None

    def _evalsha(self, script: Any, args: Sequence[Any]) -> Any:
        """``EVALSHA`` of ``script`` on a connection of the pool, packed here (redis-py's command
        path costs more than the script's own arguments take to write); loaded first on
        ``NOSCRIPT``, as redis-py's ``Script`` does."""
        packed = _pack([b"EVALSHA", script.sha, b"1", self._meta_key, *args])
        try:
            return self._send(packed)
        except redis.exceptions.NoScriptError:
            script.sha = self._client.script_load(script.script)
            return self._send(_pack([b"EVALSHA", script.sha, b"1", self._meta_key, *args]))

    def _send(self, packed: bytes) -> Any:
        """One command already packed, its reply (an error reply raised, as redis-py raises it)."""
        pool = self._client.connection_pool
        conn = pool.get_connection()
        try:
            conn.send_packed_command([packed])
            return conn.read_response()
        except (redis.ConnectionError, redis.TimeoutError):
            conn.disconnect()
            raise
        finally:
            pool.release(conn)

    def _went_down(self) -> None:
        """Fail calls at once from now on, and ping the server from a thread until it answers
        (so that no call waits on a server that does not answer)."""
        client = self._client
        with self._down_lock:
            self._down = True
            if client is None or self._pinger is not None:
                return

            def ping() -> None:
                while self._client is client:
                    time.sleep(PROBE_INTERVAL_S)
                    try:
                        client.ping()
                    except (redis.RedisError, OSError):
                        continue
                    break
                with self._down_lock:
                    self._down = False
                    self._pinger = None

            self._pinger = threading.Thread(target=ping, name="simhash-redis-ping", daemon=True)
            self._pinger.start()

    def _call(self, op: str, *args: Any, action: str = "access", records: Sequence[bytes] = ()) -> Any:
        """One main-script call: checks the index's token (``lost``) and that the index has at
        least the writes this process saw (``rolled_back``), takes the locks of :meth:`hold`'s
        keys not locked yet; returns the op's reply. ``records``: the keys whose records the call
        writes: those the group holds must still be its own (else ``busy``, nothing written), and
        are released with the write, the end of the key's decision (no round trip of their own)."""
        if self._main is None:
            raise SimhashIndexError(f"The index at {self.path} is not open (open() and configure() first)")
        if self._rolled_back:
            raise StoreError(self.path, "rolled_back", "it went back to an older snapshot while it was open", action)
        if self._evicted is not None:
            raise StoreError(self.path, "eviction", self._evicted, action)
        frees = [key for key in dict.fromkeys(records) if key in self._held or key in self._pending]
        deadline, pause = time.monotonic() + LOCK_TTL_S + 1.0, 0.001
        while True:
            self._calls += 1
            base = self._evicted_base
            check = base is not None and (self._policy_bad or self._calls % EVICTION_CHECK_CALLS == 0)
            evicted = b"%d" % base if base is not None and check else b""
            head = b"%d:%s:%s" % (self._seen, evicted, self._token or b"")
            try:
                res = self._run(self._main, [op, head, *self._lock_args(frees), *args], action)
            except StoreError:
                if self._recount:  # the script ran nothing: again, against the new count
                    self._recount = False
                    continue
                self._held += self._pending  # it may have taken them: the group's end releases them
                self._pending = []
                raise
            self._seen = max(self._seen, int(res[0]))
            self._policy_bad = self._policy_bad and not check
            if len(res) == 2:
                break
            if time.monotonic() > deadline:  # another process held a pending key all along
                raise StoreError(self.path, "busy", f"the record of {_text(self._pending[0])} stayed locked", action)
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
        self._held = [key for key in self._held + self._pending if key not in frees]
        self._pending = []
        return res[1]

    def _lock_args(self, frees: Sequence[bytes]) -> list[bytes]:
        """The lock arguments of a call: ``<expiry ms>:<token>:<n>:<m>``, the keys of :meth:`hold`
        not locked yet and the held keys the call releases; or ``''``."""
        if not self._pending and not frees:
            return [b""]
        spec = b"%d:%s:%d:%d" % (round(LOCK_TTL_S * 1000), self._lock_token, len(self._pending), len(frees))
        return [spec, *self._pending, *frees]

    # -- life cycle ------------------------------------------------------------------------

    def open(self) -> bytes | None:
        """The index's metadata (``None``: no index); :class:`StoreError` (``lost_keys``) where the
        index lacks keys that its own counts say it has (evicted, or deleted by another program)."""
        return self._open(audit=True)

    def _open(self, audit: bool, layout: bool = True) -> bytes | None:
        if self._admin is None:
            client = self._connect()
            self._check_eviction(client)
            self._admin = client.register_script(ADMIN_LUA)
        kind, meta, others, lost = self._run(self._admin, ["open", b"audit" if audit else b"", SHARDS], "open")
        kind = kind.decode() if isinstance(kind, bytes) else str(kind)
        if kind == "none":
            if others:
                raise self._not_an_index("it has index keys but no metadata" + self._evicted_note(";"))
            return None
        if meta is None or meta is False:
            raise self._not_an_index(f"its meta key holds a {kind}, not a string")
        self._check_meta(meta)
        mine = _without_layout(bytes(meta), self._layout_no())
        if mine is None and layout:
            raise self._layout_error()
        if lost:
            what = ", ".join(_text(bytes(part)) for part in lost)
            raise StoreError(self.path, "lost_keys", f"it lacks {what}{self._evicted_note(';')}", "open")
        return bytes(meta) if mine is None else mine

    def _layout_error(self) -> SimhashIndexError:
        return SimhashIndexError(
            f"The simhash index at {self.path} was written by an earlier version of scrapy-simhash "
            f"(another Redis key layout; this version reads and writes layout {self._layout_no()} on a "
            f"{'cluster' if self._is_cluster() else 'server'}). Rebuild it: delete it "
            "(`scrapy simhash <spider> reset`, SimhashIndex.destroy(path) or SIMHASH_RESET = True) and crawl "
            "again, or use another SIMHASH_REDIS_PREFIX; it was left untouched."
        )

    def _evicted_note(self, sep: str) -> str:
        """Where the server evicted keys since it started: ``<sep> <how many, the policy>: its own
        among them?``; else ``''``."""
        if not self._evicted_base:
            return ""
        return (
            f"{sep} the server has evicted {self._evicted_base:,} keys since it started (under an evicting "
            "maxmemory-policy): its own among them?"
        )

    def _check_eviction(self, client: Any) -> None:
        """Refuse a server whose ``maxmemory-policy`` evicts keys (fingerprints and records would
        vanish unnoticed, and with them the metadata); where the server refuses ``INFO``, warn
        that it could not be checked. Keeps the server's ``evicted_keys``, what later calls
        check against."""
        try:
            info = _server_info(client, self._meta_key)
        except redis.ResponseError as exc:
            logger.warning(
                "scrapy-simhash: could not read the maxmemory-policy of the Redis server of the index at %s "
                "(%s: %s); make sure it is %s, or the server deletes fingerprints and records when memory runs out",
                self.path,
                type(exc).__name__,
                exc,
                NO_EVICTION,
            )
            return
        except redis.RedisError as exc:
            raise self._error(exc, "open") from exc
        policy = info.get("maxmemory_policy")
        if policy is not None and policy != NO_EVICTION:
            raise StoreError(self.path, "eviction", f"the server's maxmemory-policy is {policy}", "open")
        if hasattr(client, "get_primaries"):  # a cluster: the records and the evidence are on every node
            for node in client.get_primaries():
                try:
                    other = dict(client.info(target_nodes=node))
                except redis.RedisError:
                    continue  # (INFO refused: warned about above where it is the index's node)
                policy = other.get("maxmemory_policy")
                if "evicted_keys" in other:
                    self._node_evicted[node.name] = int(other["evicted_keys"])
                if policy is not None and policy != NO_EVICTION:
                    raise StoreError(
                        self.path,
                        "eviction",
                        f"the maxmemory-policy of the cluster's node {node.host}:{node.port} is {policy} "
                        "(it holds records and evidence of the index)",
                        "open",
                    )
        if policy is not None and "evicted_keys" in info:
            self._evicted_base = int(info["evicted_keys"])

    def _not_an_index(self, reason: str) -> NotAnIndexError:
        return NotAnIndexError(
            f"The Redis keys {self.prefix}* at {_public_url(self.url)} are not a scrapy-simhash index ({reason}). "
            f"They were left untouched: use another prefix (SIMHASH_REDIS_PREFIX), or delete them yourself."
        )

    def _check_meta(self, meta: bytes) -> None:
        try:
            ok = json.loads(meta).get("format") == "scrapy-simhash-index"
        except (ValueError, AttributeError):
            ok = False
        if not ok:
            raise self._not_an_index("its metadata is not an index's")

    def configure(self, layout: TableLayout) -> None:
        self._layout = layout
        self._bucket_shift = [max(0, kb - BUCKET_BITS) for kb in layout.key_bits]
        self._main = self._connect().register_script(main_lua(layout))
        if self._is_cluster():
            self._records = self._connect().register_script(RECORDS_LUA)

    def _layout_no(self) -> int:
        """The key layout of this store's index: :data:`CLUSTER_LAYOUT` on a cluster, else :data:`LAYOUT`."""
        return CLUSTER_LAYOUT if self._is_cluster() else LAYOUT

    def create_meta(self, value: bytes) -> bytes:
        if self._admin is None:
            self.open()
        meta, token, writes = self._run(
            self._admin, ["cmeta", _with_layout(value, self._layout_no()), os.urandom(16)], "create"
        )
        self._token = bytes(token)
        self._seen = int(writes)
        mine = _without_layout(bytes(meta), self._layout_no())
        if mine is None:  # another process created an index of an earlier layout meanwhile
            raise self._layout_error()
        return mine

    def write_meta(self, value: bytes) -> None:
        self._run(self._admin, ["wmeta", _with_layout(value, self._layout_no()), self._token or b""], "write to")

    def destroy(self) -> bool:
        if (
            self._open(audit=False, layout=False) is None
        ):  # refuses keys that are not an index's (one that lost keys: deleted)
            return False  # no index: the keys under its names, if any, are someone else's
        deleted = bool(self._run(self._admin, ["destroy", SHARDS], "delete"))
        pattern = "".join("\\" + ch if ch in "*?[]\\" else ch for ch in self.evidence_prefix.decode()) + "*"

        def delete_evidence(client: Any) -> None:
            for name in client.scan_iter(match=pattern, count=1000):
                if client.type(name) in (b"string", "string"):
                    client.delete(name)

        self._evidence_call(delete_evidence, "delete")
        if self._is_cluster():  # the record shards (layout 3), each in its own slot: those that are hashes

            def delete_records(client: Any) -> int:
                names = self._record_shards
                return sum(client.delete(name) for name in names if client.type(name) in (b"hash", "hash"))

            deleted = bool(self._evidence_call(delete_records, "delete")) or deleted
        return deleted

    def close(self) -> None:
        client = self._client
        self._main = self._admin = None
        if self._own_client and client is not None:
            self._client = None
            client.close()

    # -- groups: an undo log ---------------------------------------------------------------

    def begin(self) -> None:
        self._undo = []

    def hold(self, keys: Sequence[bytes]) -> None:
        """Lock each key's record (``P L<key>``: this store's token, expiring after
        :data:`LOCK_TTL_S`) until the group writes the key's record (the end of its decision:
        released by that write, which fails, ``busy``, where the lock expired meanwhile) or ends.
        The locks are taken by the group's next call, in the same round trip, which waits while
        another process holds one of them. A process that dies holding a lock delays that key for
        at most :data:`LOCK_TTL_S`; one that waits longer raises :class:`StoreError` (``busy``)."""
        assert self._undo is not None, "hold() inside a group (begin()) only"
        self._pending += [key for key in dict.fromkeys(keys) if key not in self._held and key not in self._pending]

    def _unlock(self) -> bool:
        """Release the group's locks; ``False`` when one of them had expired (another process
        may have decided its key meanwhile)."""
        held, self._held = self._held, []
        self._pending = []  # never sent: nothing to release
        if not held:
            return True
        return int(self._call("unlock", self._lock_token, *held, action="unlock the records of")) == len(held)

    def commit(self) -> None:
        try:
            intact = self._unlock()
        except StoreError as exc:
            if exc.kind != "connection":
                raise
            intact = True  # the group's writes are all in; its locks expire by themselves
        if not intact:  # the index's batch aborts: the group's writes are undone
            raise StoreError(
                self.path, "busy", f"this process held a record's lock past its expiry ({LOCK_TTL_S:g} s)", "commit"
            )
        self._undo = None

    def abort(self) -> None:
        undo, self._undo = self._undo, None
        self._pending = []
        try:
            for op, args in reversed(undo or ()):
                if op == "rundo":  # a cluster's record shards: the old entries back
                    pairs = list(zip(args[::2], args[1::2]))
                    self._put_entries([(key, b"*", old) for key, old in reversed(pairs)])
                    continue
                self._call(op, *args, action="undo a group on")
        finally:
            if self._held:
                with contextlib.suppress(StoreError):  # a lock not released expires by itself
                    self._unlock()

    def _log(self, op: str, args: list[bytes]) -> None:
        if self._undo is not None and args:
            self._undo.append((op, args))

    # -- fingerprints ----------------------------------------------------------------------

    def _buckets(self, fp: bytes) -> list[bytes]:
        assert self._layout is not None, "configure() first"
        return [
            (int.from_bytes(tk, "big") >> shift).to_bytes(2, "big")
            for tk, shift in zip(self._layout.tkeys(fp), self._bucket_shift)
        ]

    @staticmethod
    def _probe(res: list[Any], exclude: bytes | None) -> Probe:
        total, capped = int(res[0]), bool(res[1])
        found = {bytes(res[i]): int(res[i + 1]) for i in range(2, len(res), 3)}
        keys = {bytes(res[i]): bytes(res[i + 2]) for i in range(2, len(res), 3)}
        hits = sort_hits(found, lambda f: keys[f].split(_KEY_SEP) if keys[f] else [], exclude)
        return Probe(hits, total, capped)

    def near(self, fp: bytes, k: int, limit: int, exclude: bytes | None = None) -> Probe:
        res = self._call("near", fp, k, limit, *self._buckets(fp), action="read")
        return self._probe(res, exclude)

    def check_and_add(self, key: bytes, fp: bytes, k: int, limit: int, wide: int = 0) -> Probe:
        shard = shard_of(key)
        around: list[Any] = []
        if wide > k:
            assert self._layout is not None
            own = self._buckets(fp)
            neighbours = self._layout.probe_tkeys(self._layout.tkeys(fp))
            for t, (keys, shift) in enumerate(zip(neighbours, self._bucket_shift)):
                bids = {(int.from_bytes(tk, "big") >> shift).to_bytes(2, "big") for tk in keys} - {own[t]}
                for bid in sorted(bids):
                    around += [t + 1, bid]
        res = self._call("cadd", key, shard, fp, k, limit, *self._buckets(fp), wide, *around, action="write to")
        old = bytes(res[0])
        probe = self._probe(res[1], key)
        if res[2]:
            wres = [0, 0, *res[2]]
            probe = probe._replace(wide=tuple(self._probe(wres, key).hits))
        now = b"" if probe.hits else fp
        if old != now:
            self._log("undo_fp", [key, str(shard).encode(), now, old])
        return probe

    # -- decisions: one read, one conditional write -----------------------------------------

    snapshots = True

    def snapshot(
        self, key: bytes, fp: bytes | None, k: int, limit: int, wide: int = 0, evidence: bool = False
    ) -> Snapshot:
        assert self._layout is not None, "configure() first"
        # A server reads the evidence with the snapshot; a cluster (other slots) with an MGET.
        evp = self.evidence_prefix if evidence and not self._is_cluster() else b""
        entry = None  # a cluster's: the key's record entry, in a slot of its own, read first
        if self._records is not None:
            entry = self._entries([key])[0]
        buckets = [b""] * len(self._layout.tables) if fp is None else self._buckets(fp)
        spec: list[Any] = [key, shard_of(key), fp or b"", k, limit, wide if wide > k else 0, evp, *buckets]
        record, own, res, wraw, recs, version, evs = self._call("snap", *spec, action="read")
        probe = self._probe(res, None)
        records = {bytes(recs[i]): bytes(recs[i + 1]) for i in range(0, len(recs), 2)}
        fps = [res[i] for i in range(2, len(res), 3)]
        if wraw and fp is not None:  # the wide tier's candidates, verified here; their keys: one more read
            found = wide_found(bytes(wraw), fp, k, wide, limit)
            if found:
                pairs, more = self._call("wkeys", *found, action="read")
                wres = [x for i in range(0, len(pairs), 2) for x in (pairs[i], found[bytes(pairs[i])], pairs[i + 1])]
                probe = probe._replace(wide=tuple(self._probe([0, 0, *wres], None).hits))
                records.update((bytes(more[i]), bytes(more[i + 1])) for i in range(0, len(more), 2))
        value = _record_of(entry) if self._records is not None else _present([record])[0]
        if self._records is not None:  # a cluster: the records of the keys found, from their shards
            others = [h.key for h in (*probe.hits, *probe.wide) if h.key != key]
            records = {k: r for k, r in zip(others, map(_record_of, self._entries(others))) if r is not None}
        found_evidence: dict[bytes, bytes | None] = {bytes(evs[i]): bytes(evs[i + 1]) for i in range(0, len(evs), 2)}
        if evp:  # read: absent ones have none
            found_evidence.update((h.key, None) for h in probe.hits if h.key not in found_evidence and h.key in records)
            if record and key not in found_evidence:
                found_evidence[key] = None
        reread = (spec, [len(fps), *fps], entry or b"")  # what apply reads again: the spec, the fingerprints found
        return Snapshot(value, _present([own])[0], probe, records, bytes(version), reread, found_evidence)

    def apply(self, snapshot: Snapshot, writes: Writes) -> bool:
        spec, found, entry = snapshot.spec
        key = spec[0]
        args: list[Any] = [*spec, snapshot.version, *found]
        if writes.fp is None:
            args.append(b"n")
        elif writes.fp:
            args += [b"a", writes.fp, *self._buckets(writes.fp)]
        else:
            args.append(b"r")
        split = None  # a cluster's: the key's record entry, written after the index, where unchanged since read
        if writes.record is not None and self._records is not None:
            args.append(b"n")
            value, due = writes.record
            split = b"" if not value else _record_entry(value, b"" if due is None else hot_of(value, due_ms(due)))
        elif writes.record is None:
            args.append(b"n")
        elif not writes.record[0]:
            args.append(b"d")
        else:
            value, due = writes.record
            ms = None if due is None else due_ms(due)
            hot = b"" if ms is None else hot_of(value, ms)
            args += [b"1", value, b"" if ms is None else str(ms).encode(), hot]
        name = self.evidence_prefix + key
        evidence = writes.evidence
        if writes.record is not None and not writes.record[0]:
            evidence = b""  # a deleted record takes its evidence with it
        later = None
        if evidence is not None and self._is_cluster():  # another slot: set before, delete after
            if evidence:
                self._evidence_call(lambda c: c.set(name, evidence), "write to")
            else:
                later = name
            args.append(0)
        elif evidence is not None:
            args += [1, name, evidence]
        else:
            args.append(0)
        aux = writes.aux or {}
        args.append(len(aux))
        for aux_name, blob in aux.items():
            args += [aux_name.encode(), b"0" if blob is None else b"1", blob or b""]
        done = int(self._call("apply", *args, action="write to")[0]) == 1
        if done and split is not None:
            # The index's part is in (the fingerprints found unchanged); another process that wrote
            # the key's record since the snapshot makes this decision read and decide again (it
            # then finds the fingerprint this one filed, and that process's record).
            done = self._put_entries([(key, entry, split)]) is not None
        if done and later is not None:
            self._evidence_call(lambda c: c.delete(later), "write to")
        return done

    def put(self, items: Sequence[tuple[bytes, bytes]]) -> None:
        pending = dict(items)
        if not pending:
            return
        args: list[Any] = []
        for key, fp in pending.items():
            args += [key, shard_of(key), fp, *self._buckets(fp)]
        olds = self._call("put", *args, action="write to")
        undo: list[bytes] = []
        for (key, fp), old in zip(reversed(pending.items()), reversed(olds)):
            undo += [key, str(shard_of(key)).encode(), fp, bytes(old)]
        self._log("undo_fp", undo)

    def remove(self, keys: Sequence[bytes]) -> int:
        if not keys:
            return 0
        olds = self._call("remove", *_with_shards(keys), action="write to")
        undo: list[bytes] = []
        for key, old in zip(reversed(keys), reversed(olds)):
            if old:
                undo += [key, str(shard_of(key)).encode(), b"", bytes(old)]
        self._log("undo_fp", undo)
        return sum(1 for old in olds if old)

    def _keyed(self, op: str, keys: Sequence[bytes]) -> list[bytes | None]:
        if not keys:
            return []
        return _present(self._call(op, *_with_shards(keys), action="read"))

    def get(self, keys: Sequence[bytes]) -> list[bytes | None]:
        return self._keyed("get", keys)

    def count(self) -> int:
        return int(self._call("count", action="read"))

    def _scan(self, kind: bytes, after: bytes | None, limit: int) -> list[tuple[bytes, bytes]]:
        if limit <= 0:
            return []
        first = 0 if after is None else shard_of(after)
        res = self._call("scan", kind, first, limit, action="read")
        out: list[tuple[bytes, bytes]] = []
        for i in range(0, len(res), 2):
            flat = res[i + 1]
            pairs = sorted((bytes(flat[j]), bytes(flat[j + 1])) for j in range(0, len(flat), 2))
            if after is not None and int(res[i]) == first:
                pairs = [p for p in pairs if p[0] > after]
            out += pairs[: limit - len(out)]
            if len(out) >= limit:
                break
        return out

    def scan(self, after: bytes | None, limit: int) -> list[tuple[bytes, bytes]]:
        return self._scan(b"k", after, limit)

    # -- records ---------------------------------------------------------------------------

    def get_records(self, keys: Sequence[bytes]) -> list[bytes | None]:
        if self._records is not None:
            return [_record_of(entry) for entry in self._entries(keys)]
        return self._keyed("rget", keys)

    def _log_records(self, keys: Sequence[bytes], written: Sequence[bytes], olds: list[Any]) -> None:
        if self._undo is None:
            return
        undo: list[bytes] = []
        for key, now, (value, hot) in zip(reversed(keys), reversed(written), reversed(olds)):
            hot = bytes(hot) if value and hot else b""  # the hot state, its due time first
            undo += [key, str(shard_of(key)).encode(), now, bytes(value or b""), b"1" if hot else b"", hot]
        self._log("undo_rec", undo)

    def put_records(
        self, items: Sequence[tuple[bytes, bytes, float | None]], evidence: Mapping[bytes, bytes | None] | None = None
    ) -> None:
        checked = [(key, bytes(value), None if due is None else due_ms(due)) for key, value, due in items]
        framed = [
            (self.evidence_prefix + key, b"" if value is None else bytes(value))
            for key, value in (evidence or {}).items()
        ]
        if framed and (not checked or self._is_cluster()):  # a cluster: another slot than the record's
            self._evidence_call(lambda c: [c.set(k, v) if v else c.delete(k) for k, v in framed], "write to")
            framed = []
        if not checked:
            return
        if self._records is not None:  # a cluster: the records' own shards
            self._put_entries(
                [
                    (key, b"*", _record_entry(value, b"" if due is None else hot_of(value, due)))
                    for key, value, due in checked
                ]
            )
            return
        args: list[Any] = [len(framed)]
        for name, value in framed:
            args += [name, value]
        for key, value, due in checked:
            hot = b"" if due is None else hot_of(value, due)  # the hot state, what a selection reads
            args += [key, shard_of(key), value, b"" if due is None else str(due).encode(), hot]
        olds = self._call("rput", *args, action="write to", records=[c[0] for c in checked])
        self._log_records([c[0] for c in checked], [c[1] for c in checked], olds)

    # -- a cluster's records: shards of hash tags of their own (layout 3) ---------------------------

    def _rcall(self, shard: int, args: list[Any], action: str) -> Any:
        """One call of the record shards' script on ``shard`` (a slot of its own)."""
        if self._rolled_back:
            raise StoreError(self.path, "rolled_back", "it went back to an older snapshot while it was open", action)
        if self._evicted is not None:
            raise StoreError(self.path, "eviction", self._evicted, action)
        if self._down:
            raise StoreError(
                self.path, "connection", "the server stopped answering; waiting for it to come back", action
            )
        name = self._record_shards[shard]
        client = self._connect()
        node = client.get_node_from_key(name).name
        while True:
            self._rcalls += 1
            base = self._node_evicted.get(node)
            check = base is not None and (self._policy_bad or self._rcalls % EVICTION_CHECK_CALLS == 0)
            head = b"%d" % base if base is not None and check else b""
            try:
                res = self._records(keys=[name], args=[head, *args], client=client)
            except redis.RedisError as exc:
                text = str(exc)
                if "SIMHASH_EVICTED" not in text or base is None:
                    raise self._error(exc, action) from exc
                words = text.split("SIMHASH_EVICTED", 1)[1].split()
                if int(words[0]) < base and words[1].startswith(NO_EVICTION):  # a restart: counted from there
                    self._node_evicted[node] = int(words[0])
                    continue
                raise self._evicted_error(words, action, base, f"the cluster's node {node}") from exc
            self._policy_bad = self._policy_bad and not check
            return res

    def _rcall_shards(self, shards: Sequence[int], args: list[Any], action: str) -> list[Any]:
        """:meth:`_rcall` of each of ``shards`` (a read), the calls sent in one pipeline a node: the
        same replies; a shard whose reply is an error is called again alone."""
        if len(shards) < 2 or self._rolled_back or self._evicted is not None or self._down:
            return [self._rcall(shard, args, action) for shard in shards]
        client = self._connect()
        by_node: dict[str, tuple[Any, list[int]]] = {}
        checks = []
        for i, shard in enumerate(shards):
            name = self._record_shards[shard]
            node = client.get_node_from_key(name)
            self._rcalls += 1
            base = self._node_evicted.get(node.name)
            check = base is not None and (self._policy_bad or self._rcalls % EVICTION_CHECK_CALLS == 0)
            checks.append(check)
            if node.name not in by_node:
                by_node[node.name] = (node.redis_connection.pipeline(transaction=False), [])
            pipe, at = by_node[node.name]
            pipe.evalsha(self._records.sha, 1, name, b"%d" % base if base is not None and check else b"", *args)
            at.append(i)
        replies: list[Any] = [None] * len(shards)
        for pipe, at in by_node.values():
            try:
                for i, reply in zip(at, pipe.execute(raise_on_error=False)):
                    replies[i] = reply
            except redis.RedisError:
                pass  # each called again alone, which reports the fault
        out = []
        for shard, reply, check in zip(shards, replies, checks):
            if reply is None or isinstance(reply, Exception):
                # Called again alone, which reports the fault; an eviction reply checks there again.
                self._policy_bad = self._policy_bad or "SIMHASH_EVICTED" in str(reply)
                reply = self._rcall(shard, args, action)
            elif check:
                self._policy_bad = False
            out.append(reply)
        return out

    def _entries(self, keys: Sequence[bytes]) -> list[bytes | None]:
        """The record entry of each key (``None``: none): one call per shard."""
        by_shard: dict[int, list[bytes]] = {}
        for key in dict.fromkeys(keys):
            by_shard.setdefault(shard_of(key), []).append(key)
        found: dict[bytes, bytes | None] = {}
        for shard, group in by_shard.items():
            found.update(zip(group, _present(self._rcall(shard, [b"get", *group], "read"))))
        return [found[key] for key in keys]

    def _put_entries(self, items: Sequence[tuple[bytes, bytes, bytes]]) -> list[bytes] | None:
        """Write ``(key, expected entry (b"": none, b"*": any), entry (b"": delete))`` items, one
        call per shard, each all or nothing: the old entries, or ``None`` where an entry was not
        the expected one (one shard's items at most: a decision writes one key)."""
        by_shard: dict[int, list[tuple[bytes, bytes, bytes]]] = {}
        for item in items:
            by_shard.setdefault(shard_of(item[0]), []).append(item)
        olds: list[bytes] = []
        undo: list[bytes] = []
        for shard, group in by_shard.items():
            res = self._rcall(shard, [b"put", *(x for item in group for x in item)], "write to")
            if not int(res[0]):
                return None
            for (key, _, _), old in zip(group, res[1:]):
                olds.append(bytes(old))
                undo += [key, bytes(old)]
        self._log("rundo", undo)
        return olds

    def _is_cluster(self) -> bool:
        return hasattr(self._connect(), "get_node_from_key")

    def _evidence_call(self, fn: Any, action: str) -> Any:
        """``fn(client)``: plain commands on evidence keys (outside the index's slot), errors as
        :class:`StoreError`."""
        if self._down:
            raise StoreError(
                self.path, "connection", "the server stopped answering; waiting for it to come back", action
            )
        try:
            return fn(self._connect())
        except redis.RedisError as exc:
            raise self._error(exc, action) from exc

    def get_evidence(self, keys: Sequence[bytes]) -> list[bytes | None]:
        if not keys:
            return []
        names = [self.evidence_prefix + key for key in keys]
        if self._is_cluster():
            values = self._evidence_call(lambda c: c.mget_nonatomic(names), "read")
        else:
            values = self._evidence_call(lambda c: c.mget(names), "read")
        return [None if v is None else bytes(v) for v in values]

    def delete_records(self, keys: Sequence[bytes]) -> int:
        if not keys:
            return 0
        if self._records is not None:
            gone = self._put_entries([(key, b"*", b"") for key in dict.fromkeys(keys)]) or []
            names = [self.evidence_prefix + key for key in keys]
            self._evidence_call(lambda c: [c.delete(name) for name in names], "write to")
            return sum(1 for old in gone if old)
        olds = self._call("rdel", *_with_shards(keys), action="write to", records=keys)
        self._log_records(keys, [b""] * len(keys), olds)
        names = [self.evidence_prefix + key for key in keys]
        self._evidence_call(lambda c: [c.delete(name) for name in names], "write to")
        return sum(1 for value, _ in olds if value)

    def scan_records(self, after: bytes | None, limit: int) -> list[tuple[bytes, bytes]]:
        if self._records is None:
            return self._scan(b"r", after, limit)
        out: list[tuple[bytes, bytes]] = []
        first = 0 if after is None else shard_of(after)
        for shard in range(first, SHARDS) if limit > 0 else ():
            name = self._record_shards[shard]
            found = self._evidence_call(lambda c, name=name: c.hgetall(name), "read")
            pairs = sorted((bytes(k), _record_of(bytes(v)) or b"") for k, v in found.items())
            if after is not None and shard == first:
                pairs = [p for p in pairs if p[0] > after]
            out += pairs[: limit - len(out)]
            if len(out) >= limit:
                break
        return out

    def due_states(self, after: bytes | None, limit: int, keys: bool = True) -> tuple[bytes | None, list[bytes], bytes]:
        # The hot states of the entries' shards (``P r<shard>``), whole shards from the one after ``after``.
        first = 0 if after is None else int(after) + 1
        if limit <= 0 or first >= SHARDS:
            return None, [], b""
        if self._records is not None:  # a cluster: each record shard in its own slot
            named: list[bytes] = []
            hots: list[bytes] = []
            n, last = 0, first - 1  # last: the last shard read
            while last + 1 < SHARDS and n < limit:  # _HOT_SHARDS shards a pipeline
                batch = range(last + 1, min(last + 1 + _HOT_SHARDS, SHARDS))
                for shard, (joined, packed) in zip(batch, self._rcall_shards(batch, [b"hot"], "read")):
                    last = shard
                    if joined:
                        some = bytes(joined).split(b"\xff")
                        n += len(some)
                        named += some if keys else []
                        hots.append(bytes(packed))
                    if n >= limit:
                        break
            return (str(last).encode() if n else None), named, b"".join(hots)
        res = self._call("hot", first, limit, action="read")
        if not res:
            return None, [], b""
        found: list[bytes] = []
        for joined in res[1::3] if keys else ():
            found += bytes(joined).split(b"\xff")  # 0xFF never occurs in UTF-8
        return str(int(res[-3])).encode(), found, b"".join(res[2::3])

    def records_due(self, before: float, limit: int) -> list[tuple[bytes, float]]:
        # No due index: the hot states of the entries, read shard by shard (as a selection reads them).
        if limit <= 0:
            return []
        cut = due_ms(min(max(before, 0.0), MAX_DUE))
        found: list[tuple[int, bytes]] = []
        after: bytes | None = None
        while True:
            after, keys, hots = self.due_states(after, _DUE_PAGE)
            dues = np.frombuffer(hots, HOT)["due"].tolist() if hots else []
            found += [(due, key) for due, key in zip(dues, keys) if due <= cut]
            if len(found) > 4 * limit + _DUE_PAGE:
                found = heapq.nsmallest(limit, found)
            if after is None:
                break
        return [(key, due / 1000) for due, key in heapq.nsmallest(limit, found)]

    # -- aux -------------------------------------------------------------------------------

    def get_aux(self, names: Sequence[str]) -> list[bytes | None]:
        if not names:
            return []
        return _present(self._call("aget", *[n.encode() for n in names], action="read"))

    def put_aux(self, items: Mapping[str, bytes | None]) -> None:
        if not items:
            return
        args: list[Any] = []
        for name, value in items.items():
            args += [name.encode(), b"0" if value is None else b"1", value or b""]
        olds = self._call("aput", *args, action="write to")
        undo: list[bytes] = []
        for name, old in zip(reversed(list(items)), reversed(olds)):
            undo += [name.encode(), b"1" if old else b"0", bytes(old[0]) if old else b""]
        self._log("aput", undo)

    def stats(self) -> dict[str, Any]:
        if self._main is None:
            return {}
        res = self._call("stats", action="read")
        out = {res[i].decode(): int(res[i + 1]) for i in range(0, len(res), 2)}
        if self._records is not None:  # a cluster: the records' own shards, in their slots

            def used(client: Any) -> int:
                names = self._record_shards
                return sum(client.memory_usage(name, samples=0) or 0 for name in names)

            records = int(self._evidence_call(used, "read"))
            out["records_bytes"] += records
            out["redis_bytes"] += records
        return out
