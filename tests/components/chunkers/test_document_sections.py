from dataclasses import replace

import pytest

from agrag.components.chunkers.document_sections import (
    ChunkDraft,
    TextBlock,
    build_chunks,
    cut_at_spaces,
    sections,
    table_pieces,
)
from agrag.components.data_models.chunk import SECTION_CHUNK, TABLE_CHUNK
from agrag.components.data_models.document_structure import HeadingMark, TableRegion
from tests.support.markdown_marks import markdown_document, pipe_table

OUTLINE = """Before any heading.

# Orion

Intro.

## Design

### Routes

Routes text.

## Empty

# Second top

Tail.
"""


def test_sections_follow_the_heading_marks_with_paths_and_enclosing_sections() -> None:
    loaded = markdown_document(OUTLINE)
    found = sections(loaded)
    assert [s.path for s in found] == [
        ("Orion",),
        ("Orion",),
        ("Orion", "Design"),
        ("Orion", "Design", "Routes"),
        ("Orion", "Empty"),
        ("Second top",),
    ]
    assert [s.parent for s in found] == [None, None, 1, 2, 1, None]
    assert [s.level for s in found] == [0, 1, 2, 3, 2, 1]
    # each section runs to the next heading at any level
    assert [OUTLINE[s.start : s.end].split("\n", 1)[0] for s in found[1:]] == [
        "# Orion",
        "## Design",
        "### Routes",
        "## Empty",
        "# Second top",
    ]
    # headings with no body have no blocks
    assert [len(s.blocks) for s in found] == [1, 1, 0, 1, 0, 1]


def test_text_before_the_first_heading_has_the_document_title_as_its_path() -> None:
    loaded = markdown_document("Loose words.\n\n## Part\n\nBody.\n", title="Notes")
    assert [s.path for s in sections(loaded)] == [("Notes",), ("Part",)]


def test_a_document_without_headings_is_one_section_and_an_empty_one_has_no_blocks() -> None:
    assert [s.path for s in sections(markdown_document("Only text.\n", path="a.txt"))] == [("a.txt",)]
    empty = sections(markdown_document("", path="empty.md"))
    assert [(s.start, s.end, s.blocks) for s in empty] == [(0, 0, ())]


def test_a_first_text_block_starts_at_the_heading_and_its_own_words_after_it() -> None:
    text = "# T\n\nBody words.\n"
    (section,) = sections(markdown_document(text))
    (block,) = section.blocks
    assert isinstance(block, TextBlock)
    assert (block.start, text[block.body_start :].strip()) == (0, "Body words.")


def test_heading_marks_that_end_before_the_newline_work_too() -> None:
    text = "Title\n=====\n\nBody.\n"
    loaded = replace(markdown_document(text), headings=(HeadingMark(0, 11, 1, "Title"),))
    (section,) = sections(loaded)
    assert section.path == ("Title",)
    assert len(section.blocks) == 1


def test_tables_are_blocks_of_their_own_between_text_runs() -> None:
    text = "# T\n\nBefore.\n\n" + pipe_table(2) + "\nAfter.\n"
    (section,) = sections(markdown_document(text))
    kinds = [type(b).__name__ for b in section.blocks]
    assert kinds == ["TextBlock", "TableRegion", "TextBlock"]


def test_a_heading_followed_directly_by_a_table_yields_only_the_table_block() -> None:
    text = "# T\n\n" + pipe_table(2)
    (section,) = sections(markdown_document(text))
    assert [type(b).__name__ for b in section.blocks] == ["TableRegion"]


def _table(text: str) -> TableRegion:
    (table,) = markdown_document(text).tables
    return table


def test_a_table_of_70_body_rows_is_cut_into_three_pieces_of_whole_rows() -> None:
    text = "Intro.\n\n" + pipe_table(70) + "\nOutro.\n"
    pieces = table_pieces(text, _table(text), max_rows=30)
    assert len(pieces) == 3
    lines = [text[p.start : p.end].splitlines() for p in pieces]
    assert [len(piece_lines) for piece_lines in lines] == [32, 30, 10]  # header and separator in the first only
    assert lines[0][0].startswith("| Name ")
    assert lines[1][0].startswith("| r31c0 ") and lines[2][-1].startswith("| r70c0 ")
    assert all(not p_lines[0].startswith("| Name ") for p_lines in lines[1:])
    for piece in pieces:
        assert text[piece.start : piece.end] == text[piece.start : piece.end].strip()
        assert all(piece.start <= c.start <= c.end <= piece.end for c in piece.cells)
    assert sorted({c.row for c in pieces[2].cells}) == list(range(61, 71))


def test_table_cells_keep_their_addresses_and_exact_offsets() -> None:
    text = pipe_table(10)
    pieces = table_pieces(text, _table(text), max_rows=4)
    for piece in pieces:
        for cell in piece.cells:
            content = text[cell.start : cell.end]
            if cell.row == 0:
                assert content == ("Name", "Owner", "Note")[cell.column]
            elif cell.column == 2 and cell.row % 7 == 3:
                assert content == ""  # an empty cell
            else:
                assert content == f"r{cell.row}c{cell.column}"
    assert [sorted({c.row for c in p.cells}) for p in pieces] == [[0, 1, 2, 3, 4], [5, 6, 7, 8], [9, 10]]


def test_without_row_spans_rows_are_found_from_the_cells_lines() -> None:
    text = "Intro.\n\n" + pipe_table(7)
    table = _table(text)
    assert table_pieces(text, replace(table, row_spans=()), 3) == table_pieces(text, table, 3)


def test_a_table_with_only_a_header_row_is_one_piece() -> None:
    text = "| A | B |\n|---|---|\n"
    (piece,) = table_pieces(text, _table(text), max_rows=30)
    assert text[piece.start : piece.end] == text.strip()


@pytest.mark.parametrize("max_chars", [5, 12, 40])
def test_cut_at_spaces_keeps_spans_within_the_limit_and_cuts_long_words_hard(max_chars: int) -> None:
    text = "short words then averyveryverylongwordwithoutspaces and more"
    spans = cut_at_spaces(text, 0, len(text), max_chars)
    assert all(0 < end - start <= max_chars for start, end in spans)
    assert "".join(text[s:e] for s, e in spans).replace(" ", "") == text.replace(" ", "")


def test_build_chunks_numbers_drafts_and_links_parents_by_index() -> None:
    loaded = markdown_document("# T\n\nOne.\n\nTwo.\n")
    drafts = [
        ChunkDraft(0, 15, ("T",), SECTION_CHUNK),
        ChunkDraft(0, 9, ("T",), parent=0),
        ChunkDraft(11, 15, ("T",), TABLE_CHUNK, parent=0),
    ]
    chunks = build_chunks(loaded, drafts)
    version = loaded.document.version
    assert [c.id for c in chunks] == [f"d1.{version}.{n}" for n in range(3)]
    assert [c.parent_id for c in chunks] == [None, chunks[0].id, chunks[0].id]
    assert [c.searchable for c in chunks] == [False, True, True]
    assert all(c.text == loaded.text[c.start : c.end] and c.title == "T" for c in chunks)
