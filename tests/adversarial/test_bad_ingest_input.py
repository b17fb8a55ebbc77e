"""Bad ingest input from the hostile probe of issue 15: each defect's regression test.

Every test asserts the typed error (or the right behaviour) and that nothing stored before was lost. One data dir
holding the example corpus is built once for the module; tests that write take a copy of it.
"""

from __future__ import annotations

import codecs
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from agrag.components.data_models.document import document_id_for
from agrag.components.data_models.evidence import EvidenceScope
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import (
    ConfigError,
    DocumentsOfOtherFolderError,
    EmptyIngestPathError,
    UnknownDocumentIdError,
)
from agrag.components.loaders.files_root import resolve_ingest_folder
from agrag.components.loaders.folder_loader import FolderLoader
from agrag.components.stores.graph_store import GraphStore
from agrag.flows.ingest_flow import ingest_into
from agrag.flows.ingest_report import NO_TEXT
from agrag.flows.run_outcome import ingest_summary
from agrag.pipelines.runtime import Runtime, compose_config, open_runtime
from agrag.pipelines.settings import AgragSettings, RetrievalSettings, Settings
from agrag.service.api.access import AccessPolicy, ApiToken, Caller
from agrag.service.api.app import create_app
from agrag.service.api.sessions import SessionStore
from agrag.service.cli import app
from agrag.service.tools.documents_tool import ListDocumentsInput
from agrag.service.tools.registry import TOOLS
from agrag.service.tools.tool import ToolContext, ToolHost
from tests.conftest import EXAMPLES
from tests.support.data_dir_copy import copy_data_dir
from tests.support.served_api import uvicorn_in_thread

ADMIN = "admin-token-0123456789abcdef"
SMALL = ("team.md", "glossary.txt", "sites.csv")
OTHER_TEAM = "# Team\n\nThe other company's team: Ada Novak leads the night shift.\n"


def settings_for(data_dir: Path, files_root: Path | None = None) -> Settings:
    agrag = AgragSettings(data_dir=data_dir, files_root=files_root, _env_file=None)  # type: ignore[call-arg]
    return Settings(agrag, RetrievalSettings(_env_file=None))  # type: ignore[call-arg]


def current(graph: GraphStore) -> dict[tuple[str, str], str]:
    """(folder, path) → version of every stored document: what must survive a refused or partial ingest."""
    return {(d.source_folder, d.source_path): d.version for d in graph.documents(limit=1000)}


def small_corpus(folder: Path) -> Path:
    """Three files of the example corpus in ``folder`` (quick to ingest, and enough to lose)."""
    folder.mkdir(parents=True)
    for name in SMALL:
        shutil.copy(EXAMPLES / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder) -> Path:
    """A data dir holding part of the example corpus (ingested once; its stores are closed, so copies are whole)."""
    root = tmp_path_factory.mktemp("bad-input")
    notes = small_corpus(root / "acme_notes")
    with open_runtime([], settings_for(root / "data"), require_data=False, embedder=embedder) as runtime:
        ingest_into(str(notes), runtime.config, runtime.store, embedder)
    return root / "data"


@pytest.fixture
def runtime(corpus: Path, tmp_path: Path, embedder: SentenceTransformersTextEmbedder) -> Iterator[Runtime]:
    """The example corpus in a data dir of this test's own."""
    data_dir = tmp_path / "data"
    copy_data_dir(corpus, data_dir)
    with open_runtime([], settings_for(data_dir), require_data=False, embedder=embedder) as opened:
        yield opened


def cli(*args: str, data_dir: Path, **env: str) -> Any:
    return CliRunner().invoke(app, list(args), env={"AGRAG_DATA_DIR": str(data_dir), "COLUMNS": "200", **env})


# Defect 3: the same relative path from another folder superseded the stored document.


