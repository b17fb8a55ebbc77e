"""The row format of each Kùzu table, both ways: the ``$rows`` entry a write sends and the columns a read returns.

Each table's format is one ``RowFormat`` (``row_format.py``): its columns named once, used in the ``RETURN`` of the
statements that read it and in the ``$rows`` of those that write it, so no column is read by position anywhere
else. A column that holds a closed set (a chunk kind, a merge decision, a rule, a report method) is read back as its
enum; a value outside the set raises ``UnknownStoredValueError``.
"""

from __future__ import annotations

import json
from typing import Any

from agrag.components.data_models.applied_plan import AppliedPlan
from agrag.components.data_models.chunk import Chunk, ChunkKind
from agrag.components.data_models.community import Community, CommunityReport, Finding, ReportMethod
from agrag.components.data_models.document import Document
from agrag.components.data_models.document_structure import TableCell
from agrag.components.data_models.entity import Entity, normalize_name
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.resolution import (
    MergeDecision,
    MergeLogEntry,
    MergeOutcome,
    ResolutionCandidate,
    ResolutionRule,
)
from agrag.components.data_models.resolved_entity import MergedEntity
from agrag.components.data_models.stored_document import StoredDocument
from agrag.components.stores.kuzu.row_format import RowFormat

STORE = "graph store"


def _text(value: str | None) -> str:
    return value or ""


def _rule(value: str) -> ResolutionRule:
    return ResolutionRule.from_stored(value, STORE)


DocumentRow = RowFormat[Document, StoredDocument](
    StoredDocument,
    # ``plan`` last: ``returning(upto=-1)`` leaves it out (a listing of origins), and it reads as None
    "d: id version title source_path chunk_count< source_folder plan<",
    fields={"chunk_count": "chunks"},
    load={
        "title": _text,
        "source_path": _text,
        "source_folder": _text,
        "chunk_count": lambda n: int(n or 0),
        "plan": lambda text: AppliedPlan.from_json(text or ""),
    },
)
"""The ``Document`` table (``d``): a committed document version, read as a ``StoredDocument``.

A write adds what the ``Document`` value does not hold: ``chunk_count``, ``config_hash`` and ``plan`` (JSON).
"""


def _cells_json(chunk: Chunk) -> str:
    return json.dumps([[x.row, x.column, x.start, x.end] for x in chunk.cells]) if chunk.cells else ""


def _cells(text: str | None) -> tuple[TableCell, ...]:
    return tuple(TableCell(*cell) for cell in json.loads(text)) if text else ()


ChunkRow = RowFormat[Chunk, Chunk](
    Chunk,
    "c: id document_id document_version text heading_path ord start_offset end_offset parent_id title kind cells "
    "current<",
    fields={"ord": "order", "start_offset": "start", "end_offset": "end"},
    dump={
        "heading_path": lambda c: list(c.heading_path),
        "parent_id": lambda c: c.parent_id or "",
        "cells": _cells_json,
    },
    load={
        "heading_path": tuple,
        "parent_id": lambda p: p or None,
        "kind": lambda kind: ChunkKind.from_stored(kind or ChunkKind.TEXT, STORE),
        "cells": _cells,
        "current": bool,
    },
)
"""The ``Chunk`` table (``c``): a passage of one document version; table cells are stored as JSON.

A write leaves ``current`` to the statements: NULL for a new chunk (not committed: no read sees it) until its
document version is committed, then true, and false once superseded.
"""

EntityRow = RowFormat[Entity, Entity](
    Entity,
    "e: id name norm_name> label description",
    dump={"norm_name": lambda e: normalize_name(e.name)},
)
"""The ``Entity`` table (``e``): an entity record, written with the normalized name lookups match on.

``merged_into`` is left to the statements that need it.
"""

RelationRow = RowFormat[Relation, Relation](
    Relation,
    # the ends are expressions of each statement (the entities they resolved into): see ``returning``
    "x: id type description chunk_ids source_id target_id",
    dump={"chunk_ids": lambda r: sorted(r.chunk_ids)},
    load={"chunk_ids": tuple},
)
"""The ``RELATED`` table (``x``, from ``a`` to ``b``); a write adds its chunk ids to a stored relation.

Read with ``returning(source_id=..., target_id=...)``; columns after those six are the statement's own.
"""

