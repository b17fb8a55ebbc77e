"""``EvidenceSession``: the evidence functions of one caller, over one data dir, within one document scope."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from enum import StrEnum
from typing import TypeVar

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.citations import CitationCheck, RenderedAnswer
from agrag.components.data_models.document_structure import TableCell
from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.evidence import (
    MAX_DEPTH,
    MAX_LIMIT,
    Direction,
    DiscoverMode,
    DiscoverResult,
    EdgeKind,
    EntityEvidence,
    EvidenceHit,
    EvidenceLocation,
    EvidenceScope,
    ExploredEdge,
    ExploreResult,
    FetchedEvidence,
    FetchResult,
)
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import EvidenceError
from agrag.components.evidence.citation_checker import CitationChecker
from agrag.components.evidence.citation_renderer import CitationRenderer
from agrag.components.evidence.qdrant_chunk_discoverer import QdrantChunkDiscoverer
from agrag.components.evidence.snippets import snippet
from agrag.components.evidence.span_text import span_text
from agrag.components.graph.graph_entity_facts import GraphEntityFacts
from agrag.components.graph.graph_entity_lookup import GraphEntityLookup
from agrag.components.graph.passage_graph_cache import PassageGraphCache
from agrag.components.retrievers.qdrant_entity_retriever import QdrantEntityRetriever
from agrag.components.safe_text import require_text
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.pipelines.search_engine import SearchResponse

E = TypeVar("E", bound=StrEnum)

SUPPORT_PER_ENTITY = 3

GraphPassageSearch = Callable[[str, SearchFilters | None, int], SearchResponse]
"""A graph recipe's search: (query, filters, how many results) -> its results and trace (``Runtime`` gives one)."""


