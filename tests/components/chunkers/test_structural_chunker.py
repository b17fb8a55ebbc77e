import itertools

import pytest

from agrag.components.chunkers.structural_chunker import StructuralChunker
from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.chunk import SECTION_CHUNK, TABLE_CHUNK, TEXT_CHUNK, Chunk
from agrag.components.data_models.loaded_document import LoadedDocument
from tests.support.markdown_marks import markdown_document, pipe_table

MARKDOWN = """# Orion Planner

Intro text about the planner.

## Design

The design has three parts.

### Route planning

Routes follow aisle segments.

## History

Maria Chen wrote it.
"""


def paragraphs(count: int, words: int = 30) -> str:
    return "\n\n".join(f"Paragraph {i} " + "word " * words for i in range(count))


def assert_exact_spans(loaded: LoadedDocument, chunks: list[Chunk]) -> None:
    for chunk in chunks:
        assert loaded.text[chunk.start : chunk.end] == chunk.text
        assert chunk.text == chunk.text.strip()
        assert chunk.document_version == loaded.document.version
    assert [c.order for c in chunks] == list(range(len(chunks)))


def test_every_chunk_is_the_exact_span_of_its_version() -> None:
    for text in (MARKDOWN, "# T\n\n" + paragraphs(12) + "\n\n" + pipe_table(40) + "\nEnd.\n"):
        loaded = markdown_document(text)
        chunks = StructuralChunker(max_chars=300, section_max_chars=900, table_max_rows=10).chunk(loaded)
        assert chunks
        assert_exact_spans(loaded, chunks)


def test_short_sections_get_no_section_chunk_and_follow_the_outline() -> None:
    chunks = StructuralChunker().chunk(markdown_document(MARKDOWN))
    assert [c.heading_path for c in chunks] == [
        ("Orion Planner",),
        ("Orion Planner", "Design"),
        ("Orion Planner", "Design", "Route planning"),
        ("Orion Planner", "History"),
    ]
    assert all(c.kind == TEXT_CHUNK and c.parent_id is None for c in chunks)
    assert chunks[0].text.startswith("# Orion Planner\n")  # the heading line belongs to the first child
    assert all(c.title == "Orion Planner" for c in chunks)


def test_a_long_section_gets_one_section_chunk_before_its_children() -> None:
    text = "# T\n\n" + paragraphs(6) + "\n"
    loaded = markdown_document(text)
    chunks = StructuralChunker(max_chars=400).chunk(loaded)
    section, *children = chunks
    assert section.kind == SECTION_CHUNK and not section.searchable
    assert section.text == text.strip()  # heading line through the end of the section
    assert len(children) >= 2
    assert all(c.kind == TEXT_CHUNK and c.searchable and c.parent_id == section.id for c in children)
    assert all(len(c.text) <= 400 for c in children)
    assert section.parent_id is None


def test_a_single_child_section_hangs_under_the_nearest_enclosing_section_chunk() -> None:
    text = "# Top\n\n" + paragraphs(4) + "\n\n## Small\n\nJust this.\n\n### Tiny\n\nAnd this.\n"
    chunks = StructuralChunker(max_chars=300).chunk(markdown_document(text))
    top = chunks[0]
    assert (top.kind, top.heading_path) == (SECTION_CHUNK, ("Top",))
    small, tiny = chunks[-2:]
    assert small.heading_path == ("Top", "Small") and small.parent_id == top.id
    assert tiny.heading_path == ("Top", "Small", "Tiny") and tiny.parent_id == top.id
    assert sum(c.kind == SECTION_CHUNK for c in chunks) == 1


def test_a_section_longer_than_section_max_chars_gets_several_section_chunks() -> None:
    text = "# Long\n\n" + paragraphs(20) + "\n"
    loaded = markdown_document(text)
    chunks = StructuralChunker(max_chars=300, section_max_chars=1000).chunk(loaded)
    assert_exact_spans(loaded, chunks)
    parents = [c for c in chunks if c.kind == SECTION_CHUNK]
    assert len(parents) >= 2
    assert all(len(p.text) <= 1000 for p in parents)
    assert parents[0].text.startswith("# Long\n")
    current: Chunk | None = None
    for chunk in chunks:  # every section chunk comes right before the children it covers
        if chunk.kind == SECTION_CHUNK:
            current = chunk
            continue
        assert current is not None and chunk.parent_id == current.id
        assert current.start <= chunk.start and chunk.end <= current.end
    # together the section chunks cover the section's words, in order, without overlapping
    assert all(a.end <= b.start for a, b in itertools.pairwise(parents))
    assert " ".join(p.text for p in parents).split() == text.split()


