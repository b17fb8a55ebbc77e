"""Text ingest through the Python API: new, unchanged, a new version (old evidence ids still fetch), refusals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.document import document_id_for
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.loaders.files_root import TEXTS_FOLDER
from agrag.components.text_preview_errors import BadTextError, BadTextNameError, TextOverFileError
from agrag.flows.ingest_flow import ingest_into
from agrag.flows.text_ingest import ingest_text
from agrag.pipelines.runtime import Runtime, open_runtime
from agrag.pipelines.settings import AgragSettings, RetrievalSettings, Settings
from tests.conftest import EXAMPLES

KICKOFF = "# Kickoff\n\nAda Lovelace leads the Osprey project; Tomasz Wren keeps its timetable.\n"
KICKOFF_2 = "# Kickoff\n\nAda Lovelace leads the Osprey project; Ilse Varga now keeps its timetable.\n"


def files_root_settings(data_dir: Path, files_root: Path) -> Settings:
    return Settings(
        AgragSettings(data_dir=data_dir, files_root=files_root, _env_file=None),
        RetrievalSettings(_env_file=None),
    )


@pytest.fixture(scope="module")
def runtime(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> Iterator[Runtime]:
    """The example corpus ingested with the example folder as the files root (ids: paths relative to it)."""
    data_dir = tmp_path_factory.mktemp("texts") / "data"
    settings = files_root_settings(data_dir, EXAMPLES)
    with open_runtime([], settings, require_data=False, embedder=embedder) as opened:
        ingest_into(str(EXAMPLES), opened.config, opened.store, embedder, files_root=EXAMPLES)
        yield opened


def test_a_new_text_is_ingested_then_unchanged_then_a_new_version(runtime: Runtime) -> None:
    first = ingest_text(runtime, KICKOFF, "meeting-2026-11-30")
    assert first.status == "ingested" and first.title == "Kickoff"
    assert first.document_id == document_id_for("meeting-2026-11-30.md", TEXTS_FOLDER)
    assert (runtime.data_dir / TEXTS_FOLDER / "meeting-2026-11-30.md").read_text(encoding="utf-8") == KICKOFF
    old_id = f"{first.document_id}.{first.version}.c0"
    old_text = runtime.evidence_session().fetch([old_id]).items[0].text
    assert "Tomasz Wren" in old_text

    again = ingest_text(runtime, KICKOFF, "meeting-2026-11-30.md")  # the same text under the same name
    assert again.status == "unchanged" and again.version == first.version

    changed = ingest_text(runtime, KICKOFF_2, "meeting-2026-11-30")
    assert changed.status == "ingested" and changed.document_id == first.document_id
    assert changed.version != first.version
    session = runtime.evidence_session()
    assert session.fetch([old_id]).items[0].text == old_text, "the old version's evidence id still fetches its text"
    new_text = session.fetch([f"{changed.document_id}.{changed.version}.c0"]).items[0].text
    assert "Ilse Varga" in new_text and "Tomasz Wren" not in new_text
    with runtime.store.reading():
        stored = runtime.store.graph.stored_documents([first.document_id])[first.document_id]
        current = runtime.store.graph.document_chunk_ids(first.document_id, stored.version)
        old_chunks = runtime.store.graph.document_chunk_ids(first.document_id, first.version)
    assert stored.version == changed.version, "the new version is the current one"
    assert current and old_chunks and not set(current) & set(old_chunks)


def test_a_title_is_written_as_the_first_heading_and_the_default_is_the_name(runtime: Runtime) -> None:
    titled = ingest_text(runtime, "Ferries run hourly between the harbours.\n", "ferry notes", title="Ferry Line")
    assert titled.status == "ingested" and titled.title == "Ferry Line"
    kept = (runtime.data_dir / TEXTS_FOLDER / "ferry notes.md").read_text(encoding="utf-8")
    assert kept.startswith("# Ferry Line\n\n")
    plain = ingest_text(runtime, "Buoys are checked every spring by the harbour crew.\n", "buoys")
    assert plain.title == "buoys"
    same = ingest_text(runtime, "Ferries run hourly between the harbours.\n", "ferry notes", title="Ferry Line")
    assert same.status == "unchanged", "the same text and title again change nothing"


def test_a_text_never_overwrites_a_files_document(runtime: Runtime) -> None:
    team_id = document_id_for("team.md")  # team.md at the top of the files root
    with runtime.store.reading():
        assert runtime.store.graph.stored_documents([team_id])[team_id].source_path == "team.md"
    for name in (team_id, "team.md", "team"):
        with pytest.raises(TextOverFileError, match=r"'team\.md'") as refused:
            ingest_text(runtime, "# Team\n\nNobody.\n", name)
        assert team_id in str(refused.value) and "another name" in str(refused.value)
    assert not (runtime.data_dir / TEXTS_FOLDER / "team.md").exists(), "nothing was written"
    session = runtime.evidence_session()
    with runtime.store.reading():
        version = runtime.store.graph.stored_documents([team_id])[team_id].version
    assert "Nobody" not in session.fetch([f"{team_id}.{version}.c0"]).items[0].text


def test_a_stored_texts_id_names_that_text(runtime: Runtime) -> None:
    first = ingest_text(runtime, "# Depot\n\nThe depot opens at six.\n", "depot")
    again = ingest_text(runtime, "# Depot\n\nThe depot opens at seven.\n", first.document_id)
    assert again.document_id == first.document_id and again.status == "ingested" and again.name == first.document_id
    assert again.file == f"{TEXTS_FOLDER}/depot.md"


@pytest.mark.parametrize(
    "name",
    ["", "../escape", "a/b", ".hidden", "x" * 101, "notes.", "tab\tname", "naïve", "end "],
)
def test_bad_names_are_refused_with_the_rule(runtime: Runtime, name: str) -> None:
    with pytest.raises(BadTextNameError, match="cannot name a text") as refused:
        ingest_text(runtime, "Some text.\n", name)
    assert "letters, digits" in str(refused.value)


def test_an_empty_text_or_a_bad_title_is_refused(runtime: Runtime) -> None:
    with pytest.raises(BadTextError, match="empty"):
        ingest_text(runtime, "  \n", "blank")
    with pytest.raises(BadTextError, match="title"):
        ingest_text(runtime, "Text.\n", "titled", title="two\nlines")
    assert not (runtime.data_dir / TEXTS_FOLDER / "blank.md").exists()
