from pathlib import Path

import pytest

from agrag.components.data_models.ingestion_run import RunSource
from agrag.components.errors import IngestError
from agrag.components.loaders.files_root import checked_folder, resolve_ingest_folder


@pytest.fixture
def files_root(tmp_path: Path) -> Path:
    root = tmp_path / "files"
    (root / "team" / "notes").mkdir(parents=True)
    (root / ".private").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (root / "escape").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (root / "alias").symlink_to(root / "team", target_is_directory=True)
    return root


def test_a_folder_inside_the_files_root_is_resolved(files_root: Path) -> None:
    assert resolve_ingest_folder("team/notes", files_root) == files_root / "team" / "notes"
    assert resolve_ingest_folder(str(files_root / "team"), files_root) == files_root / "team"
    assert resolve_ingest_folder("alias", files_root) == files_root / "team"
    assert resolve_ingest_folder(".", files_root) == files_root


@pytest.mark.parametrize(
    ("folder", "why"),
    [
        ("../elsewhere", "'..'"),
        ("team/../../elsewhere", "'..'"),
        ("escape", "leads outside the files root"),
        (".private", "hidden folder"),
    ],
)
def test_folders_that_leave_the_files_root_are_refused(files_root: Path, folder: str, why: str) -> None:
    with pytest.raises(IngestError, match=why) as caught:
        resolve_ingest_folder(folder, files_root)
    message = str(caught.value)
    assert repr(folder) in message
    assert str(files_root) in message and "AGRAG_FILES_ROOT" in message
    assert "give `agrag ingest` a folder inside it" in message


def test_an_absolute_folder_outside_the_files_root_is_refused(files_root: Path) -> None:
    with pytest.raises(IngestError, match="outside the files root"):
        resolve_ingest_folder(str(files_root.parent / "elsewhere"), files_root)


def test_a_missing_folder_inside_the_files_root_is_not_a_folder(files_root: Path) -> None:
    with pytest.raises(IngestError, match=r"'nope' is not a folder\. Give `agrag ingest` a folder of documents"):
        resolve_ingest_folder("nope", files_root)


def test_messages_name_where_the_folder_was_given(files_root: Path) -> None:
    with pytest.raises(IngestError) as form:
        resolve_ingest_folder("nope", files_root, RunSource.PREFECT)
    assert "Set the form's field `folder` to a folder of documents" in str(form.value)
    assert "agrag ingest" not in str(form.value)
    with pytest.raises(IngestError) as request:
        resolve_ingest_folder("../elsewhere", files_root, RunSource.HTTP)
    assert "set `folder` in the request to a folder inside it" in str(request.value)


def test_without_a_files_root_any_folder_will_do(tmp_path: Path) -> None:
    assert checked_folder(str(tmp_path)) == tmp_path.resolve()
    (tmp_path / "file.md").write_text("x")
    with pytest.raises(IngestError, match=r"\(\.md, \.txt, \.rst, \.html, \.pdf, \.csv\)"):
        checked_folder(str(tmp_path / "file.md"))
