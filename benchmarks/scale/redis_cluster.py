"""Where an index's bytes go on a real three-node Redis Cluster: the real pages through the real
``ChangeTracker.observe`` (``benchmarks/scale/bytes_per_url.py``'s pages and mix: 75% kept, 25%
near-duplicates), then per node the bytes of the index's own slot, of the record shards and of the
evidence (``MEMORY USAGE`` of every key), and the slots the record shards hold (``CLUSTER KEYSLOT``)
against the index's (``CLUSTER COUNTKEYSINSLOT``).

    nice .venv/bin/python benchmarks/scale/redis_cluster.py [--urls 10000]
    PYTHONPATH=<another checkout> nice .venv/bin/python benchmarks/scale/redis_cluster.py   # before/after

Three fresh ``redis-server`` processes in cluster mode on 127.0.0.1 (``redis_bench.fresh_cluster``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

_HERE = Path(__file__).resolve()
if "PYTHONPATH" not in os.environ:
    sys.path.insert(0, str(_HERE.parents[2]))
sys.path.insert(0, str(_HERE.parents[2] / "tests"))
sys.path.insert(0, str(_HERE.parent))

import redis
from bytes_per_url import base_pages, run
from redis.cluster import RedisCluster
from redis_bench import fresh_cluster

from scrapy_simhash.store.index import SimhashIndex
from scrapy_simhash.store.redisstore import RedisStore


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=10_000)
    args = parser.parse_args()
    with fresh_cluster("redis-cluster") as nodes:
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


if __name__ == "__main__":
    main()
