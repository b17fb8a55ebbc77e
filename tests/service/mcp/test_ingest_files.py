"""The ``ingest`` tool's files mode over MCP: files of the files root by path or glob, everything else refused."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from agrag.components.data_models.document import document_id_for
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.loaders.files_root import TEXTS_FOLDER
from agrag.pipelines.runtime import open_runtime, serving
from agrag.pipelines.settings import Settings
from agrag.service.mcp.server import AgragMcpServer, McpOptions
from agrag.service.mcp.stdio import local_caller
from agrag.service.server.ingestion_queue import IngestionQueue
from agrag.service.tools.write_tools import WriteHost
from tests.service.conftest import settings_of
from tests.service.mcp.conftest import call, refused

KESTREL = (
    "# Kestrel Pump\n\nThe Kestrel Pump Station was commissioned by Ilse Varga in 2021 beside the north harbour.\n"
)
FERRY = "# Ferry Line\n\nThe Osprey ferry line links the two harbours; Tomasz Wren runs its timetable.\n"
MEMO = "# Memo\n\nThe Heron Bridge closes for repairs in March; Odile Brandt leads the works.\n"


@dataclass(frozen=True)
class Rooted:
    """A writable host whose files root is ``root``; ``outside`` is a folder beside it."""

    host: WriteHost
    root: Path
    outside: Path


@pytest.fixture(scope="module")
def rooted(
    mcp_data_dir: Path, embedder: SentenceTransformersTextEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Rooted]:
    """The corpus copy served with a files root (AGRAG_FILES_ROOT, which the ingestion runs read too)."""
    base = tmp_path_factory.mktemp("files")
    root, outside = base / "root", base / "outside"
    for folder in (root / "acme" / "new", root / "links", root / "many", outside):
        folder.mkdir(parents=True)
    (root / "acme" / "new" / "kestrel.md").write_text(KESTREL)
    (root / "acme" / "new" / "ferry.md").write_text(FERRY)
    (root / "acme" / "new" / "photo.png").write_bytes(b"\x89PNG")
    (outside / "secret.md").write_text("# Secret\n\nThe vault code is 4711.\n")
    (root / "links" / "leak.md").symlink_to(outside / "secret.md")
    (root / "links" / "out").symlink_to(outside, target_is_directory=True)
    for n in range(51):
        (root / "many" / f"{n:02}.md").write_text(f"# Note {n}\n")
    settings = settings_of(mcp_data_dir)
    agrag = settings.agrag.model_copy(update={"files_root": root})
    with (
        pytest.MonkeyPatch.context() as env,
        open_runtime([], Settings(agrag, settings.retrieval), embedder=embedder) as runtime,
    ):
        env.setenv("AGRAG_FILES_ROOT", str(root))
        queue = IngestionQueue(runtime, runtime.runs)
        queue.start()
        try:
            with serving(runtime):
                yield Rooted(WriteHost(runtime, queue), root, outside)
        finally:
            queue.shutdown(30)


@asynccontextmanager
async def connected(host: WriteHost) -> AsyncIterator[ClientSession]:
    server = AgragMcpServer(host, lambda _: local_caller(None), McpOptions(allow_write=True))
    async with create_connected_server_and_client_session(server.server) as session:
        yield session


async def test_files_under_the_root_are_ingested_by_glob_with_ids_relative_to_it(rooted: Rooted) -> None:
    async with connected(rooted.host) as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert "files" in listed["ingest"].inputSchema["properties"]
        written = await call(session, "ingest", {"files": ["acme/new/*"]})
        assert written["state"] == "completed" and written["document_id"] == ""
        assert written["files"] == [
            {
                "path": f"acme/new/{name}",
                "document_id": document_id_for(f"acme/new/{name}"),
                "status": "ingested",
                "reason": "",
            }
            for name in ("ferry.md", "kestrel.md")
        ]
        kestrel = written["files"][1]["document_id"]
        found = await call(session, "search_evidence", {"query": "Kestrel Pump Station Ilse Varga", "limit": 3})
        assert found["hits"][0]["id"].startswith(kestrel)
        documents = {d["id"]: d for d in (await call(session, "list_documents"))["result"]}
        assert documents[kestrel]["source_path"] == "kestrel.md"

        again = await call(session, "ingest", {"files": ["acme/new/kestrel.md"]})
        assert [(f["document_id"], f["status"]) for f in again["files"]] == [(kestrel, "unchanged")]

        memo = await call(session, "ingest", {"text": MEMO, "document": "memo.md"})  # a text, beside a files root
        assert memo["state"] == "completed" and memo["document_id"] == document_id_for("memo.md", TEXTS_FOLDER)
        status = await call(session, "status")
        assert status["documents"] == 12, "the corpus, the two files and the memo; nothing from outside the root"


@pytest.mark.parametrize(
    ("files", "error"),
    [
        (["../outside/secret.md"], "Ingestion error: Refusing to ingest '../outside/secret.md': it goes through '..'"),
        (["links/leak.md"], "Ingestion error: Refusing to ingest 'links/leak.md': it leads outside the files root"),
        (["links/out/*.md"], "it leads outside the files root"),
        (["links/*"], "it leads outside the files root"),
        (["acme/none/*.md"], "Ingestion error: 'acme/none/*.md' matches no file under the files root"),
        (["acme/new/photo.png"], "matches no file under the files root"),
        (["acme/new/kestrel.md", "many/*.md"], "Ingestion error: The paths match 52 files, more than the 50"),
        ([f"many/{n:02}.md" for n in range(51)], "Invalid arguments: files: List should have at most 50 items"),
        ([], "Invalid arguments: files: List should have at least 1 item"),
    ],
)
async def test_files_outside_the_root_none_or_too_many_are_refused(
    rooted: Rooted, files: list[str], error: str
) -> None:
    async with connected(rooted.host) as session:
        text = await refused(session, "ingest", {"files": files})
    assert error in text, text
    assert "Traceback" not in text and str(rooted.outside / "secret.md") not in text


async def test_an_absolute_path_outside_and_mixed_modes_are_refused(rooted: Rooted) -> None:
    async with connected(rooted.host) as session:
        outside = await refused(session, "ingest", {"files": [str(rooted.outside / "secret.md")]})
        both = await refused(session, "ingest", {"files": ["acme/new/ferry.md"], "text": MEMO, "document": "m.md"})
        neither = await refused(session, "ingest", {"document": "m.md"})
    assert outside.startswith("Ingestion error: Refusing to ingest") and "leads outside the files root" in outside
    assert both.startswith("Invalid arguments:") and "not both" in both
    assert neither.startswith("Invalid arguments:") and "`files`" in neither
