"""Read a data dir every way a caller can and check that nothing read belongs to a version that was never committed.

What "committed" means is read from the data dir itself: the documents listing gives each document's current
version (a document gets its version when its commit batch commits). Every search recipe, every evidence function
and the status counts must agree with that listing: a chunk said to be current (a result, its parent, a passage of
an entity or an edge, a neighbour) is of a listed version, and an id of a version never committed is not found.
Entities and relations are not held to it: those a killed batch wrote before its commit stay in the graph, named
by no chunk anyone can read, until the run is started again. ``Versions`` remembers every version a listing ever
showed, so superseded text (still readable by id) is told apart from text that was never committed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.evidence import Direction, DiscoverMode
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.data_models.fact import Fact
from agrag.components.data_models.ingestion_run import RunState, StageState
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.search_result import SearchResult
from agrag.pipelines.runtime import Runtime
from agrag.pipelines.store_status import store_status

RECIPES = ("chunk", "hybrid", "entity", "graph_expand", "fact")


def version_of(chunk_id: str) -> tuple[str, str]:
    """``(document id, version)`` of a chunk id (``<document>.<version>.<order>``)."""
    document_id, version, _ = chunk_id.split(".")
    return document_id, version


@dataclass
class Versions:
    """Document versions seen committed so far, and every evidence id a test may ask for (of any version)."""

    every_id: list[str]
    committed: set[tuple[str, str]] = field(default_factory=set)


class CommittedReads:
    """The checks, against one open runtime; ``current`` is its documents listing (id -> version)."""

    def __init__(self, runtime: Runtime, versions: Versions, queries: tuple[str, ...]) -> None:
        self.runtime = runtime
        self.versions = versions
        self.queries = queries
        listed = runtime.store.graph.documents(limit=1000)
        assert all(d.version and d.title and d.source_path for d in listed), f"a listed document is half-made: {listed}"
        self.current = {d.id: d.version for d in listed}
        versions.committed |= set(self.current.items())
        status = store_status(runtime.store)
        assert status.documents == len(listed), f"status counts {status.documents} documents, the listing {len(listed)}"
        chunks = sum(d.chunks for d in listed)
        assert status.chunks == chunks, f"status counts {status.chunks} current chunks, the listed documents {chunks}"

    def check_current(self, chunk_id: str, where: str) -> None:
        document_id, version = version_of(chunk_id)
        assert self.current.get(document_id) == version, (
            f"{where} returned {chunk_id} as current, but the committed version of {document_id} is "
            f"{self.current.get(document_id)!r}"
        )

    def run(self) -> int:
        """Every check; returns how many items were read."""
        with self.runtime.store.reading():
            return self._search() + self._evidence() + self._fetch() + self._runs()

    def _search(self) -> int:
        read = 0
        for recipe in RECIPES:
            config = self.runtime.config_for([f"recipe={recipe}", "recipe.limit=30"]).recipe
            for query in self.queries:
                for result in self.runtime.engine.search_sync(query, config).results:
                    self._check_result(result, f"search {recipe} {query!r}")
                    read += 1
        return read

    def _check_result(self, result: SearchResult, where: str) -> None:
        item = result.item
        if isinstance(item, Chunk):
            self.check_current(item.id, where)
            if result.parent is not None:
                self.check_current(result.parent.id, f"{where} (parent)")
        elif isinstance(item, Entity):  # every chunk said to support it is current (it may have none yet: see above)
            for chunk_id in self.runtime.store.graph.supporting_chunk_ids([item.id]).get(item.id, []):
                self.check_current(chunk_id, f"{where} (support of {item.name})")
        elif isinstance(item, Fact):  # a fact is found only with the committed passages that state it
            assert item.passages, f"{where} returned {item.statement} with no passage"
            for chunk_id in (*item.chunk_ids, *(p.id for p in item.passages)):
                self.check_current(chunk_id, f"{where} (passage of {item.statement})")
        else:
            assert isinstance(item, Community | Relation), f"{where} returned a {type(item).__name__}"

    def _evidence(self) -> int:
        session = self.runtime.evidence_session()
        read = 0
        for query in self.queries:
            for mode in DiscoverMode:
                for hit in session.discover(query, mode, limit=50).hits:
                    self.check_current(str(EvidenceId.parse(hit.id).chunk_id), f"discover {mode} {query!r}")
                    read += 1
            for entity in session.find_entities(query, limit=10):
                for passage in (*entity.passages, *(p for fact in entity.facts for p in fact.passages)):
                    self.check_current(str(EvidenceId.parse(passage).chunk_id), f"find_entities {query!r}")
                for edge in session.explore(entity.id, depth=2).edges:
                    for passage in edge.passages:
                        self.check_current(str(EvidenceId.parse(passage).chunk_id), f"explore {entity.name}")
                    read += 1
                read += 1
        return read

    def _fetch(self) -> int:
        session = self.runtime.evidence_session()
        fetched = session.fetch(self.versions.every_id)
        for item in fetched.items:
            document_id, version = version_of(str(EvidenceId.parse(item.id).chunk_id))
            assert (document_id, version) in self.versions.committed, f"fetch read {item.id}, never committed"
            assert item.current == (self.current.get(document_id) == version), (
                f"fetch: {item.id} current={item.current}"
            )
            if item.current:
                for direction in (Direction.NEXT, Direction.SIBLINGS, Direction.PARENT):
                    for near in session.navigate(item.id, direction).items:
                        near_id = str(EvidenceId.parse(near.id).chunk_id)
                        self.check_current(near_id, f"navigate {direction} from {item.id}")
        never = [
            i
            for i in self.versions.every_id
            if version_of(str(EvidenceId.parse(i).chunk_id)) not in self.versions.committed
        ]
        assert set(never) <= set(fetched.not_found), (
            f"fetch read ids of versions never committed: {sorted(set(never) - set(fetched.not_found))}"
        )
        return len(fetched.items)

    def _runs(self) -> int:
        """No run or stage of the registry is still running: this process holds the data dir."""
        runs = self.runtime.runs.recent()
        for run in runs:
            assert run.state != RunState.RUNNING, f"run {run.id} is still recorded running"
            running = [s.name for s in run.stages if s.state == StageState.RUNNING]
            assert not running, f"run {run.id} ({run.state}) still has stages running: {running}"
        return len(runs)
