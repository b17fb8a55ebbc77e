"""The CLI as a client of `agrag serve`, and `agrag mcp` forwarding to it, load no model library: Haystack imports
torch (about a second), and these processes only send requests, so each call starts in under a second."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# What `agrag search/status/evidence/...` import when a server holds the data dir, and what `agrag mcp` imports
# before it forwards (its options, its log lines, the forwarder).
CLIENT_MODULES = (
    "agrag.service.cli",
    "agrag.service.client.server_client",
    "agrag.service.mcp_command",
    "agrag.pipelines.settings",
    "agrag.components.loaders.files_root",
    "agrag.service.mcp.stdio",
    "agrag.service.mcp.server",
    "agrag.service.server.log_lines",
    "agrag.service.mcp.forward",
)
HEAVY = ("haystack", "torch", "sentence_transformers", "prefect", "kuzu", "qdrant_edge", "openai", "igraph")


@pytest.mark.needs_prefect
def test_client_paths_import_no_model_library() -> None:
    script = (
        "import importlib, sys\n"
        f"for name in {CLIENT_MODULES!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules) or 'none')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, env=dict(os.environ), timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "none", f"a client path imports {done.stdout.strip()}: import it where it is used"
