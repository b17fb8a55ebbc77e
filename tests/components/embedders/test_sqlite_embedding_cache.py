import logging
import sqlite3
import threading
from pathlib import Path

import pytest

from agrag.components.embedders import sqlite_embedding_cache
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.embedders.sqlite_embedding_cache import SqliteEmbeddingCache
from agrag.components.errors import EmbeddingError


def test_cache_returns_stored_vectors_by_position(tmp_path: Path) -> None:
    cache = SqliteEmbeddingCache(tmp_path / "cache", "some/model")
    cache.put_many(["a", "b"], [[1.0, 2.0], [3.0, 4.0]])
    cache.put_many(["a"], [[9.0, 9.0]])  # the first vector stays
    assert cache.get_many(["b", "x", "a", "b"]) == {0: [3.0, 4.0], 2: [1.0, 2.0], 3: [3.0, 4.0]}
    assert len(cache) == 2
    assert cache.path.name == "some_model.sqlite"
    cache.close()


def test_the_embedder_computes_only_what_the_cache_lacks(
    tmp_path: Path, embedder: SentenceTransformersTextEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = SqliteEmbeddingCache(tmp_path, embedder.model)
    cached = SentenceTransformersTextEmbedder(embedder.model, cache=cache)
    first = cached.embed_batch(["Maria Chen wrote the Orion Planner.", "Vega Perception"])
    assert first[0] == pytest.approx(embedder.embed_batch(["Maria Chen wrote the Orion Planner."])[0], abs=1e-6)
    seen: list[list[str]] = []
    original = cached._encode

    def counting(texts: list[str], progress_bar: bool | None) -> list[list[float]]:
        seen.append(list(texts))
        return original(texts, progress_bar)

    monkeypatch.setattr(cached, "_encode", counting)
    again = cached.embed_batch(["Vega Perception", "Atlas Controller", "Maria Chen wrote the Orion Planner."])
    assert seen == [["Atlas Controller"]]
    assert again[0] == first[1]
    assert again[2] == first[0]


def test_an_unwritable_cache_folder_is_an_embedding_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(EmbeddingError, match="AGRAG_EMBEDDING_CACHE_DIR"):
        SqliteEmbeddingCache(blocker / "cache", "m")


def test_threads_of_one_process_share_the_cache(tmp_path: Path) -> None:
    """A server embeds the queries of many requests at once, through one cache."""
    cache = SqliteEmbeddingCache(tmp_path, "m")
    errors: list[BaseException] = []

    def embed(worker: int) -> None:
        try:
            for i in range(100):
                text = f"query {worker}-{i}"
                cache.put_many([text], [[float(worker), float(i)]])
                assert cache.get_many([text]) == {0: [float(worker), float(i)]}
        except BaseException as exc:  # the test reports what any thread raised
            errors.append(exc)

    threads = [threading.Thread(target=embed, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(cache) == 800


def test_a_cache_another_process_holds_costs_time_not_the_embedding(
    tmp_path: Path,
    embedder: SentenceTransformersTextEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(sqlite_embedding_cache, "_BUSY_SECONDS", 0.2)
    cache = SqliteEmbeddingCache(tmp_path, embedder.model)
    cached = SentenceTransformersTextEmbedder(embedder.model, cache=cache)
    cached.embed_batch(["Vega Perception"])
    other = sqlite3.connect(cache.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process writing, for longer than the busy timeout
    try:
        with caplog.at_level(logging.WARNING):
            vectors = cached.embed_batch(["Vega Perception", "Atlas Controller"])
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert vectors[1] == pytest.approx(embedder.embed_batch(["Atlas Controller"])[0], abs=1e-6)
    assert cache.get_many(["Vega Perception"]) == {0: vectors[0]}, "readers are not blocked by the writer"
    assert "could not keep 1 vectors" in caplog.text
    assert cache.get_many(["Atlas Controller"]) == {}


def test_queries_are_kept_apart_and_only_the_newest_ones(tmp_path: Path) -> None:
    """A server sees a stream of distinct questions: the cache keeps the last ones, and every passage."""
    cache = SqliteEmbeddingCache(tmp_path, "m", query_capacity=3)
    cache.put_many(["a passage"], [[1.0, 0.0]])
    for i in range(5):
        cache.put_queries([f"question {i}"], [[0.0, float(i)]])
    assert cache.queries_kept() == 3
    assert len(cache) == 1
    asked = ["question 0", "question 1", "question 2", "question 4", "a passage"]
    assert cache.get_many(asked) == {2: [0.0, 2.0], 3: [0.0, 4.0], 4: [1.0, 0.0]}
    cache.put_queries(["question 2"], [[0.0, 2.0]])  # asked again: now the newest
    cache.put_queries(["question 5"], [[0.0, 5.0]])
    assert set(cache.get_many(["question 2", "question 3", "question 5"])) <= {0, 1, 2}
    assert 0 in cache.get_many(["question 2", "question 5"]) and cache.queries_kept() <= 3
    nothing = SqliteEmbeddingCache(tmp_path / "none", "m", query_capacity=0)
    nothing.put_queries(["question"], [[1.0]])
    assert nothing.queries_kept() == 0 and nothing.get_many(["question"]) == {}


def test_a_negative_query_capacity_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="AGRAG_EMBEDDING_CACHE_QUERIES"):
        SqliteEmbeddingCache(tmp_path, "m", query_capacity=-1)


def test_query_embeddings_go_to_the_bounded_part(tmp_path: Path, embedder: SentenceTransformersTextEmbedder) -> None:
    cache = SqliteEmbeddingCache(tmp_path, embedder.model, query_capacity=2)
    cached = SentenceTransformersTextEmbedder(embedder.model, cache=cache)
    vector = cached.run(text="Who wrote the Orion Planner?")["embedding"].values
    assert list(vector) == pytest.approx(embedder.embed_batch(["Who wrote the Orion Planner?"])[0], abs=1e-6)
    assert (len(cache), cache.queries_kept()) == (0, 1)
    assert cached.embed_query("Who wrote the Orion Planner?") == list(vector)
    cached.embed_batch(["Maria Chen wrote the Orion Planner."])
    assert (len(cache), cache.queries_kept()) == (1, 1)
