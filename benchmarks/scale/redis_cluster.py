"""Where an index's bytes go on a real three-node Redis Cluster: the real pages through the real
``ChangeTracker.observe`` (``benchmarks/scale/bytes_per_url.py``'s pages and mix: 75% kept, 25%
near-duplicates), then per node the bytes of the index's own slot, of the record shards and of the
evidence (``MEMORY USAGE`` of every key), and the slots the record shards hold (``CLUSTER KEYSLOT``)
against the index's (``CLUSTER COUNTKEYSINSLOT``).

    nice .venv/bin/python benchmarks/scale/redis_cluster.py [--urls 10000]
    PYTHONPATH=<another checkout> nice .venv/bin/python benchmarks/scale/redis_cluster.py   # before/after

Three fresh ``redis-server`` processes in cluster mode on 127.0.0.1 (``redis-cli --cluster create``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_HERE = Path(__file__).resolve()
if "PYTHONPATH" not in os.environ:
    sys.path.insert(0, str(_HERE.parents[2]))
sys.path.insert(0, str(_HERE.parents[2] / "tests"))
sys.path.insert(0, str(_HERE.parent))

import redis
from bytes_per_url import base_pages, run
from helpers.redis_servers import RedisServer, redis_server_binary
from redis.cluster import RedisCluster

from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.redisstore import RedisStore


def cluster(binary: str, directory: Path) -> list[RedisServer]:
    """Three cluster-mode servers, their slots split in three by ``redis-cli --cluster create``."""
    nodes = [RedisServer(binary, directory / f"n{i}", cluster=True).start() for i in range(3)]
    cli = shutil.which("redis-cli", path=os.path.dirname(binary)) or shutil.which("redis-cli")
    if cli is None:
        sys.exit("no redis-cli binary")
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
    return nodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=10_000)
    args = parser.parse_args()
    binary = redis_server_binary()
    if binary is None:
        sys.exit("no redis-server binary")
    directory = Path(tempfile.mkdtemp(prefix="simhash-redis-cluster-"))
    nodes = cluster(binary, directory)
    try:
        pages = base_pages()
        store = RedisStore(nodes[0].url, prefix="scale")
        with SimhashIndex(store) as index:
            result = run(index, pages, args.urls)
        client = RedisCluster.from_url(nodes[0].url)
        home = client.get_node_from_key(store.prefix + "meta")
        slot = client.keyslot(store.prefix + "meta")
        parts: dict[str, dict[int, int]] = {"index": {}, "records": {}, "evidence": {}}
        slots: dict[str, set[int]] = {"records": set(), "evidence": set()}
        for node in client.get_primaries():
            direct = redis.Redis(host=node.host, port=node.port)
            for name in direct.scan_iter(count=1000):
                size = direct.memory_usage(name, samples=0) or 0
                part = (
                    "index"
                    if name.startswith(store.prefix.encode())
                    else "evidence"
                    if name.startswith(store.evidence_prefix)
                    else "records"
                )
                parts[part][node.port] = parts[part].get(node.port, 0) + size
                if part != "index":
                    slots[part].add(client.keyslot(name))
            direct.close()
        in_slot = client.execute_command("CLUSTER COUNTKEYSINSLOT", slot, target_nodes=home)
        print(
            f"scrapy_simhash from {Path(sys.modules['scrapy_simhash'].__file__ or '').parent}; {args.urls:,} URLs "
            f"in {result['seconds']:.0f} s ({args.urls / result['seconds']:,.0f} decisions/s): {result['verdicts']}"
        )
        print(f"the index's slot {slot} on :{home.port}: {in_slot} keys")
        for part, by_node in parts.items():
            spread = ", ".join(f":{port} {b / args.urls:,.0f}" for port, b in sorted(by_node.items()))
            where = "" if part == "index" else f", in {len(slots[part]):,} slots"
            print(f"  {part}: {sum(by_node.values()) / args.urls:,.0f} B/URL ({spread}{where})")
        client.close()
    finally:
        for node in nodes:
            node.stop()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
