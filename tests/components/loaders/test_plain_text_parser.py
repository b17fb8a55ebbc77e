from agrag.components.loaders.plain_text_parser import parse_plain_text


def test_a_short_first_line_followed_by_more_text_is_the_title() -> None:
    assert parse_plain_text("Journal of Physics\nA journal.", "j").title == "Journal of Physics"
    assert parse_plain_text("Only one line.", "one_line").title == "one_line"
    assert parse_plain_text("x" * 130 + "\nmore", "long").title == "long"


def test_plain_text_has_no_structure_and_keeps_its_text() -> None:
    parsed = parse_plain_text("# not markdown\n| a |\n", "t")
    assert parsed.text == "# not markdown\n| a |\n"
    assert parsed.headings == ()
    assert parsed.tables == ()
