import itertools

import pytest

from agrag.components.chunkers.document_sections import TextBlock
from agrag.components.chunkers.sentence_chunker import SentenceChunker, pack, sentence_spans
from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.chunk import TABLE_CHUNK, TEXT_CHUNK, Chunk
from agrag.components.data_models.loaded_document import LoadedDocument
from tests.support.markdown_marks import markdown_document, pipe_table


def sentences(count: int, prefix: str = "S") -> str:
    return " ".join(f"{prefix}{i} has a few words in it." for i in range(count))


def assert_exact_spans(loaded: LoadedDocument, chunks: list[Chunk]) -> None:
    for chunk in chunks:
        assert loaded.text[chunk.start : chunk.end] == chunk.text
        assert chunk.parent_id is None
    assert [c.order for c in chunks] == list(range(len(chunks)))


def test_sentences_are_found_at_end_marks_and_blank_lines_with_exact_offsets() -> None:
    text = 'One, e.g. this. Two! "Three?" 4 is four. Line without a stop\n\nnext paragraph. 3.5 stays whole.'
    spans = sentence_spans(text, TextBlock(0, len(text), 0), max_chars=1000)
    assert [text[s:e] for s, e in spans] == [
        "One, e.g. this.",
        "Two!",
        '"Three?"',
        "4 is four.",
        "Line without a stop",
        "next paragraph.",
        "3.5 stays whole.",
    ]


def test_the_heading_line_is_a_sentence_of_its_own() -> None:
    text = "## Setup\nInstall it. Run it."
    spans = sentence_spans(text, TextBlock(0, len(text), 9), max_chars=1000)
    assert [text[s:e] for s, e in spans] == ["## Setup", "Install it.", "Run it."]


def test_every_chunk_is_the_exact_span_of_its_version() -> None:
    text = "Lead. In.\n\n# T\n\n" + sentences(30) + "\n\n## U\n\n" + sentences(8, "U") + "\n\n" + pipe_table(12)
    loaded = markdown_document(text)
    chunks = SentenceChunker(max_chars=200, table_max_rows=5).chunk(loaded)
    assert len(chunks) > 5
    assert_exact_spans(loaded, chunks)


def test_chunks_pack_whole_sentences_within_the_limit() -> None:
    loaded = markdown_document("# T\n\n" + sentences(40) + "\n")
    chunks = SentenceChunker(max_chars=200, overlap_sentences=0).chunk(loaded)
    assert all(len(c.text) <= 200 for c in chunks)
    assert all(c.text.endswith(".") for c in chunks)
    assert all(c.text.startswith(("# T", "S")) for c in chunks)
    assert chunks[0].text.startswith("# T\n\nS0 ")
    # without overlap, chunks follow each other and together hold every sentence once
    assert all(a.end < b.start for a, b in itertools.pairwise(chunks))
    assert " ".join(c.text for c in chunks).split() == loaded.text.split()


@pytest.mark.parametrize("overlap", [1, 2])
def test_the_last_sentences_of_a_chunk_open_the_next(overlap: int) -> None:
    loaded = markdown_document(sentences(40) + "\n", path="plain.txt")
    chunks = SentenceChunker(max_chars=200, overlap_sentences=overlap).chunk(loaded)
    assert len(chunks) > 3
    for previous, following in itertools.pairwise(chunks):
        shared = previous.text.split(". ")[-overlap:]
        assert following.text.startswith(". ".join(shared).rstrip("."))
        assert following.start < previous.end < following.end


def test_chunks_never_cross_a_heading() -> None:
    text = "# A\n\n" + sentences(12, "A") + "\n\n## B\n\n" + sentences(12, "B") + "\n\n# C\n\nC0 alone.\n"
    loaded = markdown_document(text)
    chunks = SentenceChunker(max_chars=150).chunk(loaded)
    assert_exact_spans(loaded, chunks)
    for chunk in chunks:
        assert not any(chunk.start < h.start < chunk.end for h in loaded.headings)
        words = {w[0] for w in chunk.text.replace("#", "").split() if w[0] in "ABC"}
        assert words == {chunk.heading_path[-1]}
    assert {c.heading_path for c in chunks} == {("A",), ("A", "B"), ("C",)}


def test_a_sentence_longer_than_max_chars_is_cut_at_spaces_and_a_long_word_hard() -> None:
    long_sentence = "Long " + "word " * 80 + "y" * 230 + " end."
    loaded = markdown_document(f"# T\n\nShort one. {long_sentence} Last one.\n")
    chunks = SentenceChunker(max_chars=100, overlap_sentences=0).chunk(loaded)
    assert_exact_spans(loaded, chunks)
    assert all(len(c.text) <= 100 for c in chunks)
    assert any(set(c.text) == {"y"} for c in chunks)
    assert "".join(c.text for c in chunks).count("y") == 230


def test_pack_always_moves_on_even_when_the_overlap_does_not_fit() -> None:
    units = [(0, 50), (51, 100), (101, 190), (191, 200)]
    assert pack(units, max_chars=100, overlap=3) == [(0, 100), (101, 200)]


def test_tables_become_table_chunks_with_cells() -> None:
    text = "# Parts\n\nThe list. It is long.\n\n" + pipe_table(70) + "\nAfter the table.\n"
    loaded = markdown_document(text)
    chunks = SentenceChunker(table_max_rows=30).chunk(loaded)
    assert_exact_spans(loaded, chunks)
    assert [c.kind for c in chunks] == [TEXT_CHUNK, TABLE_CHUNK, TABLE_CHUNK, TABLE_CHUNK, TEXT_CHUNK]
    assert [len(c.text.splitlines()) for c in chunks[1:4]] == [32, 30, 10]
    cell = next(cell for cell in chunks[3].cells if (cell.row, cell.column) == (70, 1))
    assert text[cell.start : cell.end] == "r70c1"


def test_an_empty_document_has_no_chunks() -> None:
    assert SentenceChunker().chunk(markdown_document("")) == []


def test_run_chunks_every_document() -> None:
    docs = [markdown_document("One. Two.\n", doc_id="d1"), markdown_document("Three.\n", doc_id="d2")]
    chunks = SentenceChunker().run(documents=docs)["chunks"]
    assert [(c.document_id, c.text, c.heading_path) for c in chunks] == [
        ("d1", "One. Two.", ("doc.md",)),
        ("d2", "Three.", ("doc.md",)),
    ]


def test_invalid_arguments_are_refused() -> None:
    with pytest.raises(ComponentConfigError, match="overlap_sentences"):
        SentenceChunker(overlap_sentences=-1)
