"""Decisions per second per process on Redis, and round trips per page, against the index's size.

    nice .venv/bin/python benchmarks/scale/redis_decisions.py [--sizes 100000,1000000] [--decisions 3000] [--floor]
    PYTHONPATH=<another checkout> nice .venv/bin/python benchmarks/scale/redis_decisions.py   # before/after

A fresh ``redis-server`` (127.0.0.1, no persistence) is filled with ``size`` synthetic 64-bit
fingerprints (random keys and fingerprints, ``SimhashIndex.add_many`` in chunks: the index's
buckets as full as a crawl of that size leaves them), then one process decides ``--decisions``
pages through the real ``ChangeTracker.observe`` with the settings' defaults: the data's real pages
(``benchmarks/scale/bytes_per_url.py``'s), 60% new kept pages (a real page's own text with a line
of its own, a random fingerprint), 20% near-duplicates of a page decided before (one or two bits
flipped, the same text), 20% refetches of a page decided before (the same page). Round trips are
the commands the process's connections send (counted at the connection), per page of each kind.
Printed: the decisions per second of wall time (what a loaded machine shows), the CPU per decision
of the client process and of the server (``INFO cpu``), and the decisions per second that CPU
allows (client and server one after the other: one process deciding alone, its latency aside); the
server's ``usec_per_call`` of ``EVALSHA`` (``INFO commandstats``: the scripts' own time); the
floor: the very same ``EVALSHA`` calls (the same arguments, so the same bytes sent, sent the
store's way) to a script that only returns 1. Then where the time goes: the client's CPU by part
(the Redis calls: packing, the socket, parsing the replies; decoding the snapshot; encoding the
write and the record's hot state; the rules; the evidence, zstd; encoding and parsing records;
the rest), each part its own time without the parts it calls; the server's CPU of the snapshot
calls (made again once the decisions are done: reads) and of the rest (the writes, the wide tier's
keys); and the issue's bar (2,000 decisions per second: 500 us for everything) against the CPU
this run spends and against its own client CPU with the calls at the floor's wall time.
``--transports tcp,unix``: over the loopback TCP port, then a unix socket of the same server (the
same index, other pages). redis-py uses hiredis to parse replies where it is installed (printed).
``--floor``: also the floor of a decision against the bar: the round trips at the floor's wall
time, the server's least reads and writes (each snapshot and write call made again as a script
that only reads what the same verdict needs: the key's entry, the page's buckets and, where the
snapshot read them, the wide tier's, the entries and evidence of the keys found; or writes the
key's entry, its fingerprint's field and buckets and its evidence, as the same bytes again), and
the client's own work (all of its CPU but the Redis calls).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve()
if "PYTHONPATH" not in os.environ:
    sys.path.insert(0, str(_HERE.parents[2]))
sys.path.insert(0, str(_HERE.parents[2] / "tests"))
sys.path.insert(0, str(_HERE.parent))

import redis
from bytes_per_url import base_pages, variant
from redis_bench import binary, cpu_seconds, evalsha_stats, fresh_server
from scrapy.settings import Settings

from scrapy_simhash.decision.tracker import ChangeTracker
from scrapy_simhash.scrapy.settings import load_config
from scrapy_simhash.store import redisstore
from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.record import PageRecord
from scrapy_simhash.store.redisstore import RedisStore

CHUNK = 20_000
#: The issue's bar: decisions per second per process at 1e6 fingerprints.
BAR = 2000


class Counting:
    """Counts the commands every connection of this process sends (each one round trip), however
    the client packs them."""

    sent = 0

    @classmethod
    def install(cls) -> None:
        kind = redis.connection.AbstractConnection  # TCP's and unix sockets'
        send = kind.send_packed_command

        def counted(self: Any, command: Any, check_health: bool = True) -> None:
            cls.sent += 1
            send(self, command, check_health)

        kind.send_packed_command = counted  # type: ignore[method-assign]


class Parts:
    """Client CPU by part: wrapped functions' own process time (what their wrapped callees took
    counted apart), each under its label."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._stack: list[list[float]] = []
        self._undo: list[tuple[Any, str, Any]] = []

    def wrap(self, owner: Any, name: str, label: str) -> None:
        fn = getattr(owner, name)
        stack, seconds = self._stack, self.seconds
        seconds.setdefault(label, 0.0)
        clock = time.process_time

        def timed(*args: Any, **kwargs: Any) -> Any:
            frame = [clock(), 0.0]  # start, the wrapped callees' time
            stack.append(frame)
            try:
                return fn(*args, **kwargs)
            finally:
                stack.pop()
                took = clock() - frame[0]
                seconds[label] += took - frame[1]
                if stack:
                    stack[-1][1] += took

        was = vars(owner).get(name, _MISSING)
        self._undo.append((owner, name, was))
        setattr(owner, name, staticmethod(timed) if isinstance(was, (classmethod, staticmethod)) else timed)

    def unwrap(self) -> None:
        for owner, name, was in reversed(self._undo):
            if was is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, was)
        self._undo = []


