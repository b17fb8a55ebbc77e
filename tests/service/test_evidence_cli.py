"""``agrag evidence``: discover, fetch with a session file, check and render the citations, scope and bad ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agrag.components.data_models.document import document_id_for
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.flows.ingest_flow import ingest_into
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.settings import AgragSettings
from agrag.pipelines.store_factory import open_knowledge_store
from agrag.service.cli import app
from tests.conftest import EXAMPLES


@pytest.fixture(scope="module")
def data_dir(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> Path:
    path = tmp_path_factory.mktemp("evidence-cli") / "data"
    config = load_config()
    with open_knowledge_store(AgragSettings(data_dir=path), config.vector_store, embedder) as store:
        ingest_into(str(EXAMPLES), config, store, embedder)
    return path


def agrag(data_dir: Path, monkeypatch: pytest.MonkeyPatch, *args: str, stdin: str | None = None) -> tuple[int, str]:
    monkeypatch.setenv("AGRAG_DATA_DIR", str(data_dir))
    monkeypatch.setenv("COLUMNS", "200")
    result = CliRunner().invoke(app, ["evidence", *args], input=stdin)
    return result.exit_code, result.output


def test_discover_fetch_check_and_render_through_a_session_file(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    session = str(tmp_path / "session.json")
    code, out = agrag(data_dir, monkeypatch, "discover", "Who wrote the Orion Planner?", "--json", "--limit", "3")
    assert code == 0, out
    hits = json.loads(out)["hits"]
    author = next(h for h in hits if "Maria Chen wrote" in h["snippet"])
    code, out = agrag(data_dir, monkeypatch, "fetch", author["id"], "--session", session)
    assert code == 0 and "Maria Chen wrote the Orion Planner" in out
    draft = f"Maria Chen wrote the Orion Planner in 2023 [{author['id']}]."
    code, out = agrag(data_dir, monkeypatch, "check", "-", "--session", session, "--json", stdin=draft)
    assert code == 0, out
    assert json.loads(out)["grounded"] is True
    code, out = agrag(data_dir, monkeypatch, "check", "-", stdin=draft)
    assert code == 0 and "not grounded" in out and "not_fetched" in out, "without the session nothing was read"
    code, out = agrag(data_dir, monkeypatch, "render", "-", "--session", session, stdin=draft)
    assert code == 0 and "[1]" in out and "Sources:" in out and "Orion Planner Design Notes" in out


def test_the_scope_holds_for_the_whole_session(data_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    session = str(tmp_path / "team.json")
    team = document_id_for("team.md", "acme_notes")
    code, out = agrag(
        data_dir, monkeypatch, "discover", "Orion Planner", "--document", team, "--session", session, "--json"
    )
    assert code == 0, out
    assert {h["id"].split(".")[0] for h in json.loads(out)["hits"]} == {team}
    code, out = agrag(data_dir, monkeypatch, "discover", "Orion Planner", "--session", session, "--json")
    assert code == 0 and {h["id"].split(".")[0] for h in json.loads(out)["hits"]} == {team}, "the file keeps it"
    other = document_id_for("orion_planner.md", "acme_notes")
    code, out = agrag(data_dir, monkeypatch, "discover", "x", "--document", other, "--session", session)
    assert code == 1 and "scope is fixed when it starts" in out


def test_bad_input_gets_a_clear_error(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = agrag(data_dir, monkeypatch, "fetch", "not-an-id")
    assert code == 1 and "is not an evidence id" in out and "Ids look like" in out
    code, out = agrag(data_dir, monkeypatch, "discover", "x", "--mode", "fuzzy")
    assert code == 1 and "Unknown discover mode 'fuzzy'" in out
    code, out = agrag(data_dir, monkeypatch, "find-entities", "Maria Chen", "--json")
    assert code == 0 and json.loads(out)[0]["name"] == "Maria Chen"
