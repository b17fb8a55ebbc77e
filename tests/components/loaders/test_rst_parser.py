from agrag.components.loaders.rst_parser import parse_rst

TEXT = """=========
 Project
=========

Intro paragraph
continues here.

Overview
========

+------------+----------+
| Name       | Role     |
+============+==========+
| Maria Chen | Author   |
+------------+----------+
| Bo         | Tester   |
|            | and lead |
+------------+----------+

Details
-------

A literal block::

    Code
    ====

Another
=======

----------

Tail.
"""


def test_section_levels_follow_the_order_adornment_styles_first_appear() -> None:
    parsed = parse_rst(TEXT, "stem")
    assert [(h.level, h.text) for h in parsed.headings] == [
        (1, "Project"),
        (2, "Overview"),
        (3, "Details"),
        (2, "Another"),
    ]
    assert TEXT[parsed.headings[0].start : parsed.headings[0].end] == "=========\n Project\n=========\n"
    assert TEXT[parsed.headings[1].start : parsed.headings[1].end] == "Overview\n========\n"
    assert parsed.title == "Project"


def test_a_grid_table_has_cells_header_rows_and_row_spans() -> None:
    (table,) = parse_rst(TEXT, "stem").tables
    cells = {(c.row, c.column): TEXT[c.start : c.end] for c in table.cells}
    assert cells[(0, 0)] == "Name"
    assert cells[(1, 0)] == "Maria Chen"
    assert cells[(1, 1)] == "Author"
    assert cells[(2, 0)] == "Bo"
    assert cells[(2, 1)].startswith("Tester") and cells[(2, 1)].endswith("and lead")
    assert table.header_rows == 1
    assert table.row_count == 3
    assert TEXT[table.row_spans[1][0] : table.row_spans[1][1]] == "| Maria Chen | Author   |"
    assert TEXT[table.start : table.end].startswith("+---") and TEXT[table.start : table.end].endswith("---+")


def test_short_underlines_paragraph_lines_and_merged_cells_are_not_structure() -> None:
    text = "Long title\n===\n\nline one\nline two\n--------\n\n+---+---+\n| merged|\n+---+---+\n"
    parsed = parse_rst(text, "plain")
    assert parsed.headings == ()
    assert parsed.tables == ()
    assert parsed.title == "plain"
