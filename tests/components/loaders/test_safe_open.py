import os
from pathlib import Path

import pytest

from agrag.components.loaders.file_failure import UnreadableFileError
from agrag.components.loaders.safe_open import read_below, read_path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """root/team/notes.md, and outside it secret.md and a folder holding another notes.md."""
    root = tmp_path / "root"
    (root / "team").mkdir(parents=True)
    (root / "team" / "notes.md").write_text("# Notes\n\ninside")
    (tmp_path / "secret.md").write_text("the vault code is 4711")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "notes.md").write_text("the vault code is 4711")
    return root


def test_a_file_below_the_root_is_read(tree: Path) -> None:
    assert read_below(tree, ("team", "notes.md"), 1000) == b"# Notes\n\ninside"


def test_a_symlinked_file_is_not_followed_even_to_a_file_inside(tree: Path) -> None:
    (tree / "team" / "alias.md").symlink_to(tree / "team" / "notes.md")
    (tree / "team" / "leak.md").symlink_to(tree.parent / "secret.md")
    for name in ("alias.md", "leak.md"):
        with pytest.raises(UnreadableFileError, match=r"it is a symlink, not followed below the files root"):
            read_below(tree, ("team", name), 1000)


def test_a_symlinked_folder_on_the_way_is_not_followed(tree: Path) -> None:
    (tree / "out").symlink_to(tree.parent / "elsewhere", target_is_directory=True)
    with pytest.raises(UnreadableFileError, match=r"the folder 'out' on its path is a symlink"):
        read_below(tree, ("out", "notes.md"), 1000)
    (tree / "team" / "deeper").symlink_to(tree.parent / "elsewhere", target_is_directory=True)
    with pytest.raises(UnreadableFileError, match=r"the folder 'team/deeper' on its path is a symlink"):
        read_below(tree, ("team", "deeper", "notes.md"), 1000)


@pytest.mark.parametrize("parts", [(), ("..", "secret.md"), ("team", ".hidden.md"), ("", "notes.md"), ("a/b",)])
def test_names_that_are_no_plain_path_below_the_root_are_refused(tree: Path, parts: tuple[str, ...]) -> None:
    with pytest.raises(UnreadableFileError, match="not a path inside the files root"):
        read_below(tree, parts, 1000)


def test_size_type_and_absence_are_checked_on_the_open_file(tree: Path) -> None:
    (tree / "team" / "empty.md").write_text("")
    with pytest.raises(UnreadableFileError, match=r"^empty file$"):
        read_below(tree, ("team", "empty.md"), 1000)
    with pytest.raises(
        UnreadableFileError, match=r"^15 bytes is over the limit of 10 \(ingest.loader.max_file_bytes\)"
    ):
        read_below(tree, ("team", "notes.md"), 10)
    with pytest.raises(UnreadableFileError, match="no such file"):
        read_below(tree, ("team", "gone.md"), 1000)
    with pytest.raises(UnreadableFileError, match="not a regular file"):
        read_below(tree, ("team",), 1000)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_neither_blocks_nor_is_read(tree: Path) -> None:
    os.mkfifo(tree / "team" / "pipe.md")
    for read in (
        lambda: read_below(tree, ("team", "pipe.md"), 1000),
        lambda: read_path(tree / "team" / "pipe.md", 1000),
    ):
        with pytest.raises(UnreadableFileError, match="not a regular file"):
            read()


def test_without_a_files_root_a_path_is_read_through_its_symlinks(tree: Path) -> None:
    (tree / "team" / "alias.md").symlink_to(tree / "team" / "notes.md")
    assert read_path(tree / "team" / "alias.md", 1000) == b"# Notes\n\ninside"
    with pytest.raises(UnreadableFileError, match="no such file"):
        read_path(tree / "gone.md", 1000)
