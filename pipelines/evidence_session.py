"""``EvidenceSession``: the evidence functions of one caller, over one data dir, within one document scope."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.document_structure import TableCell
from agrag.components.data_models.evidence import (
    Direction,
    DiscoverMode,
    DiscoverResult,
    EvidenceHit,
    EvidenceLocation,
    EvidenceScope,
    FetchedEvidence,
    FetchResult,
)
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.data_models.search_result import SearchResult
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import EvidenceError
from agrag.components.evidence.snippets import snippet
from agrag.components.evidence.span_text import span_text
from agrag.components.joiners.rrf_joiner import reciprocal_rank_fusion
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.vector_payloads import chunk_from_payload
from agrag.components.stores.vector_store import CURRENT, STATUS_FIELD, PayloadFilter, QueryLeg

EVIDENCE_RRF_K = 60  # fixed by the spec for evidence discovery, whatever RETRIEVAL_RRF_K says
CANDIDATES_PER_RESULT = 4  # each leg fetches this many candidates per result asked for
MAX_CANDIDATES = 200
MAX_LIMIT = 100
_LEGS = {
    DiscoverMode.KEYWORD: (QueryLeg.KEYWORD,),
    DiscoverMode.VECTOR: (QueryLeg.DENSE,),
    DiscoverMode.HYBRID: (QueryLeg.DENSE, QueryLeg.KEYWORD),
}


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
        self, store: KnowledgeStore, embedder: SentenceTransformersTextEmbedder, scope: EvidenceScope | None = None
    ) -> None:
        """Read ``store`` within ``scope`` (None: every document), embedding queries with ``embedder``."""
        self.store = store
        self.embedder = embedder
        self.scope = scope or EvidenceScope()
        self._fetched: set[str] = set()

    @property
    def fetched(self) -> frozenset[str]:
        """The ids whose exact text this session returned."""
        return frozenset(self._fetched)

    def discover(self, query: str, mode: DiscoverMode | str = DiscoverMode.HYBRID, limit: int = 10) -> DiscoverResult:
        """Search the current versions in scope for passages about ``query``.

        ``keyword`` is BM25, ``vector`` is cosine similarity of MiniLM embeddings, ``hybrid`` fuses both by
        Reciprocal Rank Fusion (k = 60). A leg that fails is named in ``failed_legs`` while the other's hits return.

        Raises:
            EvidenceError: an unknown mode, or a limit outside 1 to 100.
        """
        mode = _mode(mode)
        if not 1 <= limit <= MAX_LIMIT:
            raise EvidenceError(f"limit must be between 1 and {MAX_LIMIT}, got {limit}.")
        if self.scope.document_ids == ():
            return DiscoverResult((), mode)
        candidates = min(limit * CANDIDATES_PER_RESULT, MAX_CANDIDATES)
        condition = PayloadFilter(((STATUS_FIELD, CURRENT),))
        if self.scope.document_ids is not None:
            condition = condition.and_("document_id", self.scope.document_ids)
        dense = self.embedder.embed_batch([query])[0] if QueryLeg.DENSE in _LEGS[mode] else []
        ranked: list[list[SearchResult]] = []
        failed: dict[str, str] = {}
        for leg in _LEGS[mode]:
            try:
                hits = self.store.chunks.query_leg(leg, dense, query, candidates, condition)
            # A leg is one of two ways to search; its failure is reported and the other's hits still come back.
            except Exception as exc:
                failed[leg.value] = f"{type(exc).__name__}: {exc}"
                continue
            ranked.append([SearchResult(chunk_from_payload(h), h.score, leg.value, (leg.value,)) for h in hits])
        fused = reciprocal_rank_fusion(ranked, EVIDENCE_RRF_K)
        truncated = len(fused) > limit or any(len(hits) >= candidates for hits in ranked)
        found = []
        for result in fused[:limit]:
            chunk = result.item
            assert isinstance(chunk, Chunk)  # the chunk collection holds chunks
            evidence_id = str(EvidenceId.of_chunk(chunk))
            location = _location(chunk)
            found.append(EvidenceHit(evidence_id, snippet(chunk.text, query), location, result.score, result.methods))
        return DiscoverResult(tuple(found), mode, failed, truncated)

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
        current = self._current_versions(p.document_id for p in parsed)
        items: list[FetchedEvidence] = []
        missing: list[str] = []
        for evidence_id in parsed:
            found = self._read(evidence_id, by_chunk, current)
            if found is None:
                missing.append(str(evidence_id))
            else:
                items.append(found)
                self._fetched.add(found.id)
        return FetchResult(tuple(items), tuple(missing))

    def navigate(self, evidence_id: str, direction: Direction | str) -> FetchResult:
        """The passages next to one: its parent section, children, siblings, previous or next chunk, or table cells.

        ``cells`` from a table chunk gives every cell; from a cell's span, the other cells of its row and column.
        An id not found (or outside the scope) comes back in ``not_found``.

        Raises:
            EvidenceError: a malformed id or an unknown direction.
        """
        where = _direction(direction)
        start = EvidenceId.parse(evidence_id)
        chunk = self._chunk_at(start)
        if chunk is None:
            return FetchResult((), (str(start),))
        if where is Direction.CELLS:
            return self._cells(chunk, start)
        neighbours = self.store.graph.chunk_neighbours(chunk.id, where.value, self.scope.documents)
        current = self._current_versions([chunk.document_id])
        items = tuple(self._chunk_evidence(c, current) for c in neighbours)
        self._fetched.update(item.id for item in items)
        return FetchResult(items)

    def _read(
        self, evidence_id: EvidenceId, by_chunk: dict[str, Chunk], current: dict[str, str]
    ) -> FetchedEvidence | None:
        if evidence_id.chunk_id is not None:
            chunk = by_chunk.get(evidence_id.chunk_id)
            return None if chunk is None else self._chunk_evidence(chunk, current)
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
        is_current = current.get(evidence_id.document_id) == evidence_id.version
        return FetchedEvidence(str(evidence_id), text, location, is_current, partial)

    def _chunk_evidence(self, chunk: Chunk, current: dict[str, str]) -> FetchedEvidence:
        is_current = current.get(chunk.document_id) == chunk.document_version
        return FetchedEvidence(str(EvidenceId.of_chunk(chunk)), chunk.text, _location(chunk), is_current)

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
        current = self._current_versions([chunk.document_id])
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
            is_current = current.get(chunk.document_id) == chunk.document_version
            items.append(FetchedEvidence(str(cell_id), text, location, is_current))
        self._fetched.update(item.id for item in items)
        return FetchResult(tuple(items))

    def _current_versions(self, document_ids: Iterable[str]) -> dict[str, str]:
        info = self.store.graph.document_version_info(sorted(set(document_ids)), self.scope.documents)
        return {doc: version for doc, (version, _) in info.items()}


def _location(chunk: Chunk) -> EvidenceLocation:
    return EvidenceLocation(chunk.title, chunk.heading_path, chunk.start, chunk.end)


def _cell_at(cells: Sequence[TableCell], span: tuple[int, int]) -> TableCell | None:
    start, end = span
    return next((c for c in cells if c.start < end and start < c.end), None)


def _mode(mode: DiscoverMode | str) -> DiscoverMode:
    try:
        return DiscoverMode(mode)
    except ValueError:
        valid = ", ".join(m.value for m in DiscoverMode)
        raise EvidenceError(f"Unknown discover mode {mode!r}: use one of {valid}.") from None


def _direction(direction: Direction | str) -> Direction:
    try:
        return Direction(direction)
    except ValueError:
        valid = ", ".join(d.value for d in Direction)
        raise EvidenceError(f"Unknown direction {direction!r}: use one of {valid}.") from None
