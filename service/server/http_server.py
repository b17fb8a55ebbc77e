"""Run the HTTP API on uvicorn over an open runtime until SIGTERM or SIGINT, then shut down in order.

The socket is bound and listening before uvicorn starts (so ``--port 0`` gets a free port whose URL is known, and
goes into the server file at once). On a signal uvicorn stops accepting and lets running requests finish; then the
ingestion queue stops (a running ingestion is interrupted at its next safe point, after the batch it is writing),
the stores close, the data dir's lock is released and the server file removed.
"""

from __future__ import annotations

import logging
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Protocol

import uvicorn

from agrag.pipelines.runtime import Runtime, serving
from agrag.service.api.access import AccessPolicy, is_loopback
from agrag.service.api.allowed_hosts import BindAddress
from agrag.service.api.app import create_app
from agrag.service.api.dependencies import RunQueue
from agrag.service.server.ingestion_queue import IngestionQueue
from agrag.service.server.private_prefect import HOME_FOLDER, PrivatePrefectServer
from agrag.service.server.served_deployment import ServedDeployment, prefect_api_answers
from agrag.service.server.server_file import remove_server_file, write_server_file

logger = logging.getLogger(__name__)

GRACEFUL_REQUEST_SECONDS = 10  # how long running requests may take to finish after a signal


class ServedQueue(RunQueue, Protocol):
    """The ingestion queue as the server runs it: started with the server, stopped after it."""

    def start(self) -> None:
        """Start the worker thread."""
        ...

    def shutdown(self, timeout_seconds: float) -> None:
        """Stop: a running run is interrupted at its next safe point."""
        ...


@dataclass(frozen=True)
class Bound:
    """A listening socket, the URL a client on this machine reaches it at, and ``--host`` as given."""

    sock: socket.socket
    url: str
    host: str

    @property
    def address(self) -> BindAddress:
        """Where it listens, as the Host check derives the server's names from it: ``--host`` and the port."""
        return BindAddress(self.host, int(self.sock.getsockname()[1]))


def bind(host: str, port: int) -> Bound:
    """Bind and listen on ``host:port`` (port 0: any free port).

    Raises:
        OSError: the address is in use or cannot be bound (the message names it).
    """
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = found[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise OSError(exc.errno, f"Cannot listen on {host}:{port}: {exc.strerror}") from None
    bound_host, bound_port = sock.getsockname()[:2]
    reach = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(bound_host, bound_host)
    shown = f"[{reach}]" if ":" in reach else reach
    return Bound(sock, f"http://{shown}:{bound_port}", host)


def serve(
    runtime: Runtime,
    access: AccessPolicy,
    bound: Bound,
    owner_token: str,
    *,
    queue: ServedQueue | None = None,
    shutdown_seconds: float = 30.0,
    on_started: Callable[[str], None] | None = None,
    mcp_writes: bool = False,
    started: float | None = None,
) -> None:
    """Serve the API on ``bound`` until a signal, then stop everything, whatever happens (closes ``runtime``).

    Args:
        runtime: The open data dir; closed (and its lock released) on the way out.
        access: The tokens, including ``owner_token``.
        bound: The listening socket and its URL.
        owner_token: The server's local token, written into the server file for the CLI.
        queue: The ingestion queue; started here, stopped after uvicorn.
        shutdown_seconds: How long a running ingestion may take to reach its next safe point on shutdown.
        on_started: Called with the URL once the server file is written.
        mcp_writes: Offer the MCP write tools (ingest, delete_document) at /mcp to unscoped tokens.
        started: ``time.perf_counter()`` when the command started, for the "Ready" log line.
    """
    remote = not is_loopback(bound.sock.getsockname()[0])
    app = create_app(
        runtime, access, queue=queue, remote=remote, mcp_writes=mcp_writes, started=started, bind=bound.address
    )
    config = uvicorn.Config(
        app,
        log_config=None,  # agrag's logging: one access line per request, without tokens (see AccessLog)
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=GRACEFUL_REQUEST_SECONDS,
        server_header=False,
    )
    server = uvicorn.Server(config)
    try:
        with serving(runtime), _signals_kept():
            if queue is not None:
                queue.start()
            write_server_file(runtime.data_dir, bound.url, owner_token)
            if on_started is not None:
                on_started(bound.url)
            server.run(sockets=[bound.sock])
    finally:
        _stop(runtime, queue, shutdown_seconds)
        bound.sock.close()


def _stop(runtime: Runtime, queue: ServedQueue | None, shutdown_seconds: float) -> None:
    """Stop the queue, close the stores (releasing the lock), remove the server file: each even if one fails."""
    try:
        if queue is not None:
            logger.info("Stopping the ingestion queue (up to %.0f s)", shutdown_seconds)
            queue.shutdown(shutdown_seconds)
    finally:
        try:
            with runtime.store.exclusive():  # a request still running (past the graceful time) finishes first
                runtime.close()
        finally:
            remove_server_file(runtime.data_dir)
            logger.info("Stopped; the data dir %s is free", runtime.data_dir)


@contextmanager
def _signals_kept() -> Iterator[None]:
    """Keep SIGTERM and SIGINT from ending the process after uvicorn's graceful stop, before the stores close.

    uvicorn handles both signals while it runs, then raises the signal again under the handler it found; with the
    default handlers that would end the process (or raise KeyboardInterrupt) before the queue and the stores stop.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only; whoever runs this thread stops the server
        return
    received: list[int] = []

    def remember(sig: int, frame: FrameType | None) -> None:
        received.append(sig)

    previous = {sig: signal.signal(sig, remember) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def open_queue(runtime: Runtime, deployment: str | None = None) -> ServedQueue:
    """The ingestion queue of the served runtime, recording its runs in the data dir's run registry.

    With a Prefect server answering at ``PREFECT_API_URL`` the runs are flows of that server (its UI shows them) and
    this process serves the deployment ``deployment`` (None: none). Otherwise they run against a private Prefect
    server that keeps its files in the data dir and dies with this process.
    """
    if not prefect_api_answers():
        private = PrivatePrefectServer(runtime.data_dir / HOME_FOLDER)
        return IngestionQueue(runtime, runtime.runs, private_prefect=private)
    queue = IngestionQueue(runtime, runtime.runs)
    if deployment:
        queue.add_feeder(ServedDeployment(queue, deployment, runtime.data_dir))
    return queue
