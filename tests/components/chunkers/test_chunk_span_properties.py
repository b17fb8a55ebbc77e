"""Property tests: on any document, every chunker's chunks are exact spans of the text, in order, with valid parents.

Documents are generated from headings, paragraphs of words (with non-ASCII letters, punctuation and odd white
space), fenced code and pipe tables, at random sizes; each chunker runs with random limits.
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agrag.components.chunkers.fixed_size_chunker import FixedSizeChunker
from agrag.components.chunkers.sentence_chunker import SentenceChunker
from agrag.components.chunkers.structural_chunker import StructuralChunker
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.loaded_document import LoadedDocument
from tests.support.markdown_marks import markdown_document, pipe_table

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzÄÖÜéßøĳ0123456789.,;:!?'\"()-", min_size=1, max_size=12)
SPACE = st.sampled_from([" ", " ", " ", "  ", "\t", " \u00a0"])


@st.composite
def paragraph(draw: st.DrawFn) -> str:
    words = draw(st.lists(WORD, min_size=1, max_size=120))
    return "".join(w + draw(SPACE) for w in words).strip()


@st.composite
def block(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["heading", "paragraph", "paragraph", "paragraph", "table", "code"]))
    if kind == "heading":
        return "#" * draw(st.integers(1, 4)) + " " + draw(paragraph())[:60].strip(" #") + "x"
    if kind == "table":
        return pipe_table(draw(st.integers(1, 12)))
    if kind == "code":
        return "```\n" + draw(paragraph()) + "\n```"
    return draw(paragraph())


@st.composite
def document(draw: st.DrawFn) -> LoadedDocument:
    blocks = draw(st.lists(block(), min_size=1, max_size=25))
    separators = draw(
        st.lists(st.sampled_from(["\n\n", "\n\n\n", "\n \n"]), min_size=len(blocks), max_size=len(blocks))
    )
    text = "".join(b + s for b, s in zip(blocks, separators, strict=True))
    return markdown_document(text)


def assert_exact_ordered_spans(loaded: LoadedDocument, chunks: list[Chunk]) -> None:
    ids = {c.id for c in chunks}
    for chunk in chunks:
        assert 0 <= chunk.start < chunk.end <= len(loaded.text), chunk
        assert loaded.text[chunk.start : chunk.end] == chunk.text, chunk
        assert chunk.text.strip(), "no chunk is only white space"
        assert chunk.document_id == loaded.document.id and chunk.document_version == loaded.document.version
        assert chunk.parent_id is None or chunk.parent_id in ids, "a parent is a chunk of the same version"
    assert [c.order for c in chunks] == list(range(len(chunks)))
    assert len(ids) == len(chunks), "ids are unique"
    for first, second in itertools.pairwise(c for c in chunks if c.searchable):
        assert first.start <= second.start, "searchable chunks follow the text"


PROPERTY_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY_SETTINGS
@given(loaded=document(), max_chars=st.integers(40, 1500), section_extra=st.integers(0, 3000))
def test_structural_chunks_are_exact_spans(loaded: LoadedDocument, max_chars: int, section_extra: int) -> None:
    chunker = StructuralChunker(max_chars=max_chars, section_max_chars=max_chars + section_extra, table_max_rows=5)
    assert_exact_ordered_spans(loaded, chunker.chunk(loaded))


@PROPERTY_SETTINGS
@given(loaded=document(), max_chars=st.integers(40, 1500), overlap=st.integers(0, 3))
def test_sentence_chunks_are_exact_spans(loaded: LoadedDocument, max_chars: int, overlap: int) -> None:
    chunker = SentenceChunker(max_chars=max_chars, overlap_sentences=overlap, table_max_rows=5)
    assert_exact_ordered_spans(loaded, chunker.chunk(loaded))


@PROPERTY_SETTINGS
@given(loaded=document(), size=st.integers(40, 1500), overlap_share=st.floats(0, 0.9))
def test_fixed_size_chunks_are_exact_spans(loaded: LoadedDocument, size: int, overlap_share: float) -> None:
    chunker = FixedSizeChunker(size=size, overlap=int(size * overlap_share), table_max_rows=5)
    chunks = chunker.chunk(loaded)
    assert_exact_ordered_spans(loaded, chunks)
    assert all(len(c.text) <= size for c in chunks if c.kind == "text")