def test_defect_3_same_path_from_another_folder_is_another_document(
    runtime: Runtime, tmp_path: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "team.md").write_text(OTHER_TEAM, encoding="utf-8")
    before = current(runtime.store.graph)

    report = ingest_into(str(other), runtime.config, runtime.store, embedder)

    after = current(runtime.store.graph)
    assert report.documents_ingested == 1 and report.chunks_superseded == 0
    assert {k: v for k, v in after.items() if k in before} == before, "acme_notes/team.md was not superseded"
    assert (str(other.resolve()), "team.md") in after and len(after) == len(before) + 1
    ids = {d.id for d in runtime.store.graph.documents(limit=1000) if d.source_path == "team.md"}
    assert ids == {document_id_for("team.md", "acme_notes"), document_id_for("team.md", "other")}


def test_defect_3_a_document_stored_before_folders_were_recorded_is_not_superseded_unasked(
    tmp_path: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    """A data dir made by older agrag: ids from the relative path alone, no folder recorded."""
    notes = small_corpus(tmp_path / "files" / "notes")
    other = tmp_path / "files" / "other"
    other.mkdir()
    (other / "team.md").write_text(OTHER_TEAM, encoding="utf-8")
    data_dir = tmp_path / "data"
    with open_runtime([], settings_for(data_dir), require_data=False, embedder=embedder) as runtime:
        graph = runtime.store.graph
        # the files root being the folder itself gives the old ids (the relative path alone); then forget folders
        ingest_into(str(notes), runtime.config, runtime.store, embedder, files_root=notes)
        with runtime.store.writing():
            graph.record_source_folders({d.id: "" for d in graph.documents(limit=1000)})
        old = current(graph)
        assert document_id_for("team.md") in {d.id for d in graph.documents(limit=1000)}

        # the same folder again: its unchanged documents keep their ids, and now record their folder
        again = ingest_into(str(notes), runtime.config, runtime.store, embedder)
        assert (again.documents_ingested, again.documents_unchanged) == (0, len(SMALL))
        recorded = {d.id: d.source_folder for d in graph.documents(limit=1000)}
        assert recorded[document_id_for("team.md")] == str(notes.resolve()) and len(recorded) == len(SMALL)

        with runtime.store.writing():
            graph.record_source_folders(dict.fromkeys(recorded, ""))
        with pytest.raises(DocumentsOfOtherFolderError) as refused:
            ingest_into(str(other), runtime.config, runtime.store, embedder)
        assert "team.md" in str(refused.value) and DocumentsOfOtherFolderError.OVERRIDE in str(refused.value)
        assert current(graph) == old, "the refused ingest wrote nothing"

        asked = runtime.config_for(["ingest.supersede_other_folders=true"])
        replaced = ingest_into(str(other), asked, runtime.store, embedder)
        assert replaced.documents_ingested == 1 and replaced.chunks_superseded > 0
        team = next(d for d in graph.documents(limit=1000) if d.id == document_id_for("team.md"))
        assert team.source_folder == str(other.resolve()) and team.version != old[("", "team.md")]


def test_defect_3_the_cli_names_the_override(corpus: Path, tmp_path: Path, prefect_harness: None) -> None:
    data_dir = tmp_path / "data"
    copy_data_dir(corpus, data_dir)
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "notes.md").write_text("# Notes\n\nThe first version of the notes.\n", encoding="utf-8")
    assert cli("ingest", str(legacy), data_dir=data_dir).exit_code == 0
    with open_runtime([], settings_for(data_dir)) as runtime:
        notes = next(d for d in runtime.store.graph.documents(limit=1000) if d.source_path == "notes.md")
        with runtime.store.writing():  # as if stored before folders were recorded, under its old id
            runtime.store.graph.record_source_folders({notes.id: ""})
        before = current(runtime.store.graph)
    other = tmp_path / "elsewhere" / "legacy"
    other.mkdir(parents=True)
    (other / "notes.md").write_text("# Notes\n\nSomeone else's notes.\n", encoding="utf-8")

    result = cli("ingest", str(other), data_dir=data_dir)

    assert result.exit_code == 1, result.output
    assert "ingest.supersede_other_folders=true" in result.output and "notes.md" in result.output
    with open_runtime([], settings_for(data_dir)) as runtime:
        assert current(runtime.store.graph) == before


# Defect 5: a file name that is not UTF-8 aborted the whole ingest.


