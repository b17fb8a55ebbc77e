"""``agrag ontology show|add`` in-process and through a real server, and ``POST /v1/ontology``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.pipelines.runtime import Runtime, open_runtime
from agrag.service.api.access import AccessPolicy, ApiToken
from agrag.service.api.app import create_app
from agrag.service.cli import app
from agrag.service.server.server_file import remove_server_file, write_server_file
from agrag.service.tools.registry import WRITE_TOOLS
from tests.service.conftest import settings_of
from tests.support.served_api import uvicorn_in_thread

ADMIN = "admin-token-0123456789abcdef"
TEAM = "team-token-0123456789abcdef0"
OWNER = "owner-token-0123456789abcdef"
ENGINEERING = "ingest/ontology=engineering"


@pytest.mark.needs_model  # the CLI loads the embedder
def test_cli_add_and_show_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGRAG_DATA_DIR", str(tmp_path / "data"))
    runner = CliRunner()
    added = runner.invoke(
        app,
        [
            "ontology",
            "add",
            "--label",
            "Vendor:A company that sells us parts",
            "--relation",
            "SUPPLIES:Vendor:Component",
            ENGINEERING,
            "--json",
        ],
    )
    assert added.exit_code == 0, added.output
    assert [r["status"] for r in json.loads(added.stdout)["results"]] == ["added", "added"]

    shown = runner.invoke(app, ["ontology", "show", ENGINEERING, "--json"])
    assert shown.exit_code == 0, shown.output
    view = json.loads(shown.stdout)
    assert {"label": "Vendor", "description": "A company that sells us parts", "origin": "added"} in view["labels"]
    assert {"label": "Person", "description": "", "origin": "config"} in view["labels"]
    assert {"type": "SUPPLIES", "source": "Vendor", "target": "Component", "description": "", "origin": "added"} in (
        view["relations"]
    )

    table = runner.invoke(app, ["ontology", "show", ENGINEERING], env={"COLUMNS": "200"})
    assert table.exit_code == 0 and "Vendor" in table.output and "added" in table.output

    refused = runner.invoke(app, ["ontology", "add", "--label", "Chunk", ENGINEERING])
    assert refused.exit_code == 2 and "agrag's own graph tables" in refused.output
    assert "Traceback" not in refused.output
    malformed = runner.invoke(app, ["ontology", "add", "--relation", "SUPPLIES:Vendor"])
    assert malformed.exit_code == 2 and "TYPE:SOURCE_LABEL:TARGET_LABEL" in malformed.output


@pytest.fixture
def served(tmp_path: Path, embedder: SentenceTransformersTextEmbedder) -> Iterator[tuple[str, Runtime]]:
    settings = settings_of(tmp_path / "data")
    with open_runtime([ENGINEERING], settings, require_data=False, embedder=embedder) as runtime:
        access = AccessPolicy([ApiToken("admin", ADMIN), ApiToken("team", TEAM, ("a.md",))], OWNER)
        with uvicorn_in_thread(create_app(runtime, access, warm_up=False)) as url:
            yield url, runtime


def test_http_post_ontology_for_unscoped_tokens_only(served: tuple[str, Runtime]) -> None:
    url, runtime = served
    body = {"labels": [{"label": "Vendor"}], "relations": [{"type": "SUPPLIES", "source": "Vendor", "target": "*"}]}
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TEAM}"}) as scoped:
        forbidden = scoped.post("/v1/ontology", json=body)
    assert forbidden.status_code == 403 and forbidden.json()["error"] == "ForbiddenError"
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN}"}) as http:
        added = http.post("/v1/ontology", json=body)
        again = http.post("/v1/ontology", json=body)
        bad = http.post("/v1/ontology", json={"labels": [{"label": "Has Space"}]})
        empty = http.post("/v1/ontology", json={})
        shown = http.get("/v1/ontology").json()
        schema = http.get("/openapi.json").json()
    assert added.status_code == 200, added.text
    assert [r["status"] for r in added.json()["results"]] == ["added", "added"]
    assert [r["status"] for r in again.json()["results"]] == ["already_present", "already_present"]
    assert bad.status_code == 400 and bad.json()["error"] == "InvalidOntologyNameError"
    assert empty.status_code == 422
    assert "Vendor" in shown["entity_labels"] and ["Vendor", "*"] in shown["relation_types"]["SUPPLIES"]
    assert {"label": "Vendor", "description": "", "origin": "added"} in shown["labels"]
    assert schema["paths"]["/v1/ontology"]["post"]["operationId"] == "set_ontology"
    assert WRITE_TOOLS["set_ontology"].writes
    assert runtime.store.ontology is not None and runtime.store.ontology.path.is_file()


def test_cli_works_through_the_server_that_holds_the_data_dir(
    served: tuple[str, Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, runtime = served
    write_server_file(runtime.data_dir, url, OWNER)
    monkeypatch.setenv("AGRAG_DATA_DIR", str(runtime.data_dir))
    try:
        runner = CliRunner()
        added = runner.invoke(app, ["ontology", "add", "--label", "Supplier:Sells parts", "--json"])
        shown = runner.invoke(app, ["ontology", "show", "--json"])
        refused = runner.invoke(app, ["ontology", "add", "--relation", "SELLS:Shop:*"])
    finally:
        remove_server_file(runtime.data_dir)
    assert added.exit_code == 0, added.output
    assert json.loads(added.stdout)["results"][0]["status"] == "added"
    assert {"label": "Supplier", "description": "Sells parts", "origin": "added"} in json.loads(shown.stdout)["labels"]
    assert refused.exit_code == 2 and "does not declare" in refused.output  # the server's typed error, rebuilt
