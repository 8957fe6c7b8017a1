"""What users run today for URL deduplication, at the same URL counts as ``decisions.py``: bytes
per URL and operations per second of scrapy-redis's ``RFPDupeFilter`` (one ``SADD`` of the request's
fingerprint per request, against its own ``redis-server`` on 127.0.0.1: ``used_memory`` growth) and
of scrapy-deltafetch (its spider middleware storing each response that yields an item in its ``dbm``
file: the file's size), each through its own code.

    nice .venv/bin/python benchmarks/scale/peers.py [--urls 1000000] [--json OUT]

(scrapy-redis and scrapy-deltafetch: the ``bench`` extra, ``pip install scrapy-simhash[bench]``.)
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve()
sys.path.insert(0, str(_HERE.parents[2] / "tests"))


def _url(i: int) -> str:
    return f"https://site{i % 97}.example/{i:08d}"  # the URLs of decisions.py


def _timed(fn: Any, urls: int) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return urls / (time.process_time() - cpu), urls / (time.perf_counter() - wall)


def rfp_dupefilter(urls: int) -> dict[str, Any]:
    import redis
    from helpers.redis_servers import RedisServer, redis_server_binary
    from scrapy import Request
    from scrapy_redis.dupefilter import RFPDupeFilter

    binary = redis_server_binary()
    if binary is None:
        sys.exit("no redis-server binary")
    directory = Path(tempfile.mkdtemp(prefix="simhash-peers-redis-"))
    server = RedisServer(binary, directory).start()
    try:
        client = redis.Redis.from_url(server.url)
        before = client.info("memory")["used_memory"]
        dupefilter = RFPDupeFilter(client, "peers:dupefilter")
        requests = (Request(_url(i)) for i in range(urls))
        seen = [0]

        def go() -> None:
            seen[0] = sum(dupefilter.request_seen(r) for r in requests)

        cpu_rate, wall_rate = _timed(go, urls)
        assert seen[0] == 0
        size = client.info("memory")["used_memory"] - before
        client.close()
        return {
            "peer": "scrapy-redis RFPDupeFilter",
            "bytes": size / urls,
            "cpu_per_s": cpu_rate,
            "wall_per_s": wall_rate,
        }
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


def deltafetch(urls: int) -> dict[str, Any]:
    from scrapy import Request, Spider
    from scrapy.http import HtmlResponse
    from scrapy.utils.request import RequestFingerprinter
    from scrapy_deltafetch.middleware import DeltaFetch

    directory = Path(tempfile.mkdtemp(prefix="simhash-peers-deltafetch-"))
    try:
        middleware = DeltaFetch(str(directory), reset=True, stats=None)
        middleware.fingerprint = RequestFingerprinter().fingerprint
        spider = Spider("peers")
        middleware.spider_opened(spider)

        def go() -> None:
            for i in range(urls):
                response = HtmlResponse(_url(i), body=b"", request=Request(_url(i)))
                for _ in middleware.process_spider_output(response, [{"n": i}], spider):
                    pass

        cpu_rate, wall_rate = _timed(go, urls)
        middleware.spider_closed(spider)
        size = sum(p.stat().st_size for p in directory.iterdir())
        kind = type(middleware.db).__module__
        return {
            "peer": f"scrapy-deltafetch ({kind})",
            "bytes": size / urls,
            "cpu_per_s": cpu_rate,
            "wall_per_s": wall_rate,
        }
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--deltafetch-urls", type=int, help="scrapy-deltafetch's count (default: --urls)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = []
    for run, urls in ((rfp_dupefilter, args.urls), (deltafetch, args.deltafetch_urls or args.urls)):
        row = run(urls)
        row["urls"] = urls
        rows.append(row)
        print(
            f"{row['peer']:34} {urls:>10,} URLs  {row['bytes']:>6,.0f} B/URL  "
            f"{row['cpu_per_s']:>8,.0f}/s CPU  {row['wall_per_s']:>8,.0f}/s wall",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
