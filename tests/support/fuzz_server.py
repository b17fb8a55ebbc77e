"""A real ``agrag serve`` in a child process for the fuzz suite, with secrets in its environment to look for.

The server runs as a user runs it (``agrag serve --allow-write``, tokens from ``AGRAG_API_TOKENS``, a files root),
in a child process, so a segfault is a dead server the suite reports, not a dead pytest. Its environment is the
test process's (a deployment's bag of variables: PATH, HOME, CA bundle paths...) with a canary variable whose value
appears nowhere else, an admin token, a token scoped to two documents and an LLM API key.

What counts as a secret (``FuzzServer.secrets``): every value of the server's real environment (read back from
``/proc/<pid>/environ``), each ``:``-separated part of one (PATH entries), and each token of ``AGRAG_API_TOKENS``,
that is at least 5 characters long and not a plain word or number (``False``, ``WARNING``, ``90`` are no secret and
occur in ordinary text); plus the server's local owner token. Public, so left out: the data dir, the files root and
the server's working directory, and any value inside one of those paths (``/tmp``), because status, run reports and
store errors name them to an admin on purpose.
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.support.drained_process import DrainedProcess
from tests.support.hostile_values import CANARY_NAME
from tests.support.served_api import wait_ready

AGRAG = str(Path(sys.executable).with_name("agrag"))
CANARY_MARK = "c4n4ry"
MIN_SECRET_CHARS = 5
TRACEBACK = "Traceback (most recent call last):"


@dataclass(frozen=True)
class Caller:
    """A token the suite sends: the admin's (unscoped) or one limited to ``documents``."""

    name: str
    token: str
    documents: tuple[str, ...] = ()

    @property
    def headers(self) -> dict[str, str]:
        """The Authorization header of its requests."""
        return {"Authorization": f"Bearer {self.token}"}


