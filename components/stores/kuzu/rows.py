"""The row format of each Kùzu table, both ways: the ``$rows`` entry a write sends and the columns a read returns.

Each ``*Row`` class names its columns once (``COLUMNS``, used in the ``RETURN`` of the statements that read it) and
reads a returned row by unpacking it in that order, so no column is read by position anywhere else.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypedDict

from agrag.components.data_models.applied_plan import AppliedPlan
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community, CommunityReport, Finding
from agrag.components.data_models.document import Document
from agrag.components.data_models.document_structure import TableCell
from agrag.components.data_models.entity import Entity, normalize_name
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.resolution import MergeDecision, MergeLogEntry, ResolutionCandidate
from agrag.components.data_models.stored_document import StoredDocument


class DocumentParams(TypedDict):
    """A ``Document`` row as ``UPSERT_DOCUMENTS`` writes it."""

    id: str
    version: str
    title: str
    source_path: str
    chunk_count: int
    config_hash: str
    source_folder: str
    plan: str


class DocumentRow:
    """The ``Document`` table: a committed document version (``d``)."""

    COLUMNS = ("d.id", "d.version", "d.title", "d.source_path", "d.chunk_count", "d.source_folder", "d.plan")
    RETURN = ", ".join(COLUMNS)
    # Without the plan: what ``stored_documents`` reads.
    RETURN_ORIGIN = ", ".join(COLUMNS[:-1])

    @staticmethod
    def params(document: Document, chunk_count: int, config_hash: str, plan: str) -> DocumentParams:
        """The row that records ``document`` as committed with ``chunk_count`` chunks."""
        return DocumentParams(
            id=document.id,
            version=document.version,
            title=document.title,
            source_path=document.source_path,
            chunk_count=chunk_count,
            config_hash=config_hash,
            source_folder=document.source_folder,
            plan=plan,
        )

    @staticmethod
    def read(row: Sequence[Any]) -> StoredDocument:
        """A row of ``COLUMNS`` (or of ``RETURN_ORIGIN``: no plan) as a ``StoredDocument``."""
        doc_id, version, title, source_path, chunk_count, source_folder, *plan = row
        return StoredDocument(
            doc_id,
            version,
            title or "",
            source_path or "",
            int(chunk_count or 0),
            source_folder or "",
            AppliedPlan.from_json(plan[0] or "") if plan else None,
        )


class ChunkParams(TypedDict):
    """A ``Chunk`` row as ``UPSERT_CHUNKS`` writes it (it sets ``current`` itself)."""

    id: str
    document_id: str
    document_version: str
    title: str
    text: str
    heading_path: list[str]
    ord: int
    start_offset: int
    end_offset: int
    parent_id: str
    kind: str
    cells: str


class ChunkRow:
    """The ``Chunk`` table: a passage of one document version (``c``); table cells are stored as JSON."""

    COLUMNS = (
        "c.id", "c.document_id", "c.document_version", "c.text", "c.heading_path", "c.ord", "c.start_offset",
        "c.end_offset", "c.parent_id", "c.title", "c.kind", "c.cells", "c.current",
    )  # fmt: skip
    RETURN = ", ".join(COLUMNS)

    @staticmethod
    def params(chunk: Chunk) -> ChunkParams:
        """The row that stores ``chunk`` (as current)."""
        cells = json.dumps([[x.row, x.column, x.start, x.end] for x in chunk.cells]) if chunk.cells else ""
        return ChunkParams(
            id=chunk.id,
            document_id=chunk.document_id,
            document_version=chunk.document_version,
            title=chunk.title,
            text=chunk.text,
            heading_path=list(chunk.heading_path),
            ord=chunk.order,
            start_offset=chunk.start,
            end_offset=chunk.end,
            parent_id=chunk.parent_id or "",
            kind=chunk.kind,
            cells=cells,
        )

    @staticmethod
    def read(row: Sequence[Any]) -> Chunk:
        """A row of ``COLUMNS`` as a ``Chunk``."""
        chunk_id, doc_id, version, text, heading_path, order, start, end, parent_id, title, kind, cells, current = row
        return Chunk(
            id=chunk_id,
            document_id=doc_id,
            document_version=version,
            text=text,
            heading_path=tuple(heading_path),
            order=order,
            start=start,
            end=end,
            parent_id=parent_id or None,
            title=title,
            kind=kind or "text",
            cells=tuple(TableCell(*cell) for cell in json.loads(cells)) if cells else (),
            current=bool(current),
        )


class EntityParams(TypedDict):
    """An ``Entity`` row as ``UPSERT_ENTITIES`` writes it (``merged_into`` keeps its default)."""

    id: str
    name: str
    norm_name: str
    label: str
    description: str


class EntityRow:
    """The ``Entity`` table: an entity record (``e``); ``merged_into`` is read by the statements that need it."""

    COLUMNS = ("e.id", "e.name", "e.label", "e.description")
    RETURN = ", ".join(COLUMNS)

    @staticmethod
    def params(entity: Entity) -> EntityParams:
        """The row that creates ``entity``, with the normalized name lookups match on."""
        return EntityParams(
            id=entity.id,
            name=entity.name,
            norm_name=normalize_name(entity.name),
            label=entity.label,
            description=entity.description,
        )

    @staticmethod
    def read(row: Sequence[Any]) -> Entity:
        """A row of ``COLUMNS`` as an ``Entity``."""
        entity_id, name, label, description = row
        return Entity(id=entity_id, name=name, label=label, description=description)


class RelationParams(TypedDict):
    """A ``RELATED`` row as ``UPSERT_RELATIONS`` writes it."""

    id: str
    source_id: str
    target_id: str
    type: str
    description: str
    chunk_ids: list[str]


class RelationRow:
    """The ``RELATED`` table (``x``, from ``a`` to ``b``); a read returns its ends as the caller resolves them."""

    COLUMNS = ("x.id", "x.type", "x.description", "x.chunk_ids")

    @staticmethod
    def returning(source: str, target: str) -> str:
        """The ``RETURN`` list of a relation whose ends are the expressions ``source`` and ``target``."""
        return ", ".join((*RelationRow.COLUMNS, source, target))

    @staticmethod
    def params(relation: Relation) -> RelationParams:
        """The row that creates ``relation`` (or adds its chunk ids to the stored one)."""
        return RelationParams(
            id=relation.id,
            source_id=relation.source_id,
            target_id=relation.target_id,
            type=relation.type,
            description=relation.description,
            chunk_ids=sorted(relation.chunk_ids),
        )

    @staticmethod
    def read(row: Sequence[Any]) -> Relation:
        """A row of ``returning(...)`` (extra columns after it ignored) as a ``Relation``."""
        rel_id, rel_type, description, chunk_ids, source_id, target_id = row[:6]
        return Relation(rel_id, source_id, target_id, rel_type, tuple(chunk_ids), description)


class MergeLogParams(TypedDict):
    """A ``MergeLog`` row as ``UPSERT_MERGE_LOG`` writes it (``undone`` starts false)."""

    id: str
    member_id: str
    resolved_id: str
    decision: str
    rule: str
    score: float
    reason: str
    run_id: str


class MergeLogRow:
    """The ``MergeLog`` table (``m``), read with the names of both entities (``a``, ``b``, optional)."""

    COLUMNS = (
        "m.id", "m.member_id", "m.resolved_id", "m.decision", "m.rule", "m.score", "m.reason", "m.undone", "a.name",
        "b.name",
    )  # fmt: skip
    RETURN = ", ".join(COLUMNS)

    @staticmethod
    def params(decision: MergeDecision, run_id: str, position: int) -> MergeLogParams:
        """The log line of one decision: ``{run_id}-{position}``."""
        return MergeLogParams(
            id=f"{run_id}-{position:05d}",
            member_id=decision.member_id,
            resolved_id=decision.resolved_id,
            decision=decision.decision,
            rule=decision.rule,
            score=float(decision.score),
            reason=decision.reason,
            run_id=run_id,
        )

    @staticmethod
    def read(row: Sequence[Any]) -> MergeLogEntry:
        """A row of ``COLUMNS`` as a ``MergeLogEntry``."""
        log_id, member_id, resolved_id, decision, rule, score, reason, undone, member_name, resolved_name = row
        return MergeLogEntry(
            log_id,
            member_id,
            resolved_id,
            decision,
            rule,
            float(score),
            reason,
            bool(undone),
            member_name or "",
            resolved_name or "",
        )


class CandidateParams(TypedDict):
    """A ``Candidate`` row as ``UPSERT_CANDIDATES`` writes it; its id is the sorted pair."""

    id: str
    entity_id: str
    other_id: str
    name: str
    other_name: str
    score: float
    rule: str


class CandidateRow:
    """The ``Candidate`` table (``x``): a near miss of entity resolution."""

    COLUMNS = ("x.entity_id", "x.other_id", "x.name", "x.other_name", "x.score", "x.rule")
    RETURN = ", ".join(COLUMNS)

    @staticmethod
    def params(candidate: ResolutionCandidate) -> CandidateParams:
        """The row of one near miss, keyed by its pair of entity ids in order."""
        return CandidateParams(
            id="|".join(sorted((candidate.entity_id, candidate.other_id))),
            entity_id=candidate.entity_id,
            other_id=candidate.other_id,
            name=candidate.name,
            other_name=candidate.other_name,
            score=float(candidate.score),
            rule=candidate.rule,
        )

    @staticmethod
    def read(row: Sequence[Any]) -> ResolutionCandidate:
        """A row of ``COLUMNS`` as a ``ResolutionCandidate``."""
        entity_id, other_id, name, other_name, score, rule = row
        return ResolutionCandidate(entity_id, other_id, name, other_name, float(score), rule)


class CommunityParams(TypedDict):
    """A ``Community`` row as ``UPSERT_COMMUNITIES`` writes it; the report's findings are JSON."""

    id: str
    level: int
    parent_id: str
    size: int
    title: str
    summary: str
    rating: float
    findings: str
    method: str


