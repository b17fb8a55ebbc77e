"""``KuzuGraphStore`` shared by threads: a read connection per thread, one write connection, a bounded buffer pool."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.data_models.chunk import Chunk, chunk_id_for
from agrag.components.data_models.document import Document
from agrag.components.errors import ConfigError, StoreError
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore

READERS = 4
BATCHES = 12
CHUNKS_PER_BATCH = 800
TEXT = "Maria Chen wrote the Orion Planner, which plans routes over SLAM maps. " * 30  # about 2 KB


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[KuzuGraphStore]:
    store = KuzuGraphStore(tmp_path / "graph.kuzu", buffer_pool_mb=256)
    yield store
    store.close()


def _document(number: int) -> tuple[Document, list[Chunk]]:
    doc = Document(id=f"d{number:04d}", version="v1", title=f"Note {number}", source_path=f"n{number}.md")
    chunks = [
        Chunk(chunk_id_for(doc.id, doc.version, order), doc.id, doc.version, TEXT, (doc.title,), order, 0, 1)
        for order in range(CHUNKS_PER_BATCH)
    ]
    return doc, chunks


@pytest.mark.slow  # commits past Kùzu's 16 MB checkpoint threshold: over 10 s here
def test_reads_run_on_their_own_thread_while_large_writes_commit(graph: KuzuGraphStore) -> None:
    """About 20 MB of chunks (past Kùzu's 16 MB checkpoint threshold) written while four threads read without pause.

    A checkpoint with a read in flight fails after the write committed; the store keeps reads out of a write
    statement's way, so every write and every read succeeds.
    """
    stop = threading.Event()
    errors: list[BaseException] = []
    reads = [0] * READERS
    doc_ids = [_document(number)[0].id for number in range(BATCHES)]

    def reader(index: int) -> None:
        try:
            while not stop.is_set():
                committed = graph.document_versions(doc_ids)
                graph.get_chunks([chunk_id_for(doc_id, "v1", 7) for doc_id in committed])
                reads[index] += 1
        except BaseException as exc:  # a test thread reports every failure to the test
            errors.append(exc)

    threads = [threading.Thread(target=reader, args=(i,), daemon=True) for i in range(READERS)]
    for thread in threads:
        thread.start()
    try:
        for number in range(BATCHES):
            doc, chunks = _document(number)
            graph.write_chunks([doc], chunks)
            graph.commit_documents([(doc, len(chunks))])
    finally:
        stop.set()
        for thread in threads:
            thread.join(60)
    assert errors == []
    assert all(reads), f"every reader thread read: {reads}"
    assert graph.counts()["Chunk"] == BATCHES * CHUNKS_PER_BATCH


def test_each_thread_reads_on_its_own_connection(graph: KuzuGraphStore) -> None:
    doc, chunks = _document(1)
    graph.write_chunks([doc], chunks[:3])
    graph.commit_documents([(doc, 3)])
    inside = threading.Barrier(READERS, timeout=30)
    seen: list[dict[str, str]] = []

    def reader() -> None:
        inside.wait()  # all threads read at the same time
        seen.append(graph.document_versions([doc.id]))
        columns, rows = graph.run_read_only("MATCH (c:Chunk) RETURN count(c) AS n")
        assert columns == ["n"] and rows == [[3]]

    threads = [threading.Thread(target=reader) for _ in range(READERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert seen == [{doc.id: "v1"}] * READERS
    assert len(graph._readers) == READERS  # one read connection per thread


def test_a_closed_store_refuses_reads_and_writes(tmp_path: Path) -> None:
    graph = KuzuGraphStore(tmp_path / "graph.kuzu")
    graph.counts()
    graph.close()
    graph.close()  # closing twice does nothing
    with pytest.raises(StoreError, match="is closed"):
        graph.counts()
    with pytest.raises(StoreError, match="is closed"):
        graph.set_info({"k": "v"})


def test_the_buffer_pool_is_bounded_and_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="at least 1 MB"):
        KuzuGraphStore(tmp_path / "graph.kuzu", buffer_pool_mb=0)
    tiny = KuzuGraphStore(tmp_path / "tiny.kuzu", buffer_pool_mb=8)
    try:
        doc, chunks = _document(1)
        with pytest.raises(StoreError, match="buffer pool \\(8 MB\\) is too small: raise AGRAG_KUZU_BUFFER_POOL_MB"):
            tiny.write_chunks([doc], chunks)  # 800 chunks of 2 KB in one statement need more than 8 MB of pages
    finally:
        tiny.close()
    roomy = KuzuGraphStore(tmp_path / "roomy.kuzu", buffer_pool_mb=64)
    try:
        roomy.write_chunks([doc], chunks)
        assert roomy.counts()["Chunk"] == CHUNKS_PER_BATCH
    finally:
        roomy.close()
