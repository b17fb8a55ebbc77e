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

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import prefect
from prefect.events.worker import EventsWorker
from prefect.logging.handlers import APILogWorker
from prefect.settings import (
    PREFECT_API_URL,
    PREFECT_HOME,
    PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS,
    temporary_settings,
)

from agrag.service.server.prefect_home_template import DATABASE, PrefectHomeTemplate

logger = logging.getLogger(__name__)

HOME_FOLDER = "prefect-server"  # inside the data dir

# The child runs this first: the kernel sends it SIGTERM when the spawning thread of the parent ends (PDEATHSIG
# survives exec); it gives up if the parent died before that took effect. No preexec_fn: it is not safe with threads.
_LAUNCHER = (
    "import ctypes, os, signal, sys\n"
    "if sys.platform.startswith('linux') and ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0):\n"
    "    sys.exit(70)\n"
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

    def __init__(self, home: Path, startup_timeout: float = 90.0, template: PrefectHomeTemplate | None = None) -> None:
        """Keep the server's files in ``home``; wait up to ``startup_timeout`` seconds for it to answer.

        A new ``home`` starts from ``template`` (default: ``PrefectHomeTemplate()``, a migrated database per Prefect
        version in ``~/.cache/agrag/prefect``), and the first new home of a Prefect version makes it.
        """
        self.home = Path(home)
        self.template = template or PrefectHomeTemplate()
        self.startup_timeout = startup_timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._url = ""
        self._launched = (0.0, False)  # when it was launched, and whether its home becomes the template once up
        self._up = False

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
        self.launch()
        return self.wait_until_up(cancelled)

    def launch(self) -> str:
        """Start the server process and return its API URL at once; ``wait_until_up`` before the first request.

        Call it from the thread that runs the flows: the server ends when that thread ends.
        """
        if self._process is not None and self._process.poll() is None:
            return self._url
        self._up = False
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
        reap_orphans(self.home)
        # only a home with no database yet is seeded or becomes the template: a used one holds this data dir's runs
        new_home = not (self.home / DATABASE).exists()
        seeded = new_home and self.template.seed(self.home)
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
                # Its own session: Ctrl+C in a terminal, `timeout` or a supervisor signal the whole process group,
                # and a server that stopped first left the run's last state changes and events nowhere to go (two
                # tracebacks and 100 s of retries). This process stops it when its flows are done; PDEATHSIG ends it
                # if this process dies first.
                start_new_session=True,
            )
        finally:
            sock.close()  # the child has its own copy
            log.close()
        _record(self.home, self._process.pid)
        self._url = f"http://127.0.0.1:{port}/api"
        self._launched = (started, new_home and not seeded)
        return self._url

    def wait_until_up(self, cancelled: threading.Event | None = None) -> str:
        """Wait until the launched server answers; return its API URL.

        Raises:
            PrivatePrefectServerError: it exited, did not answer in time, or ``cancelled`` was set meanwhile.
        """
        if self._up:
            return self._url
        started, makes_template = self._launched
        self._wait_until_up(started, cancelled)
        self._up = True
        if makes_template:
            self.template.keep(self.home)
        logger.info(
            "Started a private Prefect server for ingestion runs (pid %s, %.1f s)", self.pid, time.monotonic() - started
        )
        return self._url

    def stop(self, timeout: float = 5.0) -> None:
        """Send the logs and events still queued for it, then stop the server (SIGTERM; SIGKILL after ``timeout``)."""
        process, self._process = self._process, None
        self._up = False
        if process is None:
            return
        _records(self.home).joinpath(f"{process.pid}.json").unlink(missing_ok=True)
        if process.poll() is not None:
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
            "PREFECT_API_DATABASE_CONNECTION_URL": f"sqlite+aiosqlite:///{self.home / DATABASE}",
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
                    _records(self.home).joinpath(f"{self._process.pid}.json").unlink(missing_ok=True)
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


