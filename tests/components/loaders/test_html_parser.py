import pytest

from agrag.components.loaders.file_failure import UnreadableFileError
from agrag.components.loaders.html_parser import parse_html

PAGE = b"""<!doctype html>
<html><head><title>Team &amp; Roles</title><style>p { color: red }</style><script>var x = "<p>no</p>";</script>
</head><body>
<h1>Orion   <em>Planner</em></h1>
<p>Maria Chen wrote the <b>Orion</b>
   Planner.<br>Second line &lt;ok&gt;.</p>
<ul><li>one</li><li>two<ul><li>inner</li></ul></li></ul>
<h2>People</h2>
<table>
  <thead><tr><th>Name</th><th>Role</th></tr></thead>
  <tbody><tr><td>Maria Chen</td><td>Author | lead</td></tr><tr><td>Bo</td></tr></tbody>
</table>
<noscript>enable scripts</noscript><template><p>hidden</p></template>
<p>After&nbsp;the table.</p>
</body></html>"""


def test_the_rendering_is_readable_text() -> None:
    text = parse_html(PAGE, "page").text
    assert text == (
        "# Orion Planner\n"
        "\n"
        "Maria Chen wrote the Orion Planner.\n"
        "Second line <ok>.\n"
        "\n"
        "- one\n"
        "- two\n"
        "  - inner\n"
        "\n"
        "## People\n"
        "\n"
        "| Name | Role |\n"
        "|---|---|\n"
        "| Maria Chen | Author \\| lead |\n"
        "| Bo |  |\n"
        "\n"
        "After the table.\n"
    )


def test_headings_and_table_cells_point_at_the_rendered_text() -> None:
    parsed = parse_html(PAGE, "page")
    text = parsed.text
    assert [(h.level, h.text, text[h.start : h.end]) for h in parsed.headings] == [
        (1, "Orion Planner", "# Orion Planner\n"),
        (2, "People", "## People\n"),
    ]
    (table,) = parsed.tables
    cells = {(c.row, c.column): text[c.start : c.end] for c in table.cells}
    assert cells[(1, 0)] == "Maria Chen"
    assert cells[(1, 1)] == "Author \\| lead"
    assert cells[(2, 1)] == "", "a short row is padded with empty cells"
    assert table.header_rows == 1
    assert [text[a:b] for a, b in table.row_spans] == [
        "| Name | Role |",
        "| Maria Chen | Author \\| lead |",
        "| Bo |  |",
    ]
    assert text[table.start : table.end].startswith("| Name |")
    assert parsed.title == "Team & Roles"


def test_the_title_falls_back_to_the_first_h1_then_the_stem() -> None:
    assert parse_html(b"<h2>Sub</h2><h1>Main</h1><p>x</p>", "s").title == "Main"
    assert parse_html(b"<p>just text</p>", "stem").title == "stem"


def test_inline_tags_in_a_cell_join_and_block_tags_separate() -> None:
    parsed = parse_html(
        b"<table><tr><td>Mar<b>ia</b> Chen<br>lead<table><tr><td>x</td></tr></table></td></tr></table>", "t"
    )
    (cell,) = parsed.tables[0].cells
    assert parsed.text[cell.start : cell.end] == "Maria Chen lead x"


def test_a_table_without_header_cells_has_no_header_row() -> None:
    parsed = parse_html(b"<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>", "t")
    (table,) = parsed.tables
    assert table.header_rows == 0
    assert "---" not in parsed.text
    assert [parsed.text[c.start : c.end] for c in table.cells] == ["a", "b", "c", "d"]


def test_bytes_that_are_not_utf8_use_the_declared_charset() -> None:
    raw = '<meta charset="windows-1252"><p>café – ok</p>'.encode("cp1252")
    assert parse_html(raw, "c").text == "café – ok\n"
    with pytest.raises(UnreadableFileError, match="not valid UTF-8"):
        parse_html("<p>café</p>".encode("latin-1"), "c")


def test_a_page_without_visible_text_is_a_failure() -> None:
    with pytest.raises(UnreadableFileError, match="no visible text"):
        parse_html(b"<html><head><title>T</title><script>x()</script></head><body> </body></html>", "e")
