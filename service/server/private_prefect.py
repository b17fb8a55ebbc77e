"""``PrivatePrefectServer``: a Prefect API only this process uses, which dies with it, even on kill -9.

Without ``PREFECT_API_URL`` Prefect would start its own temporary server on the first flow call: a plain child
process stopped by ``atexit``, so a server killed with SIGKILL (or ended by an unhandled SIGTERM) leaves it running
as an orphan. ``agrag serve`` starts this one instead, from its ingestion worker thread: the same uvicorn command,
run through a tiny launcher that sets ``PR_SET_PDEATHSIG`` before it ``exec``s, so the kernel ends the child when the
thread that started it ends (the worker ends last, at shutdown) or the whole process dies. The listening socket is
bound here and handed over (``--fd``), so the URL is known before the child starts and no port can be taken in
between. Its ``PREFECT_HOME`` (database and logs) lies in the data dir and is reused by the next start, which then
skips Prefect's database migrations.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import prefect
from prefect.events.worker import EventsWorker
from prefect.logging.handlers import APILogWorker

logger = logging.getLogger(__name__)

HOME_FOLDER = "prefect-server"  # inside the data dir

# The child runs this first: the kernel sends it SIGTERM when the spawning thread of the parent ends (PDEATHSIG
# survives exec); it gives up if the parent died before that took effect. No preexec_fn: it is not safe with threads.
_LAUNCHER = (
    "import ctypes, os, signal, sys\n"
    "if ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0) != 0: sys.exit(70)\n"
    "if os.getppid() != int(sys.argv[1]): sys.exit(71)\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)


class PrivatePrefectServerError(RuntimeError):
    """The private Prefect server did not start (the message says why and where its log is)."""


class PrivatePrefectServer:
    """A Prefect API server for the flows of this process alone: no UI, bound to a loopback port, dies with us.

    Usage:
        ```python
        server = PrivatePrefectServer(data_dir / HOME_FOLDER)
        url = server.start()          # from a thread that lives as long as the flows run (it is the child's parent)
        with temporary_settings(updates={PREFECT_API_URL: url}):
            ingest_flow(...)
        server.stop()
        ```
    """

    def __init__(self, home: Path, startup_timeout: float = 90.0) -> None:
        """Keep the server's files in ``home``; wait up to ``startup_timeout`` seconds for it to answer."""
        self.home = Path(home)
        self.startup_timeout = startup_timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._url = ""

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs."""
        return self._process.pid if self._process is not None and self._process.poll() is None else None

    @property
    def url(self) -> str:
        """Its API URL once started."""
        return self._url

    def start(self, cancelled: threading.Event | None = None) -> str:
        """Start the server and wait until it answers; return its API URL (``http://127.0.0.1:PORT/api``).

        Call it from the thread that runs the flows: the server ends when that thread ends.

        Raises:
            PrivatePrefectServerError: it exited, did not answer in time, or ``cancelled`` was set meanwhile.
        """
        if self.pid is not None:
            return self._url
        self.home.mkdir(parents=True, exist_ok=True)
        sock = socket.create_server(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            "--app-dir",
            str(Path(prefect.__file__).parent.parent),
            "--factory",
            "prefect.server.api.server:create_app",
            "--fd",
            str(sock.fileno()),
            "--log-level",
            "error",
            "--lifespan",
            "on",
        ]
        log = (self.home / "server.log").open("ab")
        started = time.monotonic()
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-c", _LAUNCHER, str(os.getpid()), *command],
                env=self._environment(),
                pass_fds=[sock.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        finally:
            sock.close()  # the child has its own copy
            log.close()
        self._url = f"http://127.0.0.1:{port}/api"
        self._wait_until_up(started, cancelled)
        logger.info(
            "Started a private Prefect server for ingestion runs (pid %s, %.1f s)", self.pid, time.monotonic() - started
        )
        return self._url

    def stop(self, timeout: float = 5.0) -> None:
        """Send the logs and events still queued for it, then stop the server (SIGTERM; SIGKILL after ``timeout``)."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        # else Prefect sends them at exit, to a server that is gone: "--- Error logging to API ---"
        APILogWorker.drain_all(timeout=timeout)
        EventsWorker.drain_all(timeout=timeout)
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def _environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_API_", "PREFECT_UI_"))}
        return env | {
            "PREFECT_HOME": str(self.home),
            "PREFECT_API_DATABASE_CONNECTION_URL": f"sqlite+aiosqlite:///{self.home / 'prefect.db'}",
            "PREFECT_UI_ENABLED": "0",
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "DO_NOT_TRACK": "1",
            # as Prefect's own temporary server: no UI, only the services a short-lived server needs
            "PREFECT__SERVER_EPHEMERAL": "1",
            "PREFECT__SERVER_FINAL": "1",
        }

    def _wait_until_up(self, started: float, cancelled: threading.Event | None) -> None:
        assert self._process is not None
        with httpx.Client(timeout=2.0) as client:
            while True:
                code = self._process.poll()
                if code is not None:
                    self._process = None
                    raise PrivatePrefectServerError(
                        f"The private Prefect server for ingestion runs exited with code {code} while starting; its "
                        f"log is {self.home / 'server.log'}. Set PREFECT_API_URL to a Prefect server instead."
                    )
                try:
                    if client.get(f"{self._url}/health").status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                if cancelled is not None and cancelled.is_set():
                    self.stop()
                    raise PrivatePrefectServerError("The server is shutting down; the private Prefect server stopped.")
                if time.monotonic() - started > self.startup_timeout:
                    self.stop()
                    raise PrivatePrefectServerError(
                        "The private Prefect server for ingestion runs did not answer within "
                        f"{self.startup_timeout:.0f} s (log: {self.home / 'server.log'}). Set PREFECT_API_URL to a "
                        "running Prefect server instead."
                    )
                time.sleep(0.1)