@contextmanager
def private_prefect_api(home: Path | None = None) -> Iterator[str]:
    """A Prefect API for the flows this thread runs in the block: ``PREFECT_API_URL`` if set, else a private server.

    The in-process CLI (``agrag ingest``, ``agrag delete``, an ``agrag eval`` store build) runs its flows inside this
    block instead of letting Prefect start its own temporary server, which outlives a kill -9 of the command. The
    private server keeps Prefect's usual files (``PREFECT_HOME``: its database and ``server.log``), dies with this
    thread or process, and is stopped when the block ends. Call it from the thread that runs the flows.

    Raises:
        PrivatePrefectServerError: the private server did not start.
    """
    with starting_prefect_api(home) as ready:
        yield ready()


@contextmanager
def starting_prefect_api(home: Path | None = None) -> Iterator[Callable[[], str]]:
    """``private_prefect_api`` that does not wait: the server starts loading now, and the block gets ``ready``.

    ``ready()`` waits until the API answers and returns its URL; call it before the first flow. A command that still
    has seconds of imports and input checks ahead starts the server first: both load at once on two cores
    (``agrag ingest`` with nothing new: 7.7-8.1 s instead of 9.7-10.7 s here). ``PREFECT_API_URL`` is set for the
    whole block.

    Raises:
        PrivatePrefectServerError: (from ``ready``) the private server did not start.
    """
    configured = PREFECT_API_URL.value()
    if configured:
        yield lambda: str(configured)
        return
    server = PrivatePrefectServer(
        Path(home or PREFECT_HOME.value()).expanduser(),
        float(PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.value()),
    )
    url = server.launch()
    try:
        with temporary_settings(updates={PREFECT_API_URL: url}):
            yield server.wait_until_up
    finally:
        server.stop()


def _records(home: Path) -> Path:
    return home / "agrag-servers"


def _proc_stat(pid: int) -> tuple[int, int] | None:
    """``(parent pid, start time in clock ticks)`` of a running process, or None (gone, or no ``/proc`` here)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces and parentheses
    return int(fields[1]), int(fields[19])


def _record(home: Path, pid: int) -> None:
    """Write down the server just started, so that a later start can end it if this process dies without stopping it.

    A record is the pid, its parent (this process) and its start time: a pid reused by another process later does
    not match, so only this very server can be ended by it.
    """
    stat = _proc_stat(pid)
    if stat is None:
        return
    folder = _records(home)
    folder.mkdir(parents=True, exist_ok=True)
    record = {"pid": pid, "parent": os.getpid(), "started": stat[1]}
    (folder / f"{pid}.json").write_text(json.dumps(record), encoding="utf-8")


def reap_orphans(home: Path, timeout: float = 5.0) -> list[int]:
    """End the Prefect servers recorded in ``home`` whose parent is gone (left by a process killed with SIGKILL).

    A recorded server is ended only if it is still that process (same pid and start time, a Prefect server's command
    line) and its parent is no longer the process that started it; a server whose parent still runs is left alone.
    Records of servers already gone are removed. Returns the pids ended.
    """
    ended: list[int] = []
    for path in sorted(_records(home).glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            pid, parent, started = int(record["pid"]), int(record["parent"]), int(record["started"])
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)
            continue
        stat = _proc_stat(pid)
        if stat is not None and stat[0] == parent:
            continue  # its parent still runs it
        if stat is not None and stat[1] == started and _is_prefect_server(pid):
            logger.warning("Ending Prefect server %s, left running by process %s that was killed", pid, parent)
            _end(pid, started, timeout)
            ended.append(pid)
        path.unlink(missing_ok=True)
    return ended


def _is_prefect_server(pid: int) -> bool:
    try:
        return b"prefect.server.api.server:create_app" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _end(pid: int, started: int, timeout: float) -> None:
    """SIGTERM, then SIGKILL after ``timeout`` seconds, while the process is still the one that started then."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            stat = _proc_stat(pid)
            if stat is None or stat[1] != started:
                return
            time.sleep(0.05)