class EvidenceSession:
    """Find, read and cite passages of the documents in ``scope``.

    Every id names one version of one document, so it keeps working after the document changes. The scope is fixed
    when the session is made and is part of every store query (chunk search, chunk reads, neighbours): an id or a
    query outside it behaves exactly like one that does not exist. The session remembers which ids it returned the
    exact text of (``fetch``, ``navigate``), which is what citations are checked against.

    Usage:
        ```python
        session = EvidenceSession(store, embedder, EvidenceScope(("d3f…",)))
        found = session.discover("Who wrote the Orion Planner?")
        texts = session.fetch([hit.id for hit in found.hits[:3]])
        ```
    """

    def __init__(
        self,
        store: KnowledgeStore,
        embedder: SentenceTransformersTextEmbedder,
        scope: EvidenceScope | None = None,
        fetched: Iterable[FetchedEvidence] = (),
        graph_search: GraphPassageSearch | None = None,
    ) -> None:
        """Read ``store`` within ``scope`` (None: every document), embedding queries with ``embedder``.

        ``fetched`` continues a session: evidence read earlier (kept by the caller, e.g. the CLI's session file).
        ``graph_search`` runs a graph recipe for ``discover``'s ``graph`` mode (without it that mode is refused).
        """
        self.store = store
        self._graph_search = graph_search
        self.embedder = embedder
        self.scope = scope or EvidenceScope()
        self._fetched: dict[str, FetchedEvidence] = {item.id: item for item in fetched}
        self._names = PassageGraphCache(store.graph)
        self._discoverer = QdrantChunkDiscoverer(store.chunks)
        self._lookup = GraphEntityLookup(store.graph)
        self._facts = GraphEntityFacts(store.graph, store.facts)

    @property
    def fetched(self) -> dict[str, FetchedEvidence]:
        """The evidence whose exact text this session returned, by id (what citations are checked against)."""
        return dict(self._fetched)

    @property
    def default_mode(self) -> DiscoverMode:
        """``graph`` when the session can walk the graph (the best first search on every dev set), else ``hybrid``."""
        return DiscoverMode.GRAPH if self._graph_search is not None else DiscoverMode.HYBRID

    def discover(self, query: str, mode: DiscoverMode | str | None = None, limit: int = 10) -> DiscoverResult:
        """Search the current versions in scope for passages about ``query``.

        ``keyword`` is BM25, ``vector`` is cosine similarity of MiniLM embeddings, ``hybrid`` fuses both by
        Reciprocal Rank Fusion (k = 60), ``graph`` gives the passages of the ``bridge`` recipe (a graph walk from
        the names the question gives, then through the names its best passages share); None is ``default_mode``.
        A leg that fails is named in ``failed_legs`` while the other's hits return.

        Raises:
            EvidenceError: an unknown mode, ``graph`` in a session that cannot walk the graph, or a limit outside
                1 to 100.
            QueryTextError: the query holds bytes that were not UTF-8.
        """
        mode = self.default_mode if mode is None else _member(DiscoverMode, mode, "discover mode")
        require_text(query)
        if not 1 <= limit <= MAX_LIMIT:
            raise EvidenceError(f"limit must be between 1 and {MAX_LIMIT}, got {limit}.")
        if self.scope.document_ids == ():
            return DiscoverResult((), mode)
        filters = None if self.scope.document_ids is None else SearchFilters(document_ids=self.scope.document_ids)
        if mode is DiscoverMode.GRAPH:
            return self._graph_discover(query, filters, limit)
        embedding = None
        if self._discoverer.needs_embedding(mode):
            embedding = Embedding(tuple(self.embedder.embed_query(query)))
        out = self._discoverer.run(query=query, mode=mode, limit=limit, query_embedding=embedding, filters=filters)
        found = tuple(_hit(result, query) for result in out["results"])
        return DiscoverResult(found, mode, out["failed_legs"], out["truncated"])

    def _graph_discover(self, query: str, filters: SearchFilters | None, limit: int) -> DiscoverResult:
        """The passages of the graph recipe within the scope, best first."""
        if self._graph_search is None:
            raise EvidenceError(
                "discover mode 'graph' walks the graph with the search engine, which this session was not given: "
                "use keyword, vector or hybrid, or open the session from a Runtime (Runtime.evidence_session)."
            )
        response = self._graph_search(query, filters, limit + 1)
        chunks = [r for r in response.results if isinstance(r.item, Chunk)]
        failed = {status.method: status.error for status in response.trace.methods if not status.ok}
        hits = tuple(_hit(result, query) for result in chunks[:limit])
        return DiscoverResult(hits, DiscoverMode.GRAPH, failed, len(chunks) > limit)

    def fetch(self, ids: Iterable[str]) -> FetchResult:
        """The exact text behind each id, in the order asked; ids not found (or outside the scope) are listed apart.

        Raises:
            EvidenceError: an id is malformed (nothing is fetched then).
        """
        parsed = [EvidenceId.parse(i) for i in ids]
        by_chunk = {
            c.id: c
            for c in self.store.graph.get_chunks_in_scope(
                [p.chunk_id for p in parsed if p.chunk_id is not None], self.scope.documents
            )
        }
        items: list[FetchedEvidence] = []
        missing: list[str] = []
        for evidence_id in parsed:
            found = self._read(evidence_id, by_chunk)
            if found is None:
                missing.append(str(evidence_id))
            else:
                items.append(found)
        self._remember(items)
        return FetchResult(tuple(items), tuple(missing))

    def navigate(self, evidence_id: str, direction: Direction | str) -> FetchResult:
        """The passages next to one: its parent section, children, siblings, previous or next chunk, or table cells.

        ``cells`` from a table chunk gives every cell; from a cell's span, the other cells of its row and column.
        An id not found (or outside the scope) comes back in ``not_found``.

        Raises:
            EvidenceError: a malformed id or an unknown direction.
        """
        where = _member(Direction, direction, "direction")
        start = EvidenceId.parse(evidence_id)
        chunk = self._chunk_at(start)
        if chunk is None:
            return FetchResult((), (str(start),))
        if where is Direction.CELLS:
            return self._cells(chunk, start)
        neighbours = self.store.graph.chunk_neighbours(chunk.id, where.value, self.scope.documents)
        items = tuple(self._chunk_evidence(c) for c in neighbours)
        self._remember(items)
        return FetchResult(items)

    def find_entities(self, query: str, limit: int = 10) -> tuple[EntityEvidence, ...]:
        """Entities in scope: those the query names, then by name words and meaning, with up to 3 passage ids each.

        Each comes with up to 3 facts in-scope passages state about it (``Victor Hale -[owns]-> Osprey Ceramics``
        and the ids of those passages), those most like the query first. An entity that only documents outside the
        scope mention is not found.

        Raises:
            EvidenceError: a limit outside 1 to 100.
            QueryTextError: the query holds bytes that were not UTF-8.
        """
        require_text(query)
        if not 1 <= limit <= MAX_LIMIT:
            raise EvidenceError(f"limit must be between 1 and {MAX_LIMIT}, got {limit}.")
        if self.scope.document_ids == ():
            return ()
        ids_of_documents = None if self.scope.document_ids is None else self.store.graph.entity_ids_of_documents
        filters = None if self.scope.document_ids is None else SearchFilters(document_ids=self.scope.document_ids)
        retriever = QdrantEntityRetriever(
            self.store.entities,
            top_k=limit,
            ids_of_documents=ids_of_documents,
            names=self._names,
            graph=self.store.graph,
        )
        embedding = Embedding(tuple(self.embedder.embed_query(query)))
        out = retriever.run(query=query, query_embedding=embedding, filters=filters)
        if not out["status"].ok:
            raise EvidenceError(f"Entity search failed: {out['status'].error}")
        found = self._entity_evidence([r.item.id for r in out["results"]])
        facts = self._facts.of([e.id for e in found], self.scope, embedding.values)
        return tuple(replace(e, facts=facts.get(e.id, ())) for e in found)

    def explore(
        self, entity: str, depth: int = 1, relation_types: Sequence[str] | None = None, limit: int = 50
    ) -> ExploreResult:
        """The relations around an entity (its id, or a name), outward ``depth`` hops, nearest first.

        Each edge is an ``assertion`` with the ids of the current passages in scope it was extracted from, or a
        ``path`` when those passages are no longer current. Only relations every source passage of which lies in
        the scope are crossed, so nothing is learnt about documents outside it; an entity outside the scope gives an
        empty result, like an unknown one.

        Raises:
            EvidenceError: ``depth`` outside 1 to 3, or ``limit`` outside 1 to 100.
        """
        if not 1 <= depth <= MAX_DEPTH:
            raise EvidenceError(f"depth must be between 1 and {MAX_DEPTH}, got {depth}.")
        if not 1 <= limit <= MAX_LIMIT:
            raise EvidenceError(f"limit must be between 1 and {MAX_LIMIT}, got {limit}.")
        start = self._entity_named(entity)
        if start is None:
            return ExploreResult(None, ())
        walked = self.store.graph.scoped_relations(
            [start.id], self.scope.documents, relation_types=relation_types, depth=depth, limit=limit
        )
        ends = sorted({end for relation, _, _ in walked for end in (relation.source_id, relation.target_id)})
        names = {e.id: e.name for e in self.store.graph.visible_entities(ends, self.scope.documents)}
        edges = []
        for relation, hop, chunk_ids in walked:
            if relation.source_id not in names or relation.target_id not in names:
                continue  # an end the scope cannot see: the edge would reveal it
            passages = tuple(str(EvidenceId.of_chunk_id(c)) for c in chunk_ids)
            kind = EdgeKind.ASSERTION if passages else EdgeKind.PATH
            edges.append(
                ExploredEdge(
                    relation.id,
                    relation.type,
                    relation.source_id,
                    names[relation.source_id],
                    relation.target_id,
                    names[relation.target_id],
                    relation.description,
                    hop,
                    kind,
                    passages,
                )
            )
        return ExploreResult(start, tuple(edges))

    def check_citations(self, answer: str) -> CitationCheck:
        """Check the evidence ids a draft answer cites, and its figures and names, against what this session read.

        A citation is valid only if this session fetched (or navigated to) the id and it is in scope; invalid ones
        are removed from ``answer`` and listed with why. Sentences stating a figure or a name with no citation, and
        cited sentences whose figures or names the cited text lacks, are listed as warnings. No LLM is used.
        """
        return CitationChecker().check(answer, self._fetched, self._in_scope)

    def render_citations(self, answer: str) -> RenderedAnswer:
        """The answer with its valid citations numbered ``[1]``, ``[2]``, and a Sources list.

        Each source gives title, headings and version; invalid citations are dropped (``check_citations`` says why).
        """
        return CitationRenderer().render(self.check_citations(answer), self._fetched)

    def _in_scope(self, evidence_id: str) -> bool:
        documents = self.scope.document_ids
        return documents is None or EvidenceId.parse(evidence_id).document_id in documents

    def _entity_named(self, entity: str) -> EntityEvidence | None:
        """The visible entity with this id, else the visible entity with this exact (normalized) name."""
        # Within a scope, only a name in-scope text uses finds an entity (not the name another document gives it).
        found = self._evidence_of(self._lookup.resolve(entity, self.scope))
        return found[0] if found else None

    def _entity_evidence(self, entity_ids: Sequence[str]) -> tuple[EntityEvidence, ...]:
        return self._evidence_of(self._lookup.with_ids(entity_ids, self.scope))

    def _evidence_of(self, visible: Sequence[Entity]) -> tuple[EntityEvidence, ...]:
        support = self.store.graph.entity_support_in_scope(
            [e.id for e in visible], self.scope.documents, SUPPORT_PER_ENTITY
        )
        # Within a scope the store names each entity from in-scope records only, and gives a description only when
        # no document outside the scope names the record it comes from.
        return tuple(
            EntityEvidence(
                e.id,
                e.name,
                e.label,
                e.description,
                tuple(str(EvidenceId.of_chunk_id(c)) for c in support.get(e.id, ())),
            )
            for e in visible
            if support.get(e.id)
        )

    def _remember(self, items: Iterable[FetchedEvidence]) -> None:
        for item in items:
            self._fetched[item.id] = item

    def _read(self, evidence_id: EvidenceId, by_chunk: dict[str, Chunk]) -> FetchedEvidence | None:
        if evidence_id.chunk_id is not None:
            chunk = by_chunk.get(evidence_id.chunk_id)
            return None if chunk is None else self._chunk_evidence(chunk)
        assert evidence_id.span is not None  # an id names a chunk or a span
        start, end = evidence_id.span
        chunks = self.store.graph.version_chunks_overlapping(
            evidence_id.document_id, evidence_id.version, start, end, self.scope.documents
        )
        if not chunks:
            return None
        text, partial = span_text(chunks, start, end)
        first = chunks[0]
        location = EvidenceLocation(first.title, first.heading_path, start, end)
        # Every chunk of one version is current, or none is.
        return FetchedEvidence(str(evidence_id), text, location, first.current, partial)

    def _chunk_evidence(self, chunk: Chunk) -> FetchedEvidence:
        return FetchedEvidence(str(EvidenceId.of_chunk(chunk)), chunk.text, _location(chunk), chunk.current)

    def _chunk_at(self, evidence_id: EvidenceId) -> Chunk | None:
        """The chunk an id names; for a span, the smallest searchable chunk holding its start."""
        if evidence_id.chunk_id is not None:
            found = self.store.graph.get_chunks_in_scope([evidence_id.chunk_id], self.scope.documents)
            return found[0] if found else None
        assert evidence_id.span is not None  # an id names a chunk or a span
        start, end = evidence_id.span
        chunks = self.store.graph.version_chunks_overlapping(
            evidence_id.document_id, evidence_id.version, start, end, self.scope.documents
        )
        holding = [c for c in chunks if c.start <= start < c.end and c.searchable]
        return min(holding, key=lambda c: c.end - c.start, default=None)

    def _cells(self, chunk: Chunk, start: EvidenceId) -> FetchResult:
        if not chunk.cells:
            raise EvidenceError(f"{start} is not in a table: only a table chunk or a cell has cells around it.")
        target = _cell_at(chunk.cells, start.span) if start.span is not None else None
        if target is None:
            around = [c for c in chunk.cells if c.end > c.start]
        else:
            around = [
                c for c in chunk.cells if (c.row == target.row) != (c.column == target.column) and c.end > c.start
            ]
        items = []
        for cell in around:
            cell_id = EvidenceId(chunk.document_id, chunk.document_version, span=(cell.start, cell.end))
            text = chunk.text[cell.start - chunk.start : cell.end - chunk.start]
            location = EvidenceLocation(chunk.title, chunk.heading_path, cell.start, cell.end)
            items.append(FetchedEvidence(str(cell_id), text, location, chunk.current))
        self._remember(items)
        return FetchResult(tuple(items))


def _hit(result: SearchResult, query: str) -> EvidenceHit:
    """A chunk result as a hit: its id, a snippet around ``query``'s words, where it is, its score and methods."""
    chunk = result.item
    assert isinstance(chunk, Chunk)  # the chunk collection and the filtered graph results hold chunks only
    hit_id = str(EvidenceId.of_chunk(chunk))
    return EvidenceHit(hit_id, snippet(chunk.text, query), _location(chunk), result.score, result.methods)


def _location(chunk: Chunk) -> EvidenceLocation:
    return EvidenceLocation(chunk.title, chunk.heading_path, chunk.start, chunk.end)


def _cell_at(cells: Sequence[TableCell], span: tuple[int, int]) -> TableCell | None:
    start, end = span
    return next((c for c in cells if c.start < end and start < c.end), None)


def _member(kind: type[E], value: E | str, what: str) -> E:
    try:
        return kind(value)
    except ValueError:
        valid = ", ".join(member.value for member in kind)
        raise EvidenceError(f"Unknown {what} {value!r}: use one of {valid}.") from None
