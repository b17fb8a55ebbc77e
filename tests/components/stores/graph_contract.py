"""The graph-store contract's backends and example graph, shared by the role suites (``test_graph_*_contract.py``).

Each role suite opens every backend of ``GRAPH_BACKENDS`` in ``tmp_path``, writes ``write_corpus`` through the
ingest role, and tests one role protocol's methods through that protocol.
"""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from agrag.components.data_models.chunk import Chunk, chunk_id_for
from agrag.components.data_models.document import Document
from agrag.components.data_models.entity import Entity, entity_id_for
from agrag.components.data_models.extraction import Mention
from agrag.components.data_models.relation import Relation, relation_id_for
from agrag.components.data_models.relation_index_mode import RelationIndexMode
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore

GraphOpener = Callable[[Path], GraphStore]
R = TypeVar("R")


def as_role(graph_corpus: "tuple[GraphStore, Corpus]", role: type[R]) -> R:
    """The opened backend seen through one role protocol (which it must implement)."""
    store, _ = graph_corpus
    assert isinstance(store, role), f"{type(store).__name__} does not implement {role.__name__}"
    return store


def _kuzu_writing_rows(path: Path) -> KuzuGraphStore:
    """Kùzu as on a large graph: links written one statement a row (from 20,000 chunks or entities), nodes looked
    up by id one statement an id (``KuzuIdLookups``), and walks ranked by the relation index, built in the first walk
    after each write (a large graph's server builds it on a thread once writes pause)."""
    store = KuzuGraphStore(path / "graph.kuzu")
    store.per_row_from = 0
    store.per_id_rows = 0
    store.relation_index_mode = RelationIndexMode.INLINE
    return store


GRAPH_BACKENDS: dict[str, GraphOpener] = {
    "kuzu": lambda path: KuzuGraphStore(path / "graph.kuzu"),
    "kuzu-row-writes": _kuzu_writing_rows,
}

DOC_A = Document(id="a", version="v1", title="Planner notes", source_path="a.md", source_folder="/notes")
DOC_B = Document(id="b", version="v1", title="Company notes", source_path="b.md", source_folder="/notes")
TEXTS = {
    "a": ["Planner notes", "Maria Chen wrote the Orion Planner.", "The Orion Planner uses SLAM maps."],
    "b": ["Company notes", "Acme Robotics employs Maria Chen.", "Acme Robotics builds Vega Perception."],
}
NAMES = {"Maria Chen": "Person", "Orion Planner": "Product", "SLAM": "Concept", "Acme Robotics": "Org"}
NAMES["Vega Perception"] = "Product"
ID = {name: entity_id_for(name) for name in NAMES}


def chunks_of(doc: Document, texts: list[str]) -> list[Chunk]:
    """One section chunk (order 0) and the text chunks cut from it, one character apart."""
    out, offset = [], 0
    for order, text in enumerate(texts):
        parent = chunk_id_for(doc.id, doc.version, 0) if order else None
        chunk_id = chunk_id_for(doc.id, doc.version, order)
        span = (offset, offset + len(text))
        kind = "text" if order else "section"
        out.append(Chunk(chunk_id, doc.id, doc.version, text, (doc.title,), order, *span, parent, doc.title, kind))
        offset += len(text) + 1
    return out


@dataclass(frozen=True)
class Corpus:
    """What ``write_corpus`` stored: two committed documents, their chunks, five entities and four relations."""

    chunks: dict[str, list[Chunk]]
    relations: dict[str, Relation]

    def chunk(self, doc: str, order: int) -> str:
        """The id of a stored chunk."""
        return self.chunks[doc][order].id


def write_corpus(store: GraphStore) -> Corpus:
    """Write and commit documents ``a`` and ``b``: mentions, one about link, relations with their chunks."""
    chunks = {"a": chunks_of(DOC_A, TEXTS["a"]), "b": chunks_of(DOC_B, TEXTS["b"])}
    a1, a2, b1, b2 = chunks["a"][1].id, chunks["a"][2].id, chunks["b"][1].id, chunks["b"][2].id
    store.write_chunks([DOC_A, DOC_B], [*chunks["a"], *chunks["b"]])
    store.upsert_entities([Entity(ID[name], name, label, f"{name} as first named") for name, label in NAMES.items()])
    store.upsert_mentions(
        [
            Mention(a1, ID["Maria Chen"], 1),
            Mention(a1, ID["Orion Planner"], 1),
            Mention(a2, ID["Orion Planner"], 2),
            Mention(a2, ID["SLAM"], 1),
            Mention(b1, ID["Acme Robotics"], 1),
            Mention(b1, ID["Maria Chen"], 1),
            Mention(b2, ID["Acme Robotics"], 1),
            Mention(b2, ID["Vega Perception"], 1),
        ]
    )
    store.upsert_about([Mention(a2, ID["Orion Planner"], 1)])
    relations = {
        key: Relation(relation_id_for(ID[s], ID[t], kind), ID[s], ID[t], kind, (chunk,), f"{s} {kind} {t}")
        for key, s, kind, t, chunk in (
            ("wrote", "Maria Chen", "WROTE", "Orion Planner", a1),
            ("uses", "Orion Planner", "USES", "SLAM", a2),
            ("employs", "Acme Robotics", "EMPLOYS", "Maria Chen", b1),
            ("builds", "Acme Robotics", "BUILDS", "Vega Perception", b2),
        )
    }
    store.upsert_relations(list(relations.values()))
    store.commit_documents([(DOC_A, len(chunks["a"])), (DOC_B, len(chunks["b"]))], "hash-1")
    return Corpus(chunks, relations)
