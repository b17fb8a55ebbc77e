import itertools

import pytest

from agrag.components.chunkers.fixed_size_chunker import FixedSizeChunker, windows
from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.chunk import TABLE_CHUNK, TEXT_CHUNK, Chunk
from agrag.components.data_models.loaded_document import LoadedDocument
from tests.support.markdown_marks import markdown_document, pipe_table


def prose(count: int, prefix: str = "w") -> str:
    return " ".join(f"{prefix}{i}" + "x" * (i % 5) for i in range(count))


def assert_exact_spans(loaded: LoadedDocument, chunks: list[Chunk]) -> None:
    for chunk in chunks:
        assert loaded.text[chunk.start : chunk.end] == chunk.text
        assert chunk.text == chunk.text.strip()
        assert chunk.parent_id is None
    assert [c.order for c in chunks] == list(range(len(chunks)))


def test_every_chunk_is_the_exact_span_of_its_version() -> None:
    text = "Lead.\n\n# T\n\n" + prose(300) + "\n\n## U\n\n" + prose(50, "u") + "\n\n" + pipe_table(12) + "\nEnd.\n"
    loaded = markdown_document(text)
    chunks = FixedSizeChunker(size=120, overlap=30, table_max_rows=5).chunk(loaded)
    assert len(chunks) > 10
    assert_exact_spans(loaded, chunks)


@pytest.mark.parametrize(("size", "overlap"), [(80, 0), (80, 20), (200, 150)])
def test_windows_end_at_white_space_and_overlap_from_a_word_start(size: int, overlap: int) -> None:
    loaded = markdown_document(prose(400) + "\n", path="plain.txt")
    text = loaded.text
    chunks = FixedSizeChunker(size=size, overlap=overlap).chunk(loaded)
    assert_exact_spans(loaded, chunks)
    assert all(len(c.text) <= size for c in chunks)
    for previous, following in itertools.pairwise(chunks):
        assert text[previous.end].isspace()  # cut at white space, not inside a word
        assert text[following.start - 1].isspace()  # starts at a word
        assert following.end > previous.end
        shared = previous.end - following.start
        assert shared <= overlap
        if overlap == 0:
            assert shared < 0
        else:
            assert shared > 0
    assert chunks[-1].end == len(text.rstrip())
    assert set(" ".join(c.text for c in chunks).split()) == set(text.split())


def test_a_word_longer_than_the_window_is_cut_hard_and_the_loop_ends() -> None:
    word = "z" * 1000
    loaded = markdown_document(f"# T\n\nStart {word} end\n")
    chunks = FixedSizeChunker(size=100, overlap=40).chunk(loaded)
    assert_exact_spans(loaded, chunks)
    assert all(len(c.text) <= 100 for c in chunks)
    assert chunks[-1].text.endswith("end")
    # the hard cuts do not overlap inside the word: each "z" appears once
    assert "".join(c.text for c in chunks).count("z") == 1000


def test_windows_of_white_space_only_are_none() -> None:
    assert windows("   \n\n  ", 0, 7, size=10, overlap=2) == []


def test_windows_never_cross_a_heading() -> None:
    text = "# A\n\n" + prose(60, "a") + "\n\n## B\n\n" + prose(60, "b") + "\n\n# C\n\nc0 c1\n"
    loaded = markdown_document(text)
    chunks = FixedSizeChunker(size=100, overlap=20).chunk(loaded)
    assert_exact_spans(loaded, chunks)
    for chunk in chunks:
        assert not any(chunk.start < h.start < chunk.end for h in loaded.headings)
        letters = {w[0].lower() for w in chunk.text.split() if w[0] != "#"}
        assert letters == {chunk.heading_path[-1].lower()}
    assert chunks[0].text.startswith("# A\n\na0")
    assert {c.heading_path for c in chunks} == {("A",), ("A", "B"), ("C",)}


def test_tables_become_table_chunks_with_cells() -> None:
    text = "# Parts\n\nThe list.\n\n" + pipe_table(70) + "\nAfter.\n"
    loaded = markdown_document(text)
    chunks = FixedSizeChunker(size=100, overlap=10, table_max_rows=30).chunk(loaded)
    assert_exact_spans(loaded, chunks)
    assert [c.kind for c in chunks] == [TEXT_CHUNK, TABLE_CHUNK, TABLE_CHUNK, TABLE_CHUNK, TEXT_CHUNK]
    for chunk in chunks[1:4]:
        assert chunk.heading_path == ("Parts",)
        for cell in chunk.cells:
            assert chunk.start <= cell.start <= cell.end <= chunk.end
    assert {cell.row for cell in chunks[2].cells} == set(range(31, 61))


def test_an_empty_document_has_no_chunks() -> None:
    assert FixedSizeChunker().chunk(markdown_document("")) == []


def test_run_chunks_every_document() -> None:
    docs = [markdown_document("One two.\n", doc_id="d1"), markdown_document("Three.\n", doc_id="d2")]
    assert [c.id.split(".")[0] for c in FixedSizeChunker().run(documents=docs)["chunks"]] == ["d1", "d2"]


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (100, 100), (100, -1)])
def test_invalid_arguments_are_refused(size: int, overlap: int) -> None:
    with pytest.raises(ComponentConfigError, match="overlap"):
        FixedSizeChunker(size=size, overlap=overlap)