_MISSING = object()

#: The client's parts: (what, its function, the label).
PARTS = [
    ("store", "_run", "Redis calls (packing, the socket, the replies)"),
    ("store", "_evidence_call", "Redis calls (packing, the socket, the replies)"),
    ("store", "snapshot", "snapshot: decode the reply"),
    ("store", "apply", "write: encode the call"),
    (redisstore, "hot_of", "write: the hot state (its parse apart)"),
    ("tracker", "_observe", "decision: the rules"),
    ("tracker", "_evidence", "decision: the evidence (zstd)"),
    (PageRecord, "to_bytes", "records: encode"),
    (PageRecord, "parse", "records: parse"),
]


def fill(index: SimhashIndex, size: int, rng: random.Random) -> float:
    start = time.perf_counter()
    for first in range(0, size, CHUNK):
        n = min(CHUNK, size - first)
        index.add_many(
            (f"https://fill{(first + i) % 211}.example/{first + i:09d}", rng.getrandbits(64)) for i in range(n)
        )
    return time.perf_counter() - start


def decide(index: SimhashIndex, pages: list[Any], decisions: int, rng: random.Random, tag: str = "") -> dict[str, Any]:
    tracker = ChangeTracker(index, **load_config(Settings()).tracker_kwargs())
    seen: list[tuple[str, Any]] = []
    rounds: dict[str, list[int]] = {}
    verdicts: dict[str, int] = {}
    plan = []  # the pages first, so that the time is the decisions'
    for i in range(decisions):
        roll = rng.random()
        if seen and roll < 0.2:
            kind, (key, observed) = "refetch", seen[rng.randrange(len(seen))]
        elif seen and roll < 0.4:
            kind = "near-duplicate"
            _, kept = seen[rng.randrange(len(seen))]
            fp = kept.fp
            for bit in rng.sample(range(64), rng.choice((1, 2))):
                fp ^= 1 << bit
            key, observed = f"https://dup{i % 97}.example/{tag}{i:08d}", variant(kept, fp, None)
        else:
            kind, key = "new", f"https://site{i % 97}.example/{tag}{i:08d}"
            observed = variant(pages[rng.randrange(len(pages))], rng.getrandbits(64), f"Page {i} of the benchmark")
            seen.append((key, observed))
        plan.append((kind, key, observed))
    store = index.store
    calls: list[list[Any]] = []
    run = store._run

    def recorded(script: Any, args: Any, action: str = "access") -> Any:  # the store's script calls
        calls.append(list(args))
        return run(script, args, action)

    store._run = recorded  # type: ignore[method-assign]
    parts = Parts()
    for owner, name, label in PARTS:
        parts.wrap(store if owner == "store" else tracker if owner == "tracker" else owner, name, label)
    cpu, start = time.process_time(), time.perf_counter()
    for i, (kind, key, observed) in enumerate(plan):
        before = Counting.sent
        verdict = tracker.observe(key, observed, now=1.7e9 + i)
        rounds.setdefault(kind, []).append(Counting.sent - before)
        verdicts[verdict.verdict] = verdicts.get(verdict.verdict, 0) + 1
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    parts.unwrap()
    del store._run
    inside = parts.seconds[PARTS[0][2]]
    return {
        "wall": wall,
        "cpu": cpu,
        "inside": inside,
        "calls": calls,
        "rounds": rounds,
        "verdicts": verdicts,
        "parts": parts.seconds,
    }


