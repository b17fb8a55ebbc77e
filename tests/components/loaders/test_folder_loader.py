import os
from pathlib import Path

import pytest
from fpdf import FPDF

from agrag.components.data_models.document import content_version, document_id_for
from agrag.components.errors import ConfigError, IngestError
from agrag.components.loaders import folder_loader
from agrag.components.loaders.file_failure import FileFailure
from agrag.components.loaders.folder_loader import FolderLoader


def _pdf_bytes(text: str) -> bytes:
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.cell(text=text)
    return bytes(pdf.output())


def test_every_format_loads_with_its_structure(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_text("# Alpha Notes\n\n| Name | Role |\n|---|---|\n| Maria Chen | Author |\r\n")
    (tmp_path / "b.txt").write_text("plain")
    (tmp_path / "c.rst").write_text("Gamma\n=====\n\nBody.\n")
    (tmp_path / "d.html").write_text("<title>Delta</title><h1>Delta page</h1><p>Body</p>")
    (tmp_path / "sub" / "e.csv").write_text("name,role\nMaria Chen,Author\n")
    (tmp_path / "sub" / "f.pdf").write_bytes(_pdf_bytes("Maria Chen wrote it."))
    (tmp_path / "g.docx").write_bytes(b"skipped silently")
    out = FolderLoader().run(root=str(tmp_path))
    assert out["failures"] == []
    docs = {d.document.source_path: d for d in out["documents"]}
    assert list(docs) == ["a.md", "b.txt", "c.rst", "d.html", "sub/e.csv", "sub/f.pdf"]
    md = docs["a.md"]
    assert md.text == "# Alpha Notes\n\n| Name | Role |\n|---|---|\n| Maria Chen | Author |\n"
    assert md.document.id == document_id_for("a.md", tmp_path.name)
    assert md.document.version == content_version(md.text)
    assert md.document.title == "Alpha Notes"
    assert [h.text for h in md.headings] == ["Alpha Notes"]
    assert [md.text[c.start : c.end] for c in md.tables[0].cells][2:] == ["Maria Chen", "Author"]
    assert docs["b.txt"].document.title == "b"
    assert [h.text for h in docs["c.rst"].headings] == ["Gamma"]
    assert docs["d.html"].document.title == "Delta"
    assert docs["d.html"].text == "# Delta page\n\nBody\n"
    csv = docs["sub/e.csv"]
    assert csv.document.id == document_id_for("sub/e.csv", tmp_path.name)
    assert csv.text[csv.tables[0].cells[2].start : csv.tables[0].cells[2].end] == "Maria Chen"
    assert docs["sub/f.pdf"].text == "Maria Chen wrote it."


def test_a_changed_file_keeps_its_id_and_gets_a_new_version(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("one")
    (first,) = FolderLoader().run(root=str(tmp_path))["documents"]
    path.write_text("two")
    (second,) = FolderLoader().run(root=str(tmp_path))["documents"]
    assert first.document.id == second.document.id
    assert first.document.version != second.document.version


def test_bad_files_are_reported_and_the_good_ones_load(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.md").write_text("# Secret")
    root = tmp_path / "root"
    (root / ".hidden").mkdir(parents=True)
    (root / "good.md").write_text("# Good\n\nfine")
    (root / "good.csv").write_text("a;b\n1;2\n")
    (root / "binary.txt").write_bytes(b"text\x00\x01\x02")
    (root / "blank.md").write_text("  \n\n")
    (root / "zero.pdf").write_bytes(b"")
    (root / "latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    (root / "big.txt").write_text("x" * 2000)
    (root / "link.md").symlink_to(elsewhere / "secret.md")
    (root / "dangling.md").symlink_to(root / "missing.md")
    (root / "broken.pdf").write_bytes(b"%PDF-1.7\n%%EOF\n")
    (root / ".hidden.md").write_text("hidden")
    (root / ".hidden" / "inside.md").write_text("hidden")
    (root / "outside_folder").symlink_to(elsewhere, target_is_directory=True)
    out = FolderLoader(max_bytes=1000).run(root=str(root))
    assert [d.document.source_path for d in out["documents"]] == ["good.csv", "good.md"]
    reasons = {f.source_path: f.reason for f in out["failures"]}
    assert list(reasons) == sorted(reasons), "failures come in path order"
    assert reasons == {
        "big.txt": "2000 bytes is over the limit of 1000 (ingest.loader.max_file_bytes)",
        "binary.txt": "binary file, not text",
        "blank.md": "empty file",
        "broken.pdf": "not a readable PDF: startxref not found",
        "dangling.md": "symlink leads nowhere (its target does not exist)",
        "latin1.md": "not valid UTF-8 (byte 3)",
        "link.md": "symlink leads outside the ingested folder",
        "zero.pdf": "empty file",
    }


def test_a_parser_crash_is_one_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(text: str, stem: str) -> None:  # a fake parser: no real one is known to crash
        raise RuntimeError("boom")

    monkeypatch.setitem(folder_loader.TEXT_PARSERS, ".rst", crash)
    (tmp_path / "a.rst").write_text("x")
    (tmp_path / "b.md").write_text("y")
    out = FolderLoader().run(root=str(tmp_path))
    assert out["failures"] == [FileFailure("a.rst", "could not parse: RuntimeError: boom")]
    assert [d.document.source_path for d in out["documents"]] == ["b.md"]


def test_only_the_wanted_suffixes_are_read(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a")
    (tmp_path / "b.TXT").write_text("b")
    out = FolderLoader(suffixes=("txt",)).run(root=str(tmp_path))
    assert [d.document.source_path for d in out["documents"]] == ["b.TXT"]


def test_bad_settings_are_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"No loader reads \.docx"):
        FolderLoader(suffixes=(".md", ".docx"))
    with pytest.raises(ConfigError, match="at least 1"):
        FolderLoader(max_bytes=0)


def test_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="not a folder"):
        FolderLoader().run(root=str(tmp_path / "nope"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_is_not_a_regular_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    assert FolderLoader().run(root=str(tmp_path))["failures"] == [FileFailure("pipe.md", "not a regular file")]


def test_chosen_files_load_alone_with_the_ids_of_a_whole_folder_run(tmp_path: Path) -> None:
    root = tmp_path / "files"
    folder = root / "team"
    (folder / "sub").mkdir(parents=True)
    (folder / ".hidden").mkdir()
    for name in ("a.md", "b.md", "sub/c.md", ".hidden/d.md", "e.png"):
        (folder / name).write_text(f"# {name}\n\ntext of {name}\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.md").write_text("outside")
    (folder / "link").symlink_to(folder / "sub", target_is_directory=True)
    (folder / "leak.md").symlink_to(outside / "x.md")
    whole = FolderLoader().run(root=str(folder), files_root=str(root))
    chosen = FolderLoader().run(
        root=str(folder),
        files_root=str(root),
        files=["sub/c.md", "a.md", "a.md", "missing.md", ".hidden/d.md", "../b.md", "e.png", "link/c.md", "leak.md"],
    )
    by_path = {d.document.source_path: d.document for d in whole["documents"]}
    assert [d.document for d in chosen["documents"]] == [by_path["a.md"], by_path["sub/c.md"]]
    assert chosen["documents"][0].document.id == document_id_for("team/a.md")  # relative to the files root
    reasons = {f.source_path: f.reason for f in chosen["failures"]}
    assert reasons == {
        "missing.md": "no such file",
        ".hidden/d.md": "hidden (or below a hidden folder)",
        "../b.md": "not a path inside the ingested folder",
        "e.png": reasons["e.png"],
        "link/c.md": "below a symlinked folder (name the file by its real path)",
        "leak.md": "symlink leads outside the ingested folder",
    }
    assert "ingest.loader.suffixes" in reasons["e.png"]
    assert FolderLoader().run(root=str(folder), files=[]) == {"documents": [], "failures": []}
