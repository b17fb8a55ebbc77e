"""POST /v1/texts and POST /v1/files/preview on a real server with its ingestion queue; the MCP tool's text form."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import httpx
import pytest

from agrag.components.data_models.document import document_id_for
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.loaders.files_root import TEXTS_FOLDER
from agrag.flows.ingest_flow import ingest_into
from agrag.pipelines.runtime import open_runtime, serving
from agrag.service.api.access import AccessPolicy, ApiToken
from agrag.service.api.app import create_app
from agrag.service.server.ingestion_queue import IngestionQueue
from agrag.service.tools.registry import WRITE_TOOLS
from agrag.service.tools.tool import ToolContext
from agrag.service.tools.write_tools import WriteHost
from tests.conftest import EXAMPLES
from tests.support.served_api import uvicorn_in_thread
from tests.text_ingest.test_text_ingest import files_root_settings

ADMIN = "admin-token-0123456789"
TEAM = "team-token-0123456789"


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> Iterator[tuple[str, WriteHost]]:
    data_dir = tmp_path_factory.mktemp("texts-http") / "data"
    settings = files_root_settings(data_dir, EXAMPLES)
    with open_runtime([], settings, require_data=False, embedder=embedder) as runtime:
        ingest_into(str(EXAMPLES), runtime.config, runtime.store, embedder, files_root=EXAMPLES)
        queue = IngestionQueue(runtime, runtime.runs)
        queue.start()
        team = document_id_for("team.md")
        access = AccessPolicy([ApiToken("admin", ADMIN), ApiToken("team", TEAM, (team,))])
        try:
            with serving(runtime), uvicorn_in_thread(create_app(runtime, access, queue=queue, warm_up=False)) as url:
                yield url, WriteHost(runtime, queue)
        finally:
            queue.shutdown(30)


def post(url: str, path: str, body: Mapping[str, object], token: str = ADMIN) -> httpx.Response:
    return httpx.post(f"{url}{path}", json=body, headers={"Authorization": f"Bearer {token}"}, timeout=300)


def test_texts_are_ingested_unchanged_and_refused_over_http(served: tuple[str, WriteHost]) -> None:
    url, _ = served
    body = {"text": "# Harbour\n\nTomasz Wren runs the Osprey ferry timetable.\n", "document_id": "harbour"}
    first = post(url, "/v1/texts", body)
    assert first.status_code == 200, first.text
    data = first.json()
    assert data["status"] == "ingested" and data["run_id"] and data["title"] == "Harbour"
    assert data["document_id"] == document_id_for("harbour.md", TEXTS_FOLDER)
    assert post(url, "/v1/texts", body).json()["status"] == "unchanged"

    refused = post(url, "/v1/texts", {"text": "x", "document_id": document_id_for("team.md")})
    assert refused.status_code == 400 and refused.json()["error"] == "TextOverFileError"
    assert "team.md" in refused.json()["message"]
    bad = post(url, "/v1/texts", {"text": "x", "document_id": "../up"})
    assert bad.status_code == 400 and bad.json()["error"] == "BadTextNameError"
    scoped = post(url, "/v1/texts", body, token=TEAM)
    assert scoped.status_code == 403


def test_files_are_previewed_over_http_for_unscoped_tokens_only(served: tuple[str, WriteHost]) -> None:
    url, _ = served
    page = post(url, "/v1/files/preview", {"paths": ["*.md"], "limit": 2, "chars": 200})
    assert page.status_code == 200, page.text
    data = page.json()
    assert data["total"] == len(list(EXAMPLES.glob("*.md"))) and len(data["files"]) == 2 and data["next_offset"] == 2
    assert all(len(f["sample"]) <= 200 and f["format"] == "markdown" for f in data["files"])
    outside = post(url, "/v1/files/preview", {"paths": ["../*.md"]})
    assert outside.status_code == 400 and outside.json()["error"] == "PreviewRefusedError"
    assert post(url, "/v1/files/preview", {"paths": ["*.md"]}, token=TEAM).status_code == 403


def test_the_mcp_ingest_tool_text_form_uses_the_same_rules(served: tuple[str, WriteHost]) -> None:
    _, host = served
    tool = WRITE_TOOLS["ingest"]
    done = tool.run(
        ToolContext(host), {"text": "# Buoys\n\nChecked each spring.\n", "document": "buoys", "title": "Buoys"}
    )
    assert done.state == "completed" and done.status == "ingested"
    assert done.document_id == document_id_for("buoys.md", TEXTS_FOLDER)
    assert "Buoys" in (host.runtime.data_dir / TEXTS_FOLDER / "buoys.md").read_text(encoding="utf-8")
    from agrag.components.text_preview_errors import TextOverFileError

    with pytest.raises(TextOverFileError):
        tool.run(ToolContext(host), {"text": "# Team\n\nNobody.\n", "document": "team.md"})
    assert "preview_files" in WRITE_TOOLS and not WRITE_TOOLS["preview_files"].writes
