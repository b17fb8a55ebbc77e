"""Reading below a files root: a symlink swapped in after the listing is not followed; a huge listing is refused."""

import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from agrag.components.errors import IngestError
from agrag.components.loaders import folder_loader, safe_open
from agrag.components.loaders.file_failure import FileFailure
from agrag.components.loaders.folder_loader import FolderLoader
from agrag.components.loaders.loader_errors import ListingTooLargeError

SECRET = "The vault code is 4711."


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A files root with team/notes.md and team/sub/plan.md; outside it, a secret file and a folder of secrets."""
    root = tmp_path / "root"
    (root / "team" / "sub").mkdir(parents=True)
    (root / "team" / "notes.md").write_text("# Notes\n\nThe pump station opens in May.\n")
    (root / "team" / "sub" / "plan.md").write_text("# Plan\n\nRepaint the ferry.\n")
    (root / "team" / "other.md").write_text("# Other\n\nNothing to hide.\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.md").write_text(f"# Secret\n\n{SECRET}\n")
    (outside / "plan.md").write_text(f"# Secret plan\n\n{SECRET}\n")
    return root


def swap_file(root: Path) -> Path:
    """team/notes.md becomes a symlink to the secret file outside the root; returns the path read."""
    target = root / "team" / "notes.md"
    target.unlink()
    target.symlink_to(root.parent / "outside" / "notes.md")
    return target


def swap_folder(root: Path) -> Path:
    """team/sub becomes a symlink to the folder of secrets outside the root; returns the path read."""
    shutil.rmtree(root / "team" / "sub")
    (root / "team" / "sub").symlink_to(root.parent / "outside", target_is_directory=True)
    return root / "team" / "sub" / "plan.md"


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="names the opened files through /proc")
@pytest.mark.parametrize(
    ("swap", "rel", "reason"),
    [
        (swap_file, "notes.md", "it is a symlink, not followed below the files root (AGRAG_FILES_ROOT)"),
        (
            swap_folder,
            "sub/plan.md",
            "the folder 'team/sub' on its path is a symlink (or no longer a folder), not followed below the files "
            "root (AGRAG_FILES_ROOT)",
        ),
    ],
)
def test_a_symlink_swapped_in_after_the_checks_is_not_followed(
    root: Path, monkeypatch: pytest.MonkeyPatch, swap: Callable[[Path], Path], rel: str, reason: str
) -> None:
    swapped: list[Path] = []
    opened: list[str] = []
    real_read_below, real_read_open = folder_loader.read_below, safe_open._read_open

    def read_below_after_a_swap(top: Path, parts: Sequence[str], max_bytes: int) -> bytes:
        # The loader listed the folder and checked this path; the attacker swaps it now, just before the open.
        if "/".join(parts[1:]) == rel and not swapped:
            swapped.append(swap(root))
        return real_read_below(top, parts, max_bytes)

    def recording_read_open(fd: int, max_bytes: int) -> bytes:
        opened.append(os.readlink(f"/proc/self/fd/{fd}"))  # the file this descriptor really is
        return real_read_open(fd, max_bytes)

    monkeypatch.setattr(folder_loader, "read_below", read_below_after_a_swap)
    monkeypatch.setattr(safe_open, "_read_open", recording_read_open)
    out = FolderLoader().run(root=str(root / "team"), files_root=str(root))

    assert swapped, "the hook ran between the listing and the read"
    assert SECRET in swapped[0].read_text(), "a plain open of the path would now read the secret"
    assert out["failures"] == [FileFailure(rel, reason)]
    assert all(SECRET not in loaded.text for loaded in out["documents"])
    assert sorted(loaded.document.source_path for loaded in out["documents"]) == sorted(
        {"notes.md", "other.md", "sub/plan.md"} - {rel}
    ), "the other files are read"
    outside = str(root.parent / "outside")
    assert opened and not [name for name in opened if name.startswith(outside)], "no file outside the root opened"


def test_a_symlink_inside_the_root_is_not_followed_either(root: Path) -> None:
    (root / "team" / "alias.md").symlink_to(root / "team" / "other.md")
    out = FolderLoader().run(root=str(root / "team"), files_root=str(root))
    refused = FileFailure("alias.md", "it is a symlink, not followed below the files root (AGRAG_FILES_ROOT)")
    assert refused in out["failures"]
    without_root = FolderLoader().run(root=str(root / "team"))
    assert "alias.md" in [loaded.document.source_path for loaded in without_root["documents"]]


def test_a_listing_over_the_cap_is_refused_before_any_file_is_read(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[object] = []
    with monkeypatch.context() as patched:
        patched.setattr(folder_loader, "read_below", lambda *args: reads.append(args))
        patched.setattr(folder_loader, "read_path", lambda *args: reads.append(args))
        patched.setattr(folder_loader, "MAX_LISTED_ENTRIES", 3)  # team holds notes.md, other.md, sub, sub/plan.md
        with pytest.raises(ListingTooLargeError) as refused:
            FolderLoader().run(root=str(root / "team"), files_root=str(root))
    assert isinstance(refused.value, IngestError) and reads == []
    message = str(refused.value)
    assert str(root / "team") in message and "more than 3 files and folders" in message
    assert "subfolders" in message and "glob" in message

    monkeypatch.setattr(folder_loader, "MAX_LISTED_ENTRIES", 4)
    out = FolderLoader().run(root=str(root / "team"), files_root=str(root))
    assert len(out["documents"]) == 3, "at the cap the folder is read"


def test_the_default_cap_is_100000_entries() -> None:
    assert folder_loader.MAX_LISTED_ENTRIES == 100_000
