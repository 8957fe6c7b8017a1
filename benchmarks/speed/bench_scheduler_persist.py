"""Two crawlers on one Redis with scrapy-redis, with scrapy-redis's SCHEDULER_PERSIST False and True.

Run: ``.venv/bin/python benchmarks/speed/bench_scheduler_persist.py [--delay 0.05]``

The README's distributed-crawl settings (scrapy-redis's scheduler and dupefilter, the RedisStore
index) in two ``scrapy crawl site`` processes of the demo project, started together against the
demo site served on 127.0.0.1 (``--delay`` seconds per response, so that the crawls overlap) and a
redis-server that this script starts on a free loopback port. Printed, for each value of
``SCHEDULER_PERSIST``: the requests each process fetched and their sum, beside the site's URLs
(the sum with ``True``). With ``False``, a crawler whose spider closes (the second one at once: its
start request is a duplicate of the first one's) deletes the shared queue and seen requests, and
the other one fetches again what it meets.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "example_project"))

import demo
from helpers.redis_servers import RedisServer, redis_server_binary

SETTINGS = {
    "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
    "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
    "SIMHASH_STORE": "scrapy_simhash.store.RedisStore",
    "CONCURRENT_REQUESTS": "2",
    "LOG_LEVEL": "INFO",
}


def crawl(start_url: str, redis_url: str, persist: bool, index_dir: Path) -> subprocess.Popen[str]:
    settings = {**SETTINGS, "REDIS_URL": redis_url, "SCHEDULER_PERSIST": str(persist), "SIMHASH_DIR": str(index_dir)}
    command = [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"start_url={start_url}"]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    return subprocess.Popen(
        command, cwd=REPO / "example_project", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )


def requests_of(log: str) -> int:
    match = re.search(r"'downloader/request_count': (\d+)", log)
    return int(match.group(1)) if match else 0  # a crawler that fetched nothing has no such stat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--delay", type=float, default=0.05)
    args = parser.parse_args()
    binary = redis_server_binary()
    if binary is None:
        sys.exit("redis-server not found (./dev bench installs it)")
    for persist in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            server = RedisServer(binary, Path(tmp) / "redis").start()
            try:
                with demo.SiteServer(delay=args.delay) as site:
                    procs = [crawl(site.url("/index.html"), server.url, persist, Path(tmp)) for _ in range(2)]
                    logs = [proc.communicate(timeout=600)[1] for proc in procs]
                    if any(proc.returncode for proc in procs):
                        sys.exit(f"a crawl failed:\n{logs[0][-2000:]}\n{logs[1][-2000:]}")
            finally:
                server.stop()
        counts = [requests_of(log) for log in logs]
        print(f"SCHEDULER_PERSIST = {persist!s:5}: requests {counts[0]} + {counts[1]} = {sum(counts)}")


if __name__ == "__main__":
    main()
