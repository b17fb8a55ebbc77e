from agrag.components.data_models.chunk import Chunk
from agrag.components.evidence.snippets import snippet
from agrag.components.evidence.span_text import span_text

TEXT = "# Title\n\nAlpha beta gamma.\n\nDelta epsilon zeta.\n"


def chunk(start: int, end: int, order: int = 0) -> Chunk:
    return Chunk(f"d1.v1.{order}", "d1", "v1", TEXT[start:end], ("Title",), order, start, end)


def test_a_span_inside_one_chunk_is_its_exact_characters() -> None:
    body = chunk(9, 26)
    assert span_text([body], 15, 20) == (TEXT[15:20], False)


def test_a_span_across_chunks_is_rebuilt_from_them() -> None:
    first, second = chunk(9, 27, 0), chunk(27, 47, 1)
    assert span_text([second, first], 9, 47) == (TEXT[9:47], False)


def test_characters_no_chunk_covers_make_the_span_partial() -> None:
    first, second = chunk(9, 26, 0), chunk(28, 47, 1)
    text, partial = span_text([first, second], 0, 60)
    assert partial and text == TEXT[9:26] + " … " + TEXT[28:47]


def test_a_snippet_centres_on_the_query_words() -> None:
    long = "filler " * 60 + "the Orion Planner was written by Maria Chen " + "more " * 60
    excerpt = snippet(long, "Who wrote the Orion Planner?", width=80)
    assert "Orion Planner" in excerpt and excerpt.startswith("…") and excerpt.endswith("…")
    assert snippet("short text", "x") == "short text"
