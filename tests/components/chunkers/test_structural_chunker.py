from agrag.components.chunkers.structural_chunker import StructuralChunker
from agrag.components.data_models.document import Document, content_version
from agrag.components.data_models.loaded_document import LoadedDocument

MARKDOWN = """# Orion Planner

Intro text about the planner.

## Design

The design has three parts.

### Route planning

Routes follow aisle segments.

## History

Maria Chen wrote it.
"""


def loaded(text: str, path: str = "orion.md") -> LoadedDocument:
    return LoadedDocument(Document("d1", content_version(text), "Orion Planner", path), text)


def test_every_chunk_is_the_exact_span_of_its_version() -> None:
    doc = loaded(MARKDOWN)
    chunks = StructuralChunker().chunk(doc)
    assert chunks
    for chunk in chunks:
        assert MARKDOWN[chunk.start : chunk.end] == chunk.text
        assert chunk.document_version == doc.document.version


def test_heading_paths_and_parents_follow_the_outline() -> None:
    chunks = StructuralChunker().chunk(loaded(MARKDOWN))
    by_path = {c.heading_path: c for c in chunks}
    assert list(by_path) == [
        ("Orion Planner",),
        ("Orion Planner", "Design"),
        ("Orion Planner", "Design", "Route planning"),
        ("Orion Planner", "History"),
    ]
    route = by_path[("Orion Planner", "Design", "Route planning")]
    assert route.parent_id == by_path[("Orion Planner", "Design")].id
    assert by_path[("Orion Planner", "History")].parent_id == by_path[("Orion Planner",)].id
    assert by_path[("Orion Planner",)].parent_id is None
    assert [c.order for c in chunks] == list(range(len(chunks)))


def test_headings_without_body_make_no_chunk() -> None:
    text = "# Title\n\n## Empty\n\n### Child\n\nBody.\n"
    chunks = StructuralChunker().chunk(loaded(text))
    assert [c.heading_path for c in chunks] == [("Title", "Empty", "Child")]


def test_long_sections_split_at_paragraphs_within_the_limit() -> None:
    paragraphs = [f"Paragraph {i} " + "word " * 60 for i in range(10)]
    text = "# T\n\n" + "\n\n".join(paragraphs) + "\n"
    chunks = StructuralChunker(max_chars=400).chunk(loaded(text))
    assert len(chunks) > 3
    assert all(len(c.text) <= 400 for c in chunks)
    assert all(c.heading_path == ("T",) for c in chunks)
    assert all(text[c.start : c.end] == c.text for c in chunks)


def test_headings_inside_code_fences_are_not_headings() -> None:
    text = "# T\n\n```\n# not a heading\n```\n\nAfter.\n"
    chunks = StructuralChunker().chunk(loaded(text))
    assert len(chunks) == 1


def test_plain_text_is_one_section_under_its_title() -> None:
    text = "First paragraph.\n\nSecond paragraph.\n"
    chunks = StructuralChunker().chunk(loaded(text, "glossary.txt"))
    assert [(c.heading_path, c.text) for c in chunks] == [(("Orion Planner",), text.strip())]


def test_chunk_ids_name_document_version_and_order() -> None:
    doc = loaded(MARKDOWN)
    first = StructuralChunker().chunk(doc)[0]
    assert first.id == f"d1.{doc.document.version}.0"
