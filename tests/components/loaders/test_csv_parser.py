import pytest

from agrag.components.loaders.csv_parser import parse_csv, sniff_delimiter
from agrag.components.loaders.file_failure import UnreadableFileError


def test_fields_point_into_the_source_even_quoted_across_lines() -> None:
    text = 'name;role;note\nMaria Chen;Author;"said ""hi""; then\nleft"\n\n Bo ; ;x\n'
    parsed = parse_csv(text, "people")
    (table,) = parsed.tables
    cells = {(c.row, c.column): text[c.start : c.end] for c in table.cells}
    assert cells == {
        (0, 0): "name",
        (0, 1): "role",
        (0, 2): "note",
        (1, 0): "Maria Chen",
        (1, 1): "Author",
        (1, 2): 'said ""hi""; then\nleft',
        (2, 0): "Bo",
        (2, 1): "",
        (2, 2): "x",
    }
    assert table.header_rows == 1
    assert [text[a:b] for a, b in table.row_spans] == [
        "name;role;note",
        'Maria Chen;Author;"said ""hi""; then\nleft"',
        " Bo ; ;x",
    ]
    assert parsed.text == text
    assert parsed.title == "people"


@pytest.mark.parametrize(
    ("text", "delimiter"),
    [("a,b\n1,2\n", ","), ("a;b;c\n1;2,5;3\n", ";"), ("a\tb\n1\t2\n", "\t"), ("a|b\n1|2\n", "|"), ("one\n", ",")],
)
def test_the_delimiter_is_sniffed(text: str, delimiter: str) -> None:
    assert sniff_delimiter(text) == delimiter


def test_ragged_rows_trailing_delimiters_and_an_unterminated_quote_still_give_cells() -> None:
    text = 'a,b,\nonly\nx,"open\n'
    (table,) = parse_csv(text, "r").tables
    assert [(c.row, text[c.start : c.end]) for c in table.cells] == [
        (0, "a"),
        (0, "b"),
        (0, ""),
        (1, "only"),
        (2, "x"),
        (2, "open"),
    ]


def test_a_csv_without_fields_is_empty() -> None:
    with pytest.raises(UnreadableFileError, match="empty file"):
        parse_csv("\n\n", "e")
