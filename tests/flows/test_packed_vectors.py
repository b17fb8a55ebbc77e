"""The embed stage keeps its vectors packed as float32 arrays: the same values in an eighth of the memory."""

from __future__ import annotations

import sys
from array import array

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.flows.embed_fanout import InProcessEmbedding, embed_all, packed

TEXTS = [f"note {i}: the planner service talks to the billing service in region {i % 3}" for i in range(11)]


def _hashed() -> SentenceTransformersTextEmbedder:
    return SentenceTransformersTextEmbedder("hashed-384", "cpu", 8, backend="hashed")


def test_embed_all_returns_each_texts_vector_in_order_as_float32_arrays_across_slices() -> None:
    embedder = _hashed()
    vectors = embed_all(InProcessEmbedding(embedder, slice_chunks=4), TEXTS)  # three slices, the last one short
    expected = embedder.embed_batch(TEXTS)
    assert len(vectors) == len(TEXTS)
    assert all(isinstance(v, array) and v.typecode == "f" for v in vectors)
    # the encoder computes float32, so packing loses nothing: every component is the very same number
    assert [list(v) for v in vectors] == expected
    assert len({tuple(v) for v in vectors}) == len(TEXTS), "different texts, different vectors"


def test_a_packed_vector_takes_under_a_sixth_of_the_memory_of_a_list_of_floats() -> None:
    vector = _hashed().embed_batch(["the planner service"])[0]
    as_list = sys.getsizeof(vector) + sum(sys.getsizeof(x) for x in vector)
    (as_array,) = packed([vector])
    assert len(as_array) == 384
    assert sys.getsizeof(as_array) * 6 < as_list