MergeLogRow = RowFormat[MergeDecision, MergeLogEntry](
    MergeLogEntry,
    "m: id< member_id resolved_id decision rule score reason undone< a.name< b.name<",
    fields={"a.name": "member_name", "b.name": "resolved_name"},
    dump={"score": lambda d: float(d.score)},
    load={
        "decision": lambda d: MergeOutcome.from_stored(d, STORE),
        "rule": _rule,
        "score": float,
        "undone": bool,
        "a.name": _text,
        "b.name": _text,
    },
)
"""The ``MergeLog`` table (``m``): one decision of one run, read with the names of both entities (``a``, ``b``)."""


def merge_log_params(decision: MergeDecision, run_id: str, position: int) -> dict[str, Any]:
    """The log line of one decision: ``{run_id}-{position}`` (``undone`` starts false)."""
    return MergeLogRow.params(decision, id=f"{run_id}-{position:05d}", run_id=run_id)


def _merged_member(
    *,
    merged_into: str,
    id: str,
    name: str,
    label: str,
    log_id: str | None,
    rule: str | None,
    score: float | None,
    reason: str | None,
) -> tuple[str, str, MergedEntity]:
    """``(resolved id, log id, MergedEntity)``; the log id is ``''`` without a merge-log line."""
    merged_rule = _rule(rule) if rule else None
    return merged_into, log_id or "", MergedEntity(id, name, label, merged_rule, float(score or 0.0), reason or "")


MergedMemberRow = RowFormat[MergedEntity, tuple[str, str, MergedEntity]](
    _merged_member,
    "e: merged_into< id< name< label< m.id< m.rule< m.score< m.reason<",
    fields={"m.id": "log_id", "m.rule": "rule", "m.score": "score", "m.reason": "reason"},
)
"""An entity record merged into another (``e``), with an active merge-log line of it (``m``, optional); read only."""

CandidateRow = RowFormat[ResolutionCandidate, ResolutionCandidate](
    ResolutionCandidate,
    "x: id> entity_id other_id name other_name score rule",
    dump={"id": lambda c: "|".join(sorted((c.entity_id, c.other_id))), "score": lambda c: float(c.score)},
    load={"score": float, "rule": _rule},
)
"""The ``Candidate`` table (``x``): a near miss of entity resolution, keyed by its pair of entity ids in order."""


def _community(
    *,
    id: str,
    level: int,
    parent_id: str,
    entity_ids: list[str] | None,
    title: str,
    summary: str,
    rating: float,
    findings: str,
    method: str,
) -> Community:
    """A ``Community`` (a report only if it has a method) from its row and its members' ids."""
    report = None
    if method:
        parsed = tuple(Finding(a, b) for a, b in json.loads(findings or "[]"))
        report = CommunityReport(title, summary, float(rating), parsed, ReportMethod.from_stored(method, STORE))
    # collect() over an OPTIONAL MATCH that found nothing gives null, not [] (a community whose entities were all
    # deleted since it was detected)
    members = tuple(sorted(m for m in entity_ids or () if m))
    return Community(id, int(level), members, parent_id or None, report)


def _report_columns(community: Community) -> dict[str, Any]:
    """The report's columns of a community's row (empty fields without a report)."""
    report = community.report
    if report is None:
        return {"title": "", "summary": "", "rating": 0.0, "findings": "[]", "method": ""}
    findings = json.dumps([[f.summary, f.explanation] for f in report.findings])
    return {
        "title": report.title,
        "summary": report.summary,
        "rating": float(report.rating),
        "findings": findings,
        "method": report.method,
    }


CommunityRow = RowFormat[Community, Community](
    _community,
    "k: id level parent_id size> title< summary< rating< findings< method< collect(e.id)<",
    fields={"collect(e.id)": "entity_ids"},
    dump={"parent_id": lambda k: k.parent_id or "", "size": lambda k: len(k.entity_ids)},
)
"""The ``Community`` table (``k``) with its report, read with its members' ids (``collect(e.id)``)."""


def community_params(community: Community) -> dict[str, Any]:
    """The row of ``community`` and its report."""
    return CommunityRow.params(community, **_report_columns(community))
