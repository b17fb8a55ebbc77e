"""``KuzuResolution``: entity resolution in the Kùzu store (merges as pointers, the merge log, near misses)."""

from __future__ import annotations

from collections.abc import Sequence

from agrag.components.data_models.entity import Entity
from agrag.components.data_models.resolution import MERGED, MergeDecision, MergeLogEntry, ResolutionCandidate
from agrag.components.errors import MergeNotFoundError, StoreError
from agrag.components.stores.kuzu import resolution_cypher as cy
from agrag.components.stores.kuzu.connection import KuzuConnection
from agrag.components.stores.kuzu.retrieval_cypher import CANONICAL_IDS
from agrag.components.stores.kuzu.rows import CandidateRow, EntityRow, MergeLogRow, merge_log_params


class KuzuResolution(KuzuConnection):
    """What entity resolution reads and records: the entities to resolve into, merges, the log, the near misses.

    A merge never rewrites edges: the member keeps its mentions and relations and gets ``merged_into``; every read
    maps it to the resolved entity, and an undo only clears the pointer.
    """

    def canonical_entities(self) -> list[Entity]:
        """Every stored entity that is not merged into another: what new entities may resolve into."""
        return [EntityRow.read(row) for row in sorted(self._run(cy.CANONICAL_ENTITIES))]

    def resolved_ids(self, entity_ids: Sequence[str]) -> dict[str, str]:
        """The resolved id (the entity it is merged into, else itself) of each stored entity among ``entity_ids``."""
        return {row[0]: row[1] for row in self._run_batched(CANONICAL_IDS, "ids", sorted(set(entity_ids)))}

    def apply_resolution(
        self,
        decisions: Sequence[MergeDecision],
        candidates: Sequence[ResolutionCandidate],
        run_id: str,
        *,
        positions: Sequence[int] | None = None,
    ) -> None:
        """Record merges as pointers (``merged`` decisions), log every decision, and keep the near misses.

        Each decision's log line is ``{run_id}-{position}``: ``positions`` gives each decision's place in its run's
        list when ``decisions`` are a part of it (one commit batch); by default they are numbered from 0.
        """
        if positions is not None and len(positions) != len(decisions):
            raise StoreError("Internal error: apply_resolution needs one position per decision.")
        merges = [{"member_id": d.member_id, "resolved_id": d.resolved_id} for d in decisions if d.decision == MERGED]
        self._write_batched(cy.SET_MERGED_INTO, "rows", merges)
        self._write_batched(cy.FOLLOW_MERGES, "rows", merges)
        numbered = zip(positions if positions is not None else range(len(decisions)), decisions, strict=True)
        log = [merge_log_params(d, run_id, index) for index, d in numbered]
        self._write_batched(cy.UPSERT_MERGE_LOG, "rows", log)
        merged_ids = [d.member_id for d in decisions if d.decision == MERGED]
        self._write_batched(cy.DELETE_CANDIDATES_OF, "ids", merged_ids)
        self._write_batched(cy.UPSERT_CANDIDATES, "rows", [CandidateRow.params(c) for c in candidates])
        self._bump_generation()

    def merge_log(self) -> list[MergeLogEntry]:
        """Every resolution decision, oldest run first, with the names of both entities."""
        return [MergeLogRow.read(row) for row in self._run(cy.GET_MERGE_LOG)]

    def undo_merge(self, key: str) -> list[MergeLogEntry]:
        """Undo the active merge with this log id, or every active merge of the entity with this id.

        The member entity gets back its own mentions, relations and search point; the log keeps the line, marked
        undone. Returns the lines undone.

        Raises:
            MergeNotFoundError: no active merge has this log id or member id.
        """
        rows = self._write(cy.ACTIVE_MERGES_OF, {"id": key})
        if not rows:
            raise MergeNotFoundError(key)
        for log_id, _, _ in rows:
            self._write(cy.UNDO_MERGE, {"log_id": log_id})
        self._bump_generation()
        undone = {row[0] for row in rows}
        return [entry for entry in self.merge_log() if entry.id in undone]

    def candidates(self) -> list[ResolutionCandidate]:
        """The near misses of entity resolution, most similar first."""
        return [CandidateRow.read(row) for row in self._run(cy.GET_CANDIDATES)]
