"""``PendingVectors``: the vector side of one graph commit, hidden from every search until the graph commits."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from agrag.components.stores.vector_store import (
    CURRENT,
    PENDING,
    STATUS_FIELD,
    VectorCollection,
    VectorPoint,
    VectorStore,
)

# The "status" of a fact point once the graph has committed: what the graph says then (``KnowledgeStore.settle_facts``).
FROM_GRAPH = "from-graph"


class PendingVectors:
    """What one commit does to the chunk, entity and fact vectors, held back until the graph has committed.

    A commit (a batch of documents, a delete, a re-extraction) ends with one graph statement that Kùzu commits
    whole (``commit_documents``, ``delete_document``...); the vector collections have no transactions. So before
    that statement, every point the commit adds or changes is written with the status ``pending``, which no search
    matches, and what it is to become is kept here; ``apply`` writes that once the graph has committed. Killed
    before the graph's commit, the graph's new chunks are uncommitted (read by no one) and the points pending;
    killed after it, the graph holds the commit and the points are still pending. In neither case can a reader find
    a chunk of a version that is not committed (or a retired one as current), and the next open of the data dir
    settles every pending point to what the graph holds (``KnowledgeStore.settle_pending``).

    A fact point's future is not known before the commit: it depends on which passages state its relation once the
    graph has committed (from this commit and earlier ones). So every fact point a commit adds or touches gets
    ``FROM_GRAPH``, and ``apply`` hands them to ``settle_facts``, which reads the graph (as the next open does).

    Usage:
        ```python
        pending = PendingVectors(store.chunks, store.entities, store.facts, store.settle_facts)
        pending.add(VectorCollection.CHUNKS, points)  # written pending, current once applied
        ...  # the graph's writes, ending with its commit statement
        pending.apply()
        ```
    """

    def __init__(
        self,
        chunks: VectorStore,
        entities: VectorStore,
        facts: VectorStore,
        settle_facts: Callable[[Sequence[str]], None],
    ) -> None:
        """Stage changes to the ``chunks``, ``entities`` and ``facts`` collections; ``settle_facts`` ends the latter."""
        self._stores = {
            VectorCollection.CHUNKS: chunks,
            VectorCollection.ENTITIES: entities,
            VectorCollection.FACTS: facts,
        }
        self._settle_facts = settle_facts
        # point id -> the status it gets once the graph committed; None: the point is deleted then
        self._then: dict[VectorCollection, dict[str, str | None]] = {c: {} for c in self._stores}

    def add(self, collection: VectorCollection, points: Sequence[VectorPoint], *, as_written: bool = False) -> None:
        """Write ``points`` now as pending; once applied, each gets the status its payload names (else current).

        Fact points get what the graph says once committed (``FROM_GRAPH``), whatever their payload says, unless
        ``as_written``: their payloads are what the graph will hold (a first load into an empty graph, whose relations
        are exactly these), and they only turn current.
        """
        if not points:
            return
        self._stores[collection].upsert(points, status=PENDING)
        then = self._then[collection]
        settled = collection is VectorCollection.FACTS and not as_written
        for point in points:
            then[point.id] = FROM_GRAPH if settled else str(point.payload.get(STATUS_FIELD, CURRENT))

    def touch_facts(self, ids: Sequence[str]) -> None:
        """Hide the stored fact points ``ids`` now; once applied they get what the graph says (``FROM_GRAPH``)."""
        self.change(VectorCollection.FACTS, ids, FROM_GRAPH)

    def change(self, collection: VectorCollection, ids: Sequence[str], then: str | None) -> None:
        """Hide the stored points ``ids`` now (pending); once applied they get the status ``then`` (None: deleted).

        Only ids of stored points: a pending status cannot be set on a point that does not exist.
        """
        if not ids:
            return
        self._stores[collection].set_payload(sorted(ids), {STATUS_FIELD: PENDING})
        for point_id in ids:
            self._then[collection][point_id] = then

    def facts_from_graph(self) -> list[str]:
        """The fact points this commit will settle from the graph once applied (``FROM_GRAPH``), by id."""
        return sorted(i for i, then in self._then[VectorCollection.FACTS].items() if then == FROM_GRAPH)

    def ids(self, collection: VectorCollection) -> list[str]:
        """The points of ``collection`` this commit made pending, by id."""
        return sorted(self._then[collection])

    def apply(self) -> None:
        """Give every staged point the status it is to have, and delete those to go: after the graph committed."""
        for collection, then in self._then.items():
            store = self._stores[collection]
            by_status: dict[str | None, list[str]] = defaultdict(list)
            for point_id, status in then.items():
                by_status[status].append(point_id)
            self._settle_facts(sorted(by_status.pop(FROM_GRAPH, [])))
            for status, point_ids in sorted(by_status.items(), key=lambda item: item[0] or ""):
                if status is None:
                    store.delete(point_ids)
                else:
                    store.set_payload(point_ids, {STATUS_FIELD: status})
            then.clear()
