from pathlib import Path

import pytest

from agrag.components.errors import (
    FileOutsideRootError,
    FileSelectionError,
    NoFilesMatchedError,
    NoFilesRootError,
    TooManyFilesError,
)
from agrag.components.loaders.file_selection import FileSelection, select_files
from agrag.components.loaders.folder_loader import SUFFIXES

MARKDOWN = (".md", ".txt")


@pytest.fixture
def files_root(tmp_path: Path) -> Path:
    root = tmp_path / "files"
    for name in ("team/notes/a.md", "team/notes/b.txt", "team/c.md", "team/image.png", "reports/q3/r.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"# {name}\n\ntext\n")
    (root / ".private").mkdir()
    (root / ".private" / "secret.md").write_text("secret")
    (root / "team" / ".draft.md").write_text("draft")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.md").write_text("outside")
    (root / "escape").symlink_to(outside, target_is_directory=True)
    (root / "team" / "leak.md").symlink_to(outside / "x.md")
    (root / "team" / "alias.md").symlink_to(root / "team" / "c.md")
    return root


def test_paths_and_globs_become_one_run_of_their_common_folder(files_root: Path) -> None:
    one = select_files(["team/notes/a.md"], files_root, SUFFIXES)
    assert one == FileSelection(files_root / "team" / "notes", ("a.md",))
    notes = select_files(["team/notes/*"], files_root, SUFFIXES)
    assert notes == FileSelection(files_root / "team" / "notes", ("a.md", "b.txt"))
    patterns = ["team/[ac]*", "team/notes/*", "reports/**/*.md", str(files_root / "team/notes/a.md")]
    spread = select_files(patterns, files_root, MARKDOWN)
    assert spread.folder == files_root
    # the symlink to c.md is c.md once; a glob skips hidden files and other suffixes
    assert spread.files == ("reports/q3/r.md", "team/c.md", "team/notes/a.md", "team/notes/b.txt")


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("../elsewhere/x.md", "'..'"),
        ("team/../../elsewhere/x.md", "'..'"),
        ("escape/x.md", "leads outside the files root \\(through a symlink\\)"),
        ("escape/*.md", "leads outside the files root"),
        ("team/leak.md", "leads outside the files root"),
        ("team/*.md", "leads outside the files root"),
        (".private/secret.md", "hidden"),
        ("team/.draft.md", "hidden"),
        ("", "empty"),
    ],
)
def test_a_path_that_leaves_the_root_or_is_hidden_is_refused(files_root: Path, pattern: str, why: str) -> None:
    with pytest.raises(FileOutsideRootError, match=why) as caught:
        select_files([pattern], files_root, SUFFIXES)
    assert str(files_root) in str(caught.value) and "relative to it" in str(caught.value)


def test_an_absolute_path_outside_the_root_is_refused(files_root: Path, tmp_path: Path) -> None:
    with pytest.raises(FileOutsideRootError, match="leads outside"):
        select_files([str(tmp_path / "elsewhere" / "x.md")], files_root, SUFFIXES)


@pytest.mark.parametrize("pattern", ["team/none.md", "team/*.pdf", "team/image.png", "team", "nowhere/**/*.md"])
def test_a_pattern_without_a_readable_file_is_no_match(files_root: Path, pattern: str) -> None:
    with pytest.raises(NoFilesMatchedError, match="matches no file") as caught:
        select_files(["team/c.md", pattern], files_root, MARKDOWN)
    assert caught.value.pattern == pattern and ".md, .txt" in str(caught.value)


def test_more_files_than_the_limit_are_refused(files_root: Path) -> None:
    for n in range(51):
        (files_root / "many" / f"{n:02}.md").parent.mkdir(exist_ok=True)
        (files_root / "many" / f"{n:02}.md").write_text("x")
    assert len(select_files(["many/0*.md", "many/[1-4]*.md"], files_root, MARKDOWN).files) == 50
    with pytest.raises(TooManyFilesError, match="match 51 files, more than the 50") as caught:
        select_files(["many/*.md"], files_root, MARKDOWN)
    assert caught.value.count == 51
    with pytest.raises(TooManyFilesError, match="match 2 files, more than the 1"):
        select_files(["team/notes/*"], files_root, MARKDOWN, max_files=1)


def test_without_a_files_root_nothing_is_read(files_root: Path) -> None:
    with pytest.raises(NoFilesRootError, match="--files-root") as caught:
        select_files(["team/c.md"], None, MARKDOWN)
    assert isinstance(caught.value, FileSelectionError)
