"""Environment defaults the CLI sets before Haystack, Prefect or transformers are imported."""

from __future__ import annotations

import logging
import os
from pathlib import Path

OFFLINE_DEFAULTS = {
    "HAYSTACK_TELEMETRY_ENABLED": "False",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "DO_NOT_TRACK": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    # Prefect's local server takes 8-13 s to start on a small machine; its default timeout is too short.
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "TRANSFORMERS_VERBOSITY": "error",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
}


_DEFAULTED: set[str] = set()


def apply_offline_defaults() -> None:
    """Set each default unless the user already set that variable: agrag never phones home and needs no hub."""
    for key, value in OFFLINE_DEFAULTS.items():
        if key not in os.environ:
            os.environ[key] = value
            _DEFAULTED.add(key)
    ensure_prefect_home()


def log_served_runs_at_info() -> None:
    """Served runs log at INFO (unless the user chose a level), so the Prefect UI shows each phase's messages.

    The CLI's own runs stay at WARNING: it prints its summary itself.
    """
    if "PREFECT_LOGGING_LEVEL" in _DEFAULTED:
        os.environ["PREFECT_LOGGING_LEVEL"] = "INFO"


def ensure_prefect_home() -> None:
    """Create ``PREFECT_HOME`` if it is set and missing.

    Prefect does not create missing parent folders: its local server then never starts, and the run fails only after
    the whole startup timeout with a message about connecting.
    """
    home = os.environ.get("PREFECT_HOME")
    if home:
        Path(home).expanduser().mkdir(parents=True, exist_ok=True)


def quiet_prefect_run_loggers() -> None:
    """The CLI explains agrag's own errors itself; Prefect's copy of the traceback would only bury that message."""
    for name in ("prefect.flow_runs", "prefect.task_runs"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
