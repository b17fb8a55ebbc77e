"""Every command takes the same overrides: a data dir built with vector_store=qdrant opens with it everywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agrag.service.cli import app
from tests.conftest import EXAMPLES

QDRANT = "vector_store=qdrant"


@pytest.fixture(scope="module")
def qdrant_data_dir(tmp_path_factory: pytest.TempPathFactory, prefect_harness: None) -> Path:
    """The example corpus ingested by the CLI with the qdrant backend (qdrant-client's local mode in a folder)."""
    root = tmp_path_factory.mktemp("qdrant-backend")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AGRAG_DATA_DIR", str(root / "data"))
        patch.setenv("AGRAG_QDRANT_PATH", str(root / "qdrant"))
        result = CliRunner().invoke(app, ["ingest", str(EXAMPLES), QDRANT])
    assert result.exit_code == 0, result.output
    assert not (root / "data" / "vectors").exists(), "no Edge shards: the vectors went to the qdrant backend"
    return root


def agrag(root: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    monkeypatch.setenv("AGRAG_DATA_DIR", str(root / "data"))
    monkeypatch.setenv("AGRAG_QDRANT_PATH", str(root / "qdrant"))
    monkeypatch.setenv("COLUMNS", "200")
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_evidence_commands_open_a_qdrant_data_dir_with_the_override(
    qdrant_data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = agrag(
        qdrant_data_dir, monkeypatch, "evidence", "discover", "Who wrote the Orion Planner?", QDRANT, "--json"
    )
    assert code == 0, out
    hits = json.loads(out)["hits"]
    author = next(h for h in hits if "Maria Chen" in h["snippet"])
    code, out = agrag(qdrant_data_dir, monkeypatch, "evidence", "fetch", author["id"], QDRANT, "--json")
    assert code == 0, out
    assert "Maria Chen wrote the Orion Planner" in json.loads(out)["items"][0]["text"]
    code, out = agrag(qdrant_data_dir, monkeypatch, "evidence", "find-entities", "Orion Planner", QDRANT, "--json")
    assert code == 0 and any(e["name"] == "Orion Planner" for e in json.loads(out)), out
    code, out = agrag(qdrant_data_dir, monkeypatch, "search", "Who wrote the Orion Planner?", QDRANT, "--json")
    assert code == 0 and json.loads(out)["results"], out
    code, out = agrag(qdrant_data_dir, monkeypatch, "merges", "list", QDRANT)
    assert code == 0, out


def test_without_the_override_the_command_says_which_one_to_add(
    qdrant_data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = agrag(qdrant_data_dir, monkeypatch, "evidence", "discover", "Who wrote the Orion Planner?")
    assert code == 2
    assert "vector_store=qdrant" in out and "Traceback" not in out