class CommunityRow:
    """The ``Community`` table (``k``) with its report, read with its members' ids (``collect(e.id)``)."""

    COLUMNS = ("k.id", "k.level", "k.parent_id", "k.title", "k.summary", "k.rating", "k.findings", "k.method")
    RETURN = ", ".join(COLUMNS)

    @staticmethod
    def params(community: Community) -> CommunityParams:
        """The row of ``community`` and its report (empty fields without one)."""
        report = community.report
        return CommunityParams(
            id=community.id,
            level=community.level,
            parent_id=community.parent_id or "",
            size=len(community.entity_ids),
            title=report.title if report else "",
            summary=report.summary if report else "",
            rating=float(report.rating) if report else 0.0,
            findings=json.dumps([[f.summary, f.explanation] for f in report.findings]) if report else "[]",
            method=report.method if report else "",
        )

    @staticmethod
    def read(row: Sequence[Any]) -> Community:
        """A row of ``COLUMNS`` followed by the member ids as a ``Community`` (a report only if it has a method)."""
        community_id, level, parent_id, title, summary, rating, findings, method, members = row
        report = None
        if method:
            parsed = [Finding(a, b) for a, b in json.loads(findings or "[]")]
            report = CommunityReport(title, summary, float(rating), tuple(parsed), method)
        # collect() over an OPTIONAL MATCH that found nothing gives null, not [] (a community whose entities were all
        # deleted since it was detected)
        member_ids = tuple(sorted(m for m in members or () if m))
        return Community(community_id, int(level), member_ids, parent_id or None, report)
