"""The HTTP API on a real uvicorn server in a thread, on a free loopback port, for tests that speak HTTP to it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import uvicorn
from fastapi import FastAPI

from agrag.service.server.http_server import bind


@contextmanager
def uvicorn_in_thread(app: FastAPI, timeout: float = 60.0) -> Iterator[str]:
    """Serve ``app`` until the block ends; yield its base URL once it answers ``/readyz``."""
    bound = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [bound.sock]}, daemon=True)
    thread.start()
    try:
        wait_ready(bound.url, timeout)
        yield bound.url
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        bound.sock.close()


def wait_ready(url: str, timeout: float = 60.0) -> None:
    """Poll ``/readyz`` until it answers 200."""
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=url, timeout=5) as client:
        while True:
            try:
                if client.get("/readyz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} was not ready within {timeout} s")
            time.sleep(0.05)
