"""Run real ``agrag`` commands forked from a warm process, and SIGKILL them at a chosen call of a store method.

A kill matrix needs a dozen killed commands; each ``agrag`` process spends 10 to 20 s importing its flows on a busy
two-core machine before it writes anything (3 s of CPU). So every command is forked from one ``multiprocessing``
fork server that imported agrag's flows once (``PRELOAD``): the child runs the CLI's own entry point
(``agrag.service.cli.main``) in-process, as ``agrag ingest ...`` does, with its Prefect flows against the test's
Prefect server, and with a ``kill`` point kills itself with SIGKILL right before or after the n-th call of the named
function: no exception, no cleanup, stores and journals left as they are, as a power cut leaves them. A ``setup``
runs in the child before the command (``tests/support/fill_during_write.py`` fills the disk after a commit batch).

Usage:
    ```python
    code = run_agrag(
        ["ingest", str(folder), "embedder=hashed", "ingest.write_batch_chunks=2"],
        data_dir=tmp_path / "data",
        log=tmp_path / "killed.log",
        kill=KillPoint("agrag.components.stores.pending_vectors:PendingVectors.apply", nth=2, before=True),
    )
    assert code == -signal.SIGKILL
    ```
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import forkserver
from pathlib import Path
from typing import Any

PRELOAD = [
    "agrag.service.cli",
    "agrag.flows.ingest_flow",
    "agrag.flows.delete_flow",
    "agrag.flows.reextract_flow",
    "agrag.pipelines.runtime",
    "agrag.service.server.private_prefect",
    "tests.support.kill_points",
]
_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(PRELOAD)


@dataclass(frozen=True, slots=True)
class KillPoint:
    """Where a command dies: ``module:Class.method`` (or ``module:function``), at its ``nth`` call in the process.

    ``before``: right before that call runs, else right after it returned.
    """

    target: str
    nth: int = 1
    before: bool = False


def run_agrag(
    argv: list[str],
    *,
    data_dir: Path,
    log: Path,
    prefect_api_url: str,
    kill: KillPoint | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 300.0,
    stderr: Path | None = None,
    setup: Callable[[], object] | None = None,
    cwd: Path | None = None,
) -> int:
    """Run ``agrag ARGV`` on ``data_dir`` in a forked child (output to ``log``); return its exit code.

    -9 (``-signal.SIGKILL``) when ``kill`` was reached, ``-signal.SIGBUS`` when the child died of a bus error.
    ``env`` adds environment variables for the command (settings read when it runs, not Prefect's, read at import);
    ``stderr`` takes the command's standard error apart from ``log``; ``setup`` (picklable: a module's function or a
    ``functools.partial`` of one) runs in the child before the command; ``cwd``: its working directory (else the
    fork server's).
    """
    _start_server(prefect_api_url)
    command = _Command(
        argv, str(data_dir), str(log), prefect_api_url, kill, env or {}, stderr and str(stderr), setup, cwd and str(cwd)
    )
    child = _CONTEXT.Process(target=_child, args=(command,), daemon=False)
    child.start()
    child.join(timeout)
    if child.exitcode is None:
        child.kill()
        child.join()
        raise TimeoutError(f"`agrag {' '.join(argv)}` did not end within {timeout} s; its output is in {log}")
    return int(child.exitcode)


def _start_server(prefect_api_url: str) -> None:
    """Start the fork server (once) with ``PREFECT_API_URL`` in its environment.

    Prefect reads its settings from the environment when it is imported, which the fork server does before any
    child exists; this process's own environment is left as it was. So does rich for the CLI's consoles: COLUMNS and
    LINES, which GNU readline puts in the C environment behind ``os.environ`` when imported, would fix their width at
    80 columns (a user's pipe gets ``PIPE_WIDTH``), so the fork server starts without them.
    """
    for key in ("COLUMNS", "LINES"):
        if key not in os.environ:
            os.unsetenv(key)
    before = os.environ.get("PREFECT_API_URL")
    os.environ["PREFECT_API_URL"] = prefect_api_url
    try:
        forkserver.ensure_running()
    finally:
        if before is None:
            del os.environ["PREFECT_API_URL"]
        else:
            os.environ["PREFECT_API_URL"] = before


@dataclass(frozen=True, slots=True)
class _Command:
    argv: list[str]
    data_dir: str
    log: str
    api_url: str
    kill: KillPoint | None
    env: dict[str, str]
    stderr: str | None
    setup: Callable[[], object] | None
    cwd: str | None


def _child(command: _Command) -> None:
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from agrag.service.cli import main

    out = os.open(command.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1)
    err = out if command.stderr is None else os.open(command.stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(err, 2)
    os.environ.update({**command.env, "AGRAG_DATA_DIR": command.data_dir, "PREFECT_API_URL": command.api_url})
    os.environ.pop("COLUMNS", None)
    if command.cwd is not None:
        os.chdir(command.cwd)
    if command.kill is not None:
        _die_at(command.kill)
    if command.setup is not None:
        command.setup()
    sys.argv = ["agrag", *command.argv]
    with temporary_settings(updates={PREFECT_API_URL: command.api_url}):
        main()


def _die_at(kill: KillPoint) -> None:
    module_name, _, qualname = kill.target.partition(":")
    owner: Any = importlib.import_module(module_name)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    original = getattr(owner, name)
    calls = 0

    def dying(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if kill.before and calls == kill.nth:
            os.kill(os.getpid(), signal.SIGKILL)
        result = original(*args, **kwargs)
        if not kill.before and calls == kill.nth:
            os.kill(os.getpid(), signal.SIGKILL)
        return result

    setattr(owner, name, dying)