class FuzzServer:
    """``agrag serve`` on ``data_dir`` in a child process; ``ensure`` starts it again after it died."""

    def __init__(
        self, data_dir: Path, files_root: Path, workdir: Path, scope: tuple[str, ...], prefect_api_url: str
    ) -> None:
        self.data_dir, self.files_root, self.workdir = data_dir, files_root, workdir
        self.canary = f"{CANARY_MARK}-{secrets.token_hex(12)}"
        self.admin = Caller("admin", f"adm-{secrets.token_hex(16)}")
        self.team = Caller("team", f"team-{secrets.token_hex(16)}", scope)
        self.llm_key = f"sk-fuzz{secrets.token_hex(16)}"
        tokens = [{"name": "admin", "token": self.admin.token}]
        tokens.append({"name": "team", "token": self.team.token, "documents": list(scope)})
        inherited = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("AGRAG_", "RETRIEVAL_", "PYTEST_")) and k not in ("OLDPWD", "COLUMNS", "LINES")
        }
        self.env = {
            **inherited,
            "PWD": str(workdir),
            CANARY_NAME: self.canary,
            "AGRAG_DATA_DIR": str(data_dir),
            "AGRAG_FILES_ROOT": str(files_root),
            "AGRAG_API_TOKENS": json.dumps(tokens),
            "AGRAG_LLM_API_KEY": self.llm_key,
            "PREFECT_API_URL": prefect_api_url,
        }
        self.url = ""
        self.starts = 0
        self.secrets: dict[str, str] = {}
        self._drained: DrainedProcess | None = None
        self._logs: list[str] = []

    @property
    def callers(self) -> tuple[Caller, Caller]:
        """The admin and the scoped caller."""
        return self.admin, self.team

    @property
    def process(self) -> subprocess.Popen[str]:
        """The running (or last) server process."""
        assert self._drained is not None, "the server was never started"
        return self._drained.process

    def start(self, timeout: float = 120) -> None:
        """Start the server and wait until it answers ``/readyz``; read its environment for the secrets."""
        process = subprocess.Popen(
            [AGRAG, "serve", "--port", "0", "--allow-write", "--deployment", "", "--shutdown-timeout", "5"],
            cwd=self.workdir,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._drained = DrainedProcess(process)
        self.starts += 1
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._drained.lines.get(timeout=0.2)
            except queue.Empty:
                if process.poll() is not None:
                    raise RuntimeError(f"agrag serve exited with {process.returncode}: {self.log_tail()}") from None
                continue
            if " at http://" in line:
                self.url = line.split(" at ", 1)[1].split(" ", 1)[0]
                wait_ready(self.url, timeout=max(1.0, deadline - time.monotonic()))
                self.secrets = self._secrets(process.pid)
                return
        raise TimeoutError(f"agrag serve printed no URL within {timeout} s: {self.log_tail()}")

    def death(self) -> str | None:
        """None while it serves; else how it ended (the signal of a crash) and the end of its log."""
        if self._drained is not None and self.process.poll() is None:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=10).status_code == 200:
                    return None
                return f"/healthz does not answer 200; log: {self.log_tail()}"
            except httpx.HTTPError as exc:
                return f"/healthz failed ({type(exc).__name__}); log: {self.log_tail()}"
        code = self.process.returncode
        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        return f"the server died ({how}); log: {self.log_tail()}"

    def ensure(self) -> None:
        """Start it again (on the same data dir) if it died or hangs."""
        if self._drained is None:
            self.start()
        elif self.death() is not None:
            self.stop()
            self.start()

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it has not stopped within 30 s; keep its log."""
        if self._drained is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self._drained.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self._drained.wait(30)
        else:
            self._drained.wait(30)
        self._logs.append(self._drained.stderr)

    def log(self) -> str:
        """Everything every server process wrote to stderr so far."""
        current = [self._drained.stderr] if self._drained is not None and self.process.poll() is None else []
        return "".join(self._logs + current)

    def log_tail(self, lines: int = 6) -> str:
        """The last lines of the current process's stderr, on one line."""
        text = self._drained.stderr if self._drained is not None else ""
        return " | ".join(text.strip().splitlines()[-lines:])

    def logged_exceptions(self) -> Counter[str]:
        """How often each exception line ends a traceback in the log of every process so far."""
        found: Counter[str] = Counter()
        for block in self.log().split(TRACEBACK)[1:]:
            raised = [line for line in block.splitlines() if line.strip() and not line.startswith(" ")]
            found[raised[0][:160] if raised else "?"] += 1
        return found

    def log_mark(self) -> int:
        """Where the current process's log ends now (for ``last_traceback``)."""
        return len(self._drained.stderr) if self._drained is not None else 0

    def last_traceback(self, since: int = 0) -> str:
        """The frame and the exception of the last traceback the log shows after ``since`` ('' if none): why a
        call failed, when the server logged it."""
        text = self._drained.stderr[since:] if self._drained is not None else ""
        if TRACEBACK not in text:
            return ""
        lines = text.rsplit(TRACEBACK, 1)[1].splitlines()
        frames = [line.strip() for line in lines if line.strip().startswith("File ")]
        raised = next((line for line in lines if line.strip() and not line.startswith(" ")), "")
        return f"{frames[-1] if frames else ''} {raised}".strip()

    def _secrets(self, pid: int) -> dict[str, str]:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
        environ = dict(
            entry.decode("utf-8", "surrogateescape").split("=", 1) for entry in raw.split(b"\0") if b"=" in entry
        )
        public = (str(self.data_dir), str(self.files_root), str(self.workdir))
        found: dict[str, str] = {}
        for name, value in environ.items():
            for part in _parts(value):
                if _secret_like(part) and not any(part in text for text in public):
                    found.setdefault(part, name)
        owner = json.loads((self.data_dir / ".agrag.server.json").read_text(encoding="utf-8"))["token"]
        found[owner] = "the server's owner token"
        found[CANARY_MARK] = CANARY_NAME  # a cut-off echo of the canary still holds its mark
        return found


def _parts(value: str) -> list[str]:
    """The value, its parts if it is a list of paths (PATH), and the tokens of a token list in JSON."""
    paths = [part for part in value.split(os.pathsep) if part]
    parts = [value, *paths] if len(paths) > 1 and all(p.startswith("/") for p in paths) else [value]
    try:
        listed = json.loads(value)
    except ValueError:
        return parts
    if isinstance(listed, list):
        parts += [str(entry["token"]) for entry in listed if isinstance(entry, dict) and "token" in entry]
    return parts


def _secret_like(value: str) -> bool:
    return len(value) >= MIN_SECRET_CHARS and not value.isalpha() and not value.isdigit()
