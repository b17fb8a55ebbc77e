"""What the evidence functions return: hits, fetched text, neighbours, and the scope they read within."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from agrag.components.data_models.immutable import Immutable

MAX_LIMIT = 100  # the most hits, ids, entities or relations one evidence call takes or returns
MAX_DEPTH = 3  # the most hops ``explore`` walks
FACTS_PER_ENTITY = 3  # the most facts ``find_entities`` gives with each entity


class DiscoverMode(StrEnum):
    """How ``discover`` searches: one or both text legs, or ``graph`` (the graph walk of the ``bridge`` recipe)."""

    KEYWORD = "keyword"
    VECTOR = "vector"
    HYBRID = "hybrid"
    GRAPH = "graph"


class EvidenceSearchMode(StrEnum):
    """How the ``search_evidence`` tool finds passages: a ``discover`` mode (``graph``: the ``bridge`` walk)."""

    KEYWORD = "keyword"
    VECTOR = "vector"
    HYBRID = "hybrid"
    GRAPH = "graph"


class Direction(StrEnum):
    """Where ``navigate`` moves from a passage."""

    PARENT = "parent"
    CHILDREN = "children"
    SIBLINGS = "siblings"
    PREVIOUS = "previous"
    NEXT = "next"
    CELLS = "cells"


@dataclass(frozen=True, slots=True)
class EvidenceScope(Immutable):
    """The documents a caller may read, fixed once per session and applied inside every store query.

    Attributes:
        document_ids: The readable documents; None means every document of the data dir.
    """

    document_ids: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.document_ids is not None:
            object.__setattr__(self, "document_ids", tuple(sorted(set(self.document_ids))))

    @property
    def documents(self) -> list[str] | None:
        """The scope as a store query parameter (None: unscoped)."""
        return None if self.document_ids is None else list(self.document_ids)


@dataclass(frozen=True, slots=True)
class EvidenceLocation(Immutable):
    """Where a passage sits: its document's title, the headings above it and its characters in the version."""

    title: str
    heading_path: tuple[str, ...]
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class EvidenceHit(Immutable):
    """One passage found by ``discover``.

    Attributes:
        id: Its evidence id (a chunk of the current version).
        snippet: A short excerpt around the words of the query.
        location: Title, heading path and span.
        score: The RRF score (k = 60) over the legs the mode runs; one leg's RRF score in keyword or vector mode.
        legs: The legs that found it, best rank first.
    """

    id: str
    snippet: str
    location: EvidenceLocation
    score: float
    legs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DiscoverResult(Immutable):
    """The hits of one ``discover`` call and how the search went.

    Attributes:
        hits: Best first, at most ``limit``.
        mode: The legs asked for.
        failed_legs: Leg name → why it failed; the other leg's hits still come back.
        truncated: True when more passages matched than were returned (a leg filled its candidate list, or the
            fused list was longer than ``limit``).
    """

    hits: tuple[EvidenceHit, ...]
    mode: DiscoverMode
    failed_legs: dict[str, str] = field(default_factory=dict)
    truncated: bool = False

    @property
    def ok(self) -> bool:
        """True when every leg asked for ran."""
        return not self.failed_legs


@dataclass(frozen=True, slots=True)
class FetchedEvidence(Immutable):
    """The exact text behind one evidence id.

    Attributes:
        id: The id asked for, in its canonical form.
        text: The characters of the chunk, or those of the span that the stored chunks cover (gaps joined by " … ").
        location: Title, heading path (of the first chunk) and span.
        current: False when the id's version has been superseded by a newer one (the text is the old version's).
        partial: True when the stored chunks cover only part of a span.
    """

    id: str
    text: str
    location: EvidenceLocation
    current: bool
    partial: bool = False


@dataclass(frozen=True, slots=True)
class FetchResult(Immutable):
    """What ``fetch`` found: the evidence in scope, and the ids it could not find (or may not show)."""

    items: tuple[FetchedEvidence, ...]
    not_found: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FactEvidence(Immutable):
    """A fact about an entity: ``Victor Hale -[owns]-> Osprey Ceramics``, with the passages in scope that state it.

    Attributes:
        id: The relation's id.
        fact: Subject, predicate and object in their direction, as ``source -[type]-> target``.
        source_id: The entity it starts from (resolved).
        target_id: The entity it points to (resolved).
        passages: Evidence ids of the current passages in scope that state it, best first.
    """

    id: str
    fact: str
    source_id: str
    target_id: str
    passages: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EntityEvidence(Immutable):
    """An entity found by ``find_entities``, with passages in scope that support it and facts they state about it.

    Attributes:
        id: The resolved entity's id (what ``explore`` takes).
        name: Its name.
        label: Its label (type).
        description: Its description, if extraction gave one; empty in a scoped session (a description merges
            what every document said, so it could quote a document outside the scope).
        passages: Up to three evidence ids of current passages in scope about or mentioning it, best first.
        facts: Up to three facts that current passages in scope state about it, those most like the query first
            (``explore`` walks all of them).
    """

    id: str
    name: str
    label: str
    description: str
    passages: tuple[str, ...]
    facts: tuple[FactEvidence, ...] = ()


class EdgeKind(StrEnum):
    """Whether a visible passage states an edge."""

    ASSERTION = "assertion"  # a current passage in scope states it; its id is given
    PATH = "path"  # a connection whose supporting passages are no longer current


@dataclass(frozen=True, slots=True)
class ExploredEdge(Immutable):
    """One relation reached by ``explore``.

    Attributes:
        id: The relation's id.
        type: Its type, e.g. ``WORKED_WITH``.
        source_id: The entity it starts from (resolved).
        source: That entity's name.
        target_id: The entity it points to (resolved).
        target: That entity's name.
        description: What extraction said of it.
        hop: 1 for relations touching the start entity, 2 for the next ring, ...
        kind: ``assertion`` (``passages`` state it) or ``path``.
        passages: Evidence ids of the current passages in scope it was extracted from.
    """

    id: str
    type: str
    source_id: str
    source: str
    target_id: str
    target: str
    description: str
    hop: int
    kind: EdgeKind
    passages: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ExploreResult(Immutable):
    """The start entity of ``explore`` (None when it is unknown or outside the scope) and the edges reached."""

    entity: EntityEvidence | None
    edges: tuple[ExploredEdge, ...]
