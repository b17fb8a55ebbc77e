"""The files preview: bounded middle samples read by position, paging, refusals outside the files root, the CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agrag.components.loaders import file_preview
from agrag.components.loaders.file_preview import PreviewFormat, preview_files
from agrag.components.text_preview_errors import NoPreviewRootError, PreviewError, PreviewRefusedError
from agrag.service.cli import app
from tests.conftest import EXAMPLES

SUFFIXES = (".md", ".txt", ".rst", ".csv", ".html", ".pdf")
BIG_LINES = 100_000


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    (folder / "notes").mkdir(parents=True)
    for source in EXAMPLES.iterdir():
        (folder / "notes" / source.name).write_bytes(source.read_bytes())
    lines = [f"row {i:06d}: Ada Lovelace met Maria Chen about the Orion Planner." for i in range(BIG_LINES)]
    (folder / "big.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "big.csv").write_text("id,name,city\n" + "".join(f"{i},Name {i},City {i}\n" for i in range(200_000)))
    return folder


def test_a_large_file_is_sampled_from_its_middle_reading_a_bounded_window(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert (root / "big.md").stat().st_size > 5_000_000
    reads: list[tuple[int, int]] = []
    real_pread = os.pread

    def counting(fd: int, length: int, offset: int) -> bytes:
        reads.append((length, offset))
        return real_pread(fd, length, offset)

    monkeypatch.setattr(os, "pread", counting)
    page = preview_files(["big.md"], root, SUFFIXES, chars=1000)
    found = page.files[0]
    assert found.format is PreviewFormat.MARKDOWN and found.size > 5_000_000 and not found.whole
    assert 0 < len(found.sample) <= 1000
    assert sum(length for length, _ in reads) <= 1000 * 4 + 2 * file_preview.LINE_SLACK, "a window, not the file"
    numbers = [int(line[4:10]) for line in found.sample.splitlines()]
    assert all(line.startswith("row ") and line.endswith("Planner.") for line in found.sample.splitlines())
    assert abs(numbers[len(numbers) // 2] - BIG_LINES // 2) < 50, "the sample comes from the middle"
    assert found.window[0] > 2_000_000 and found.window[1] - found.window[0] <= 1000 * 4 + 2 * file_preview.LINE_SLACK


def test_a_csv_sample_starts_with_its_header_and_html_shows_text(root: Path) -> None:
    csv = preview_files(["big.csv"], root, SUFFIXES, chars=300).files[0]
    assert csv.sample.startswith("id,name,city\n") and len(csv.sample) <= 300
    rows = csv.sample.splitlines()[1:]
    assert rows and all(len(row.split(",")) == 3 for row in rows)
    html = preview_files(["notes/vendors.html"], root, SUFFIXES).files[0]
    assert html.format is PreviewFormat.HTML and "<" not in html.sample and "Northlight Optics" in html.sample


def test_pages_cover_every_matched_file_once(root: Path) -> None:
    first = preview_files(["notes/*"], root, SUFFIXES, limit=4, chars=200)
    assert first.total == len(list(EXAMPLES.iterdir())) and len(first.files) == 4 and first.next_offset == 4
    seen = [f.path for f in first.files]
    offset: int | None = first.next_offset
    while offset is not None:
        page = preview_files(["notes/*"], root, SUFFIXES, offset=offset, limit=4, chars=200)
        seen += [f.path for f in page.files]
        offset = page.next_offset
    assert seen == sorted(f"notes/{p.name}" for p in EXAMPLES.iterdir())
    assert preview_files(["notes/*"], root, SUFFIXES, offset=100).files == ()
    everything = preview_files([], root, SUFFIXES, limit=100)
    assert everything.total == first.total + 2 and everything.next_offset is None


def test_paths_outside_the_files_root_are_refused(root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nnot for you\n", encoding="utf-8")
    (root / "link.md").symlink_to(secret)
    (root / ".hidden.md").write_text("hidden", encoding="utf-8")
    for pattern in ("../secret.md", str(secret), "link.md", ".hidden.md"):
        with pytest.raises(PreviewRefusedError, match="Refusing to preview") as refused:
            preview_files([pattern], root, SUFFIXES)
        assert "not for you" not in str(refused.value)
    page = preview_files(["*.md"], root, SUFFIXES)  # a glob skips the escaping symlink and names it (issue 43)
    assert [f.path for f in page.files] == ["big.md"] and "not for you" not in page.model_dump_json()
    assert page.notes == ("link.md: it leads outside the files root (through a symlink)",)
    with pytest.raises(PreviewRefusedError, match="through a symlink"):
        preview_files(["link*"], root, SUFFIXES)  # a glob that matches only the link is refused, as its path is
    with pytest.raises(NoPreviewRootError, match="files root"):
        preview_files(["*.md"], None, SUFFIXES)
    with pytest.raises(PreviewError, match="chars"):
        preview_files(["*.md"], root, SUFFIXES, chars=10)


def test_the_cli_previews_the_files_root(root: Path, tmp_path: Path) -> None:
    env = {"AGRAG_FILES_ROOT": str(root), "AGRAG_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "200"}
    shown = CliRunner().invoke(app, ["preview", "notes/*.md", "--limit", "2", "--chars", "300"], env=env)
    assert shown.exit_code == 0, shown.output
    assert "notes/incidents.md" in shown.output and "next page: --offset 2" in shown.output
    as_json = CliRunner().invoke(app, ["preview", "big.md", "--json", "--chars", "500"], env=env)
    data = json.loads(as_json.output)
    assert data["total"] == 1 and data["files"][0]["path"] == "big.md" and len(data["files"][0]["sample"]) <= 500
    refused = CliRunner().invoke(app, ["preview", "../x.md"], env=env)
    assert refused.exit_code == 1 and "Refusing to preview" in refused.output and "Traceback" not in refused.output