def replayed(store: Any, calls: list[list[Any]], client: Any, op: str) -> float:
    """Server CPU seconds of the calls ``op`` of ``calls`` made again (reads: the same effect)."""
    before = cpu_seconds(client)
    for args in calls:
        if args[0] == op:
            store._main(keys=[store._meta_key], args=args)
    return cpu_seconds(client) - before


def floor(store: Any, client: Any, calls: list[list[Any]]) -> dict[str, float]:
    """The same script calls (the same arguments, sent the store's way) to a script that returns
    1: wall, client CPU and server CPU seconds in all."""
    trivial = client.register_script("return 1")
    trivial(keys=[store._meta_key], args=[])  # loaded
    before = cpu_seconds(client)
    cpu, start = time.process_time(), time.perf_counter()
    send = getattr(store, "_evalsha", None)  # an older store: redis-py's path, as its calls went
    for args in calls:
        if send is None:
            client.evalsha(trivial.sha, 1, store._meta_key, *args)
        else:
            send(trivial, args)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"wall": wall, "cpu": cpu, "server": cpu_seconds(client) - before}


# The floor of what a decision must do on the server, each of the decisions' script calls made
# again as a script that does only that: reads, the key's entry, the page's buckets in every table
# and, where the snapshot read them (no other page within k), the buckets one bit away, the entries
# and evidence of the keys found; writes (as the same bytes again: the index stays as it is), the
# key's entry, and for a fingerprint filed, its keys' field and its bucket in every table (no
# append without reading the bucket: a bucket is one field), the evidence. ARGV as the store's.
_READS_LUA = r"""
local P = string.sub(KEYS[1], 1, -5)
local byte, char, bxor = string.byte, string.char, bit.bxor
local KB = {%(kb)s}
local key, shard, fp, evp = ARGV[4], ARGV[5], ARGV[6], ARGV[10]
local wide = ARGV[11 + #KB] == '1'
local out = {redis.call('HGET', P .. 'r' .. shard, key) or ''}
if fp ~= '' then
  for t = 1, #KB do
    local bid = ARGV[10 + t]
    local names = {bid}
    if wide then
      local hi, lo = byte(bid, 1), byte(bid, 2)
      for j = 0, math.min(16, KB[t]) - 1 do
        if j < 8 then names[#names + 1] = char(hi, bxor(lo, 2 ^ j)) else names[#names + 1] = char(bxor(hi, 2 ^ (j - 8)), lo) end
      end
    end
    for _, v in ipairs(redis.call('HMGET', P .. string.format('t%%02d', t - 1), unpack(names))) do out[#out + 1] = v or '' end
  end
end
for i = 12 + #KB, #ARGV, 2 do
  out[#out + 1] = redis.call('HGET', P .. 'r' .. ARGV[i + 1], ARGV[i]) or ''
  if evp ~= '' then out[#out + 1] = redis.call('GET', evp .. ARGV[i]) or '' end
end
if evp ~= '' then out[#out + 1] = redis.call('GET', evp .. key) or '' end
return table.concat(out)
"""
_WRITES_LUA = r"""
local P = string.sub(KEYS[1], 1, -5)
local T = tonumber(ARGV[4])
local key, shard, fp, ev = ARGV[5], ARGV[6], ARGV[7], ARGV[8]
local function again(h, f)  -- a field read and written as it is
  local v = redis.call('HGET', h, f)
  if v then redis.call('HSET', h, f, v) end
end
again(P .. 'r' .. shard, key)
if fp ~= '' then
  again(P .. 'fps', fp)
  for t = 1, T do again(P .. string.format('t%02d', t - 1), ARGV[8 + t]) end
end
if ev ~= '' then
  local v = redis.call('GET', ev)
  if v then redis.call('SET', ev, v) end
end
return 1
"""