def test_headings_without_body_make_no_chunk() -> None:
    text = "# Title\n\n## Empty\n\n### Child\n\nBody.\n"
    chunks = StructuralChunker().chunk(markdown_document(text))
    assert [c.heading_path for c in chunks] == [("Title", "Empty", "Child")]


def test_long_sections_split_at_paragraphs_within_the_limit() -> None:
    text = "# T\n\n" + paragraphs(10, words=60) + "\n"
    children = [c for c in StructuralChunker(max_chars=400).chunk(markdown_document(text)) if c.searchable]
    assert len(children) > 3
    assert all(len(c.text) <= 400 for c in children)
    assert all(c.heading_path == ("T",) for c in children)


def test_a_heading_line_is_never_a_chunk_of_its_own() -> None:
    text = "# Heading\n\n" + "word " * 200 + "\n"
    children = [c for c in StructuralChunker(max_chars=300).chunk(markdown_document(text)) if c.searchable]
    assert children[0].text.startswith("# Heading\n\nword word")
    assert all(len(c.text) <= 300 for c in children)


def test_a_word_longer_than_max_chars_is_cut_hard() -> None:
    word = "x" * 250
    loaded = markdown_document(f"# T\n\nBefore {word} after.\n")
    chunks = StructuralChunker(max_chars=100).chunk(loaded)
    assert_exact_spans(loaded, chunks)
    children = [c for c in chunks if c.searchable]
    assert all(len(c.text) <= 100 for c in children)
    assert "".join(c.text for c in children).count("x") == 250


def test_tables_become_table_chunks_of_at_most_table_max_rows_body_rows() -> None:
    text = "# Parts\n\nThe parts list.\n\n" + pipe_table(70) + "\nThat is all.\n"
    loaded = markdown_document(text)
    chunks = StructuralChunker(table_max_rows=30).chunk(loaded)
    assert_exact_spans(loaded, chunks)
    assert [c.kind for c in chunks] == [SECTION_CHUNK, TEXT_CHUNK, TABLE_CHUNK, TABLE_CHUNK, TABLE_CHUNK, TEXT_CHUNK]
    tables = [c for c in chunks if c.kind == TABLE_CHUNK]
    assert all(c.parent_id == chunks[0].id and c.heading_path == ("Parts",) and c.searchable for c in tables)
    assert [sorted({cell.row for cell in c.cells}) for c in tables] == [
        list(range(31)),
        list(range(31, 61)),
        list(range(61, 71)),
    ]
    for table in tables:
        for cell in table.cells:
            assert table.start <= cell.start <= cell.end <= table.end
            if cell.row and not (cell.column == 2 and cell.row % 7 == 3):
                assert text[cell.start : cell.end] == f"r{cell.row}c{cell.column}"


def test_a_section_that_is_only_a_small_table_is_one_table_chunk() -> None:
    chunks = StructuralChunker().chunk(markdown_document("# T\n\n" + pipe_table(3)))
    assert [(c.kind, c.parent_id) for c in chunks] == [(TABLE_CHUNK, None)]


def test_plain_text_is_one_section_under_its_title() -> None:
    text = "First paragraph.\n\nSecond paragraph.\n"
    chunks = StructuralChunker().chunk(markdown_document(text, path="glossary.txt", title="Glossary"))
    assert [(c.heading_path, c.text) for c in chunks] == [(("Glossary",), text.strip())]


def test_an_empty_document_has_no_chunks() -> None:
    assert StructuralChunker().chunk(markdown_document("")) == []
    assert StructuralChunker().chunk(markdown_document("\n\n  \n")) == []


def test_chunk_ids_name_document_version_and_order() -> None:
    loaded = markdown_document(MARKDOWN)
    chunks = StructuralChunker().chunk(loaded)
    assert [c.id for c in chunks] == [f"d1.{loaded.document.version}.{n}" for n in range(len(chunks))]


def test_run_chunks_every_document_in_order() -> None:
    first, second = markdown_document(MARKDOWN, doc_id="d1"), markdown_document("Other.\n", doc_id="d2")
    chunks = StructuralChunker().run(documents=[first, second])["chunks"]
    assert [c.document_id for c in chunks] == ["d1"] * 4 + ["d2"]


@pytest.mark.parametrize("arguments", [{"max_chars": 0}, {"section_max_chars": 0}, {"table_max_rows": 0}])
def test_invalid_arguments_are_refused(arguments: dict[str, int]) -> None:
    with pytest.raises(ComponentConfigError, match="at least 1"):
        StructuralChunker(**arguments)
