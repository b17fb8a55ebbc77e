from agrag.components.loaders.parsed_document import text_lines


def test_lines_split_at_lf_only_and_keep_offsets() -> None:
    text = "one\ntwo\u2028still two\n\nlast"
    lines = text_lines(text)
    assert [line.content for line in lines] == ["one", "two\u2028still two", "", "last"]
    assert all(text[line.start : line.end] == line.content for line in lines)
    assert [line.blank for line in lines] == [False, False, True, False]
    assert lines[-1].next_start == len(text)
    assert text_lines("") == []