def server_floor(store: Any, client: Any, calls: list[list[Any]]) -> dict[str, float]:
    """Server CPU seconds of the reads and the writes the decisions' calls must make at least (the
    scripts above, each call made again), and of the wide tier's reads alone."""
    layout = store._layout
    tables = len(layout.tables)
    reads = client.register_script(_READS_LUA % {"kb": ", ".join(str(kb) for kb in layout.key_bits)})
    writes = client.register_script(_WRITES_LUA)
    meta = [store._meta_key]
    read_args, write_args = [], []
    for args in calls:
        if args[0] == "snap":
            spec = args[3 : 3 + 7 + tables]
            _, _, res, wraw, _, _, _ = store._main(keys=meta, args=args)[1]
            found = [k for i in range(4, len(res), 3) for k in bytes(res[i]).split(b"\xff") if k and k != spec[0]]
            pairs = [x for k in found for x in (k, redisstore.shard_of(k))]
            read_args.append([*args[:3], *spec, b"1" if wraw else b"0", *pairs])
        elif args[0] == "apply":
            key, shard = args[3], args[4]
            i = 3 + 7 + tables
            i += 1 + int(args[i + 1]) + 1  # the version, the fingerprints found
            fop = args[i]
            fp = args[i + 1] if fop == b"a" else b""
            buckets = args[i + 2 : i + 2 + tables] if fop == b"a" else [b""] * tables
            i += 2 + tables if fop == b"a" else 1
            i += 4 if args[i] == b"1" else 1
            ev = args[i + 1] if int(args[i]) else b""
            write_args.append([b"w", b"", b"", tables, key, shard, fp, ev, *buckets])
    out = {}
    for name, script, batch in (("reads", reads, read_args), ("writes", writes, write_args)):
        script(keys=meta, args=batch[0])
        before = cpu_seconds(client)
        for args in batch:
            script(keys=meta, args=args)
        out[name] = cpu_seconds(client) - before
    narrow = [[*a[: 10 + tables], b"0", *a[11 + tables :]] for a in read_args]
    before = cpu_seconds(client)
    for args in narrow:
        reads(keys=meta, args=args)
    out["wide"] = out["reads"] - (cpu_seconds(client) - before)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--decisions", type=int, default=3000)
    parser.add_argument("--transports", default="tcp,unix", help="tcp, unix or both (comma-separated)")
    parser.add_argument(
        "--floor", action="store_true", help="also the floor of a decision: its round trips, reads, writes and rules"
    )
    args = parser.parse_args()
    Counting.install()
    binary()  # (exits where there is none)
    from redis.utils import HIREDIS_AVAILABLE

    import scrapy_simhash

    print(
        f"scrapy_simhash from {Path(scrapy_simhash.__file__).parent}; redis-py {redis.__version__}, "
        f"replies parsed by {'hiredis' if HIREDIS_AVAILABLE else 'redis-py (Python; hiredis not installed)'}"
    )
    pages = base_pages()
    print(f"{len(pages)} real pages with own text; {args.decisions:,} decisions per size and transport")
    transports = [t for t in args.transports.split(",") if t]
    for size in (int(s) for s in args.sizes.split(",")):
        with fresh_server("redis-decisions", unix="unix" in transports) as server:
            rng = random.Random(38)
            index = SimhashIndex(RedisStore(server.url, "bench", client=redis.Redis.from_url(server.url)))
            filled = fill(index, size, rng)
            index.close()
            print(f"\n{size:>9,} fingerprints (filled in {filled:.0f} s)")
            for transport in transports:
                url = server.url if transport == "tcp" else server.unix_url
                client = redis.Redis.from_url(url)
                index = SimhashIndex(RedisStore(url, "bench", client=client))
                plain = redis.Redis.from_url(url)
                plain.config_resetstat()
                before = cpu_seconds(plain)
                out = decide(index, pages, args.decisions, rng, tag=transport)
                out["server"] = cpu_seconds(plain) - before
                evalsha = evalsha_stats(plain)
                out["server_snap"] = replayed(index.store, out["calls"], plain, "snap")
                low = floor(index.store, plain, out["calls"])
                least = server_floor(index.store, plain, out["calls"]) if args.floor else None
                plain.close()
                index.close()
                report(transport, args.decisions, out, evalsha, low)
                if least is not None:
                    report_floor(args.decisions, out, low, least)


