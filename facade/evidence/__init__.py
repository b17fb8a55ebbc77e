"""``agrag.evidence``: the evidence functions and what they take and return.

The functions (discover, fetch, navigate, find_entities, explore, check_citations, render_citations) are the
methods of ``EvidenceSession``, which fixes the document scope once for every call:

    ```python
    session = EvidenceSession(store, embedder, EvidenceScope(("d3f…",)))
    found = session.discover("Who wrote the Orion Planner?")
    texts = session.fetch([hit.id for hit in found.hits[:3]])
    ```
"""

from agrag.components.data_models.citations import (
    CitationCheck,
    InvalidCitation,
    InvalidReason,
    RenderedAnswer,
    Source,
    UnsupportedClaim,
)
from agrag.components.data_models.evidence import (
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
from agrag.components.errors import EvidenceError
from agrag.pipelines.evidence_session import EvidenceSession

__all__ = [
    "CitationCheck",
    "Direction",
    "DiscoverMode",
    "DiscoverResult",
    "EdgeKind",
    "EntityEvidence",
    "EvidenceError",
    "EvidenceHit",
    "EvidenceId",
    "EvidenceLocation",
    "EvidenceScope",
    "EvidenceSession",
    "ExploreResult",
    "ExploredEdge",
    "FetchResult",
    "FetchedEvidence",
    "InvalidCitation",
    "InvalidReason",
    "RenderedAnswer",
    "Source",
    "UnsupportedClaim",
]