def test_defect_5_a_file_name_that_is_not_utf8_is_ingested_under_a_safe_name(
    runtime: Runtime, tmp_path: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    folder = tmp_path / "latin1"
    folder.mkdir()
    with open(os.path.join(os.fsencode(folder), b"caf\xe9 menu.md"), "wb") as file:
        file.write(b"# Menu\n\nThe cafe serves soup on Mondays.\n")
    (folder / "plain.md").write_text("# Plain\n\nA plain note.\n", encoding="utf-8")
    before = current(runtime.store.graph)

    report = ingest_into(str(folder), runtime.config, runtime.store, embedder)

    assert report.failures == () and report.documents_ingested == 2
    paths = {d.source_path for d in runtime.store.graph.documents(limit=1000)}
    assert {"caf\\xe9 menu.md", "plain.md"} <= paths
    assert {k: v for k, v in current(runtime.store.graph).items() if k in before} == before


# Defect 9: bad input accepted silently.


def test_defect_9_a_file_of_only_headings_gets_a_warning_status(
    runtime: Runtime, tmp_path: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    folder = tmp_path / "headings"
    folder.mkdir()
    (folder / "only.md").write_text("# Title\n\n## One\n\n## Two\n", encoding="utf-8")
    (folder / "body.md").write_text("# Body\n\nSome text to search.\n", encoding="utf-8")
    before = current(runtime.store.graph)

    report = ingest_into(str(folder), runtime.config, runtime.store, embedder)

    statuses = {f.source_path: f.status for f in report.files}
    assert statuses == {"only.md": NO_TEXT, "body.md": "ingested"}
    assert "warning" in ingest_summary(report) and "only.md" in ingest_summary(report)
    assert {k: v for k, v in current(runtime.store.graph).items() if k in before} == before


def test_defect_9_true_is_not_a_number_in_recipes_and_tool_inputs() -> None:
    settings = settings_for(Path("data"))
    for override in ("recipe.limit=true", "ingest.max_llm_calls=false", "evaluation.ks=[2,true]"):
        with pytest.raises(ConfigError, match="takes a number, not true or false"):
            compose_config([override], settings)
    assert compose_config(["recipe.limit=5"], settings).recipe.limit == 5
    with pytest.raises(ValidationError, match="takes a number"):
        ListDocumentsInput(limit=True)  # type: ignore[arg-type]


def test_defect_9_an_empty_folder_name_is_refused_everywhere(corpus: Path, tmp_path: Path) -> None:
    for root in (None, tmp_path):
        with pytest.raises(EmptyIngestPathError):
            resolve_ingest_folder("", root)
    (tmp_path / "stray.md").write_text("# Stray\n\nNot meant to be ingested.\n", encoding="utf-8")
    data_dir = tmp_path / "data"
    copy_data_dir(corpus, data_dir)

    result = cli("ingest", "", data_dir=data_dir)  # the CLI runs in tmp_path: '' would have meant it

    assert result.exit_code == 1 and "The folder to ingest is empty" in result.output

    class NoQueue:
        def submit_ingest(self, *args: object) -> None:
            raise AssertionError("an empty folder must be refused before anything is queued")

        def last_finished(self) -> None:
            return None

    with open_runtime([], settings_for(data_dir)) as runtime:
        before = current(runtime.store.graph)
        with uvicorn_in_thread(
            create_app(runtime, AccessPolicy([ApiToken("admin", ADMIN)]), queue=NoQueue(), warm_up=False)
        ) as url:  # type: ignore[arg-type]
            import httpx

            auth = {"Authorization": f"Bearer {ADMIN}"}
            empty = httpx.post(f"{url}/v1/ingestions", json={"folder": ""}, headers=auth)
            blank = httpx.post(f"{url}/v1/ingestions", json={"folder": "  "}, headers=auth)
        assert empty.status_code == 422, "the request model wants a folder"
        assert blank.status_code == 400 and blank.json()["error"] == "EmptyIngestPathError"
        assert current(runtime.store.graph) == before


def test_defect_9_an_unknown_document_id_is_named(corpus: Path, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    copy_data_dir(corpus, data_dir)
    searched = cli("search", "Orion planner", "recipe=chunk", "--document", "dnope", data_dir=data_dir)
    discovered = cli("evidence", "discover", "Orion planner", "--document", "dnope", data_dir=data_dir)
    for result in (searched, discovered):
        assert result.exit_code == 1, result.output
        assert "'dnope'" in result.output and "agrag documents" in result.output
    listed = cli("documents", data_dir=data_dir)
    assert listed.exit_code == 0 and "team.md" in listed.output and "acme_notes" in listed.output

    with open_runtime([], settings_for(data_dir)) as runtime:  # what the server runs for the CLI and HTTP
        team = next(d.id for d in runtime.store.graph.documents(limit=1000) if d.source_path == "team.md")
        context = ToolContext(ToolHost(runtime))
        with pytest.raises(UnknownDocumentIdError, match="dnope"):
            TOOLS["search"].run(context, {"query": "team", "filters": {"document_ids": [team, "dnope"]}})
        found = TOOLS["search"].run(context, {"query": "team", "recipe": "chunk", "filters": {"document_ids": [team]}})
        assert found.hits, "a known id still searches"
        with pytest.raises(UnknownDocumentIdError):
            SessionStore(runtime.evidence_session).create(Caller("admin", "f"), ["dnope"])
        scoped = ToolContext(ToolHost(runtime), EvidenceScope(("dnotyetingested",)))  # a token's own scope
        assert TOOLS["search"].run(scoped, {"query": "team", "recipe": "chunk"}).hits == ()


# Defect 13: huge headings copied into every chunk; path refusals only after Prefect started.


def test_defect_13_a_huge_heading_is_cut_in_heading_paths(tmp_path: Path) -> None:
    huge = "Heading " + "x" * 100_000
    (tmp_path / "huge.md").write_text(f"# {huge}\n\n## {huge}\n\nBody text.\n\nMore body text.\n", encoding="utf-8")

    (loaded,) = FolderLoader().run(root=str(tmp_path))["documents"]

    assert len(loaded.document.title) <= 200 and loaded.document.title.endswith("…")
    assert all(len(h.text) <= 200 for h in loaded.headings)
    assert huge in loaded.text, "the text itself keeps the heading whole"


@pytest.mark.needs_prefect
def test_defect_13_a_data_dir_that_cannot_be_one_is_refused_before_prefect_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agrag.flows.ingest_flow

    def not_started(*args: object, **kwargs: object) -> None:
        raise AssertionError("Prefect must not start for a data dir that cannot be one")

    monkeypatch.setattr(agrag.flows.ingest_flow, "run_ingest", not_started)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")

    result = cli("ingest", str(EXAMPLES), data_dir=blocker / "data")

    assert result.exit_code == 2 and "a-file is a file, not a folder" in result.output
    assert blocker.read_text() == "not a folder"


# Defect 11 (part): UTF-16/32 text called binary; a dangling symlink said to lead outside.


def test_defect_11_utf16_and_utf32_with_a_bom_are_text_and_a_dangling_link_is_broken(tmp_path: Path) -> None:
    text = "# Notes\n\nZoë reviews the Orion Planner.\n"
    for name, codec, bom in (
        ("le16.md", "utf-16-le", codecs.BOM_UTF16_LE),
        ("be16.txt", "utf-16-be", codecs.BOM_UTF16_BE),
        ("le32.md", "utf-32-le", codecs.BOM_UTF32_LE),
        ("be32.md", "utf-32-be", codecs.BOM_UTF32_BE),
    ):
        (tmp_path / name).write_bytes(bom + text.encode(codec))
    (tmp_path / "binary.txt").write_bytes(b"\x00\x01\x02 not text")
    (tmp_path / "dangling.md").symlink_to(tmp_path.parent / "nowhere" / "gone.md")

    out = FolderLoader().run(root=str(tmp_path))

    assert {d.document.source_path: d.text for d in out["documents"]} == dict.fromkeys(
        ("be16.txt", "be32.md", "le16.md", "le32.md"), text
    )
    reasons = {f.source_path: f.reason for f in out["failures"]}
    assert reasons == {
        "binary.txt": "binary file, not text",
        "dangling.md": "symlink leads nowhere (its target does not exist)",
    }
