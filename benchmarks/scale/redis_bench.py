"""The Redis benchmarks' servers: a fresh ``redis-server`` (or three-node cluster) on 127.0.0.1 in a
temporary folder, stopped and deleted on exit, and the ``INFO`` figures the benchmarks read."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

import redis
from helpers.redis_servers import RedisServer, redis_server_binary

if TYPE_CHECKING:
    from collections.abc import Iterator


def binary() -> str:
    """``redis-server``'s path; exits where there is none."""
    found = redis_server_binary()
    if found is None:
        sys.exit("no redis-server binary")
    return found


@contextmanager
def fresh_server(name: str, **kwargs: Any) -> Iterator[RedisServer]:
    """A fresh ``redis-server`` (no persistence; ``kwargs``: :class:`RedisServer`'s), its folder
    ``simhash-<name>-*`` deleted with it."""
    directory = Path(tempfile.mkdtemp(prefix=f"simhash-{name}-"))
    server = RedisServer(binary(), directory, **kwargs).start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def fresh_cluster(name: str) -> Iterator[list[RedisServer]]:
    """Three fresh cluster-mode servers, their slots split in three by ``redis-cli --cluster create``."""
    path = binary()
    cli = shutil.which("redis-cli", path=os.path.dirname(path)) or shutil.which("redis-cli")
    if cli is None:
        sys.exit("no redis-cli binary")
    directory = Path(tempfile.mkdtemp(prefix=f"simhash-{name}-"))
    nodes = [RedisServer(path, directory / f"n{i}", cluster=True) for i in range(3)]
    try:
        for node in nodes:
            node.start()
        subprocess.run(
            [cli, "--cluster", "create", *(f"127.0.0.1:{n.port}" for n in nodes), "--cluster-yes"],
            check=True,
            capture_output=True,
            timeout=60,
        )
        clients = [redis.Redis(port=n.port) for n in nodes]
        while not all(b"cluster_state:ok" in c.execute_command("CLUSTER", "INFO") for c in clients):
            time.sleep(0.05)
        for c in clients:
            c.close()
        yield nodes
    finally:
        for node in nodes:
            node.stop()
        shutil.rmtree(directory, ignore_errors=True)


def used_memory(client: Any) -> int:
    """The server's ``used_memory`` (``INFO memory``)."""
    return int(client.info("memory")["used_memory"])


def cpu_seconds(client: Any) -> float:
    """The server's CPU seconds so far, user and system (``INFO cpu``)."""
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def evicted_keys(client: Any) -> int:
    """The keys the server evicted since it started (``INFO stats``)."""
    return int(client.info("stats")["evicted_keys"])


def evalsha_stats(client: Any) -> dict[str, Any]:
    """``EVALSHA``'s calls and ``usec_per_call`` since the last ``CONFIG RESETSTAT`` (``INFO commandstats``)."""
    return dict(client.info("commandstats").get("cmdstat_evalsha", {}))
