from pathlib import Path

import pytest

from agrag.components.data_models.document import document_id_for
from agrag.components.errors import IngestError
from agrag.components.loaders.text_file_loader import TextFileLoader


def test_loads_markdown_and_text_with_stable_ids_and_content_versions(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_text("# Alpha Notes\n\nBody\r\n", encoding="utf-8")
    (tmp_path / "sub" / "b.txt").write_text("plain", encoding="utf-8")
    (tmp_path / "ignored.pdf").write_bytes(b"%PDF")
    out = TextFileLoader().run(root=str(tmp_path))
    docs = {d.document.source_path: d for d in out["documents"]}
    assert set(docs) == {"a.md", "sub/b.txt"}
    assert docs["a.md"].document.title == "Alpha Notes"
    assert docs["sub/b.txt"].document.title == "b"
    assert docs["a.md"].document.id == document_id_for("a.md")
    assert docs["a.md"].text == "# Alpha Notes\n\nBody\n", "line endings are normalized"
    assert out["failures"] == []


def test_a_changed_file_keeps_its_id_and_gets_a_new_version(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("one", encoding="utf-8")
    (first,) = TextFileLoader().run(root=str(tmp_path))["documents"]
    path.write_text("two", encoding="utf-8")
    (second,) = TextFileLoader().run(root=str(tmp_path))["documents"]
    assert first.document.id == second.document.id
    assert first.document.version != second.document.version


def test_bad_files_are_reported_and_the_rest_loads(tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.md"
    outside.write_text("secret", encoding="utf-8")
    root = tmp_path / "root"
    root.mkdir()
    (root / "good.md").write_text("# Good\n\nfine", encoding="utf-8")
    (root / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (root / "empty.md").write_text("  \n", encoding="utf-8")
    (root / "big.txt").write_text("x" * 2000, encoding="utf-8")
    (root / "link.md").symlink_to(outside)
    (root / ".hidden.md").write_text("hidden", encoding="utf-8")
    out = TextFileLoader(max_bytes=1000).run(root=str(root))
    assert [d.document.source_path for d in out["documents"]] == ["good.md"]
    reasons = {f.source_path: f.reason for f in out["failures"]}
    assert set(reasons) == {"latin1.txt", "empty.md", "big.txt", "link.md"}
    assert "UTF-8" in reasons["latin1.txt"]
    assert "outside" in reasons["link.md"]
    assert "limit" in reasons["big.txt"]


def test_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="not a folder"):
        TextFileLoader().run(root=str(tmp_path / "nope"))


def test_a_plain_text_title_is_its_short_first_line(tmp_path: Path) -> None:
    (tmp_path / "titled.txt").write_text("Journal of Mathematical Physics\nA peer-reviewed journal.", encoding="utf-8")
    (tmp_path / "one_line.txt").write_text("Only one line here.", encoding="utf-8")
    (tmp_path / "long.txt").write_text("x" * 130 + "\nmore", encoding="utf-8")
    titles = {d.document.source_path: d.document.title for d in TextFileLoader().run(root=str(tmp_path))["documents"]}
    assert titles == {"titled.txt": "Journal of Mathematical Physics", "one_line.txt": "one_line", "long.txt": "long"}
