from agrag.components.loaders.markdown_parser import parse_markdown

TEXT = """# Team Notes

Intro.

```
# not a heading
| a | b |
|---|---|
```

## People ##

| Name | Role |
|:-----|-----:|
| Maria Chen | Author |
|  | lead \\| owner |

~~~python
## also not a heading
~~~
### Deep
#hashtag is text
"""


def test_atx_headings_outside_fences_span_their_line_and_newline() -> None:
    parsed = parse_markdown(TEXT, "notes")
    assert [(h.level, h.text) for h in parsed.headings] == [(1, "Team Notes"), (2, "People"), (3, "Deep")]
    assert [TEXT[h.start : h.end] for h in parsed.headings] == ["# Team Notes\n", "## People ##\n", "### Deep\n"]
    assert parsed.title == "Team Notes"
    assert parsed.text == TEXT


def test_a_pipe_table_has_exact_cell_offsets_and_skips_the_delimiter_row() -> None:
    (table,) = parse_markdown(TEXT, "notes").tables
    cells = {(c.row, c.column): TEXT[c.start : c.end] for c in table.cells}
    assert cells == {
        (0, 0): "Name",
        (0, 1): "Role",
        (1, 0): "Maria Chen",
        (1, 1): "Author",
        (2, 0): "",
        (2, 1): "lead \\| owner",
    }
    assert table.header_rows == 1
    assert table.row_count == 3
    assert [TEXT[a:b] for a, b in table.row_spans] == [
        "| Name | Role |",
        "| Maria Chen | Author |",
        "|  | lead \\| owner |",
    ]
    assert TEXT[table.start : table.end].startswith("| Name") and TEXT[table.start : table.end].endswith("owner |")


def test_a_table_without_outer_pipes_and_a_title_from_the_stem() -> None:
    text = "Intro\n\nName | Role\n--- | ---\nBo | Tester\n\nafter"
    parsed = parse_markdown(text, "people")
    (table,) = parsed.tables
    assert [text[c.start : c.end] for c in table.cells] == ["Name", "Role", "Bo", "Tester"]
    assert parsed.title == "people"
    assert parsed.headings == ()


def test_a_row_without_a_matching_delimiter_is_no_table() -> None:
    assert parse_markdown("a | b\n---\nc | d\n", "x").tables == ()
    assert parse_markdown("a | b\n|---|---|---|\n", "x").tables == ()