def report(transport: str, n: int, out: dict[str, Any], evalsha: dict[str, Any], low: dict[str, float]) -> None:
    us = 1e6 / n
    per = ", ".join(f"{kind} {sum(r) / len(r):.2f} (max {max(r)})" for kind, r in sorted(out["rounds"].items()))
    print(
        f"  {transport}: {n / out['wall']:,.0f} decisions/s wall ({out['wall'] * us:,.0f} us a decision); "
        f"CPU per decision: client {out['cpu'] * us:,.0f} us (in the script calls {out['inside'] * us:,.0f}, "
        f"the rest {(out['cpu'] - out['inside']) * us:,.0f}), server {out['server'] * us:,.0f} us "
        f"(EVALSHA {evalsha.get('usec_per_call', 0):,.0f} us a call, {len(out['calls']) / n:.2f} calls a decision): "
        f"{n / (out['cpu'] + out['server']):,.0f} decisions/s of CPU; {out['verdicts']}"
    )
    print(f"    round trips per page: {per}")
    print(
        f"    floor, the same calls to a script that returns 1: {low['wall'] * us:,.0f} us wall, client CPU "
        f"{low['cpu'] * us:,.0f} us, server {low['server'] * us:,.0f} us a decision "
        f"({n / low['wall']:,.0f}/s wall; with the decision's own CPU, the rest above: "
        f"{n / (low['wall'] + out['cpu'] - out['inside']):,.0f}/s)"
    )
    parts = {label: secs * us for label, secs in out["parts"].items()}
    rest = out["cpu"] * us - sum(parts.values())
    listed = ", ".join(f"{label} {v:,.0f}" for label, v in parts.items())
    print(f"    client CPU by part, us a decision: {listed}, the rest (index.decisions, observe, the loop) {rest:,.0f}")
    snap = out["server_snap"] * us
    print(
        f"    server CPU, us a decision: the snapshot calls {snap:,.0f} (made again), the writes and the rest "
        f"{out['server'] * us - snap:,.0f}; of all of it, receiving the same bytes and running a script at all "
        f"(the floor) {low['server'] * us:,.0f}"
    )
    budget = 1e6 / BAR
    cpu = (out["cpu"] + out["server"]) * us
    print(
        f"    the bar, {BAR:,}/s: {budget:,.0f} us a decision for client, server and the wait between; "
        f"this run spends {cpu:,.0f} us of CPU ({cpu / budget:.1f}x), "
        f"{(out['cpu'] - out['inside']) * us + low['wall'] * us:,.0f} us with the Redis calls at the floor"
    )


def report_floor(n: int, out: dict[str, Any], low: dict[str, float], least: dict[str, float]) -> None:
    """The floor of a decision against the bar: the round trips as the same bytes to a script that
    returns 1 (their wall time: the client's packing and parsing, the socket, the server's call),
    the server's least reads and writes beyond that, and the client's own work (the rules, the
    evidence, the records, decoding the snapshot and encoding the write: all of the client's CPU
    but its Redis calls)."""
    us = 1e6 / n
    calls = len(out["calls"])
    trivial = low["server"] / calls * us  # a script call's own server CPU, in the reads' and writes' too
    snaps = sum(1 for a in out["calls"] if a[0] == "snap")
    applies = sum(1 for a in out["calls"] if a[0] == "apply")
    reads = least["reads"] * us - trivial * snaps / n
    writes = least["writes"] * us - trivial * applies / n
    own = (out["cpu"] - out["inside"]) * us
    parts = {label: secs * us for label, secs in out["parts"].items()}
    rules = sum(v for label, v in parts.items() if not label.startswith(("Redis", "snapshot", "write: encode")))
    total = low["wall"] * us + reads + writes + own
    budget = 1e6 / BAR
    print(
        f"    the floor of a decision, us: the round trips (same bytes, a script that returns 1) {low['wall'] * us:,.0f} "
        f"wall; the server's least reads {reads:,.0f} (of which the wide tier's buckets {least['wide'] * us:,.0f}) "
        f"and writes {writes:,.0f}; the client's own work {own:,.0f} (the rules, the evidence and the records "
        f"{rules:,.0f}, the rest decoding and encoding): {total:,.0f} us, {total / budget:.1f}x the bar's "
        f"{budget:,.0f} us ({1e6 / total:,.0f} decisions/s at best, one process)"
    )


if __name__ == "__main__":
    main()
