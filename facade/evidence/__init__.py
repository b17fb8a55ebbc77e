"""``agrag.evidence``: the evidence functions and what they take and return.

The functions (discover, fetch, navigate, find_entities, explore, check_citations, render_citations) run on the
data dir of ``AGRAG_DATA_DIR``, opened on the first call (``close()`` or the end of the process closes it), within
the documents a call names (``documents=``; calls with the same documents share one session, so citations are
checked against what was fetched):

    ```python
    from agrag.evidence import check_citations, discover, fetch

    found = discover("Who wrote the Orion Planner?")
    texts = fetch([hit.id for hit in found.hits[:3]])
    check = check_citations(f"Maria Chen wrote it [{found.hits[0].id}].")
    ```

They are the methods of ``EvidenceSession``, which fixes the document scope once for every call; a program that
holds its own stores makes its sessions directly and may pass one as ``session=``:

    ```python
    session = EvidenceSession(store, embedder, EvidenceScope(("d3f…",)))
    found = session.discover("Who wrote the Orion Planner?")
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
    FactEvidence,
    FetchedEvidence,
    FetchResult,
)
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.errors import EvidenceError
from agrag.pipelines.evidence_session import EvidenceSession
from agrag.service.evidence_functions import (
    check_citations,
    close,
    discover,
    explore,
    fetch,
    find_entities,
    navigate,
    opened,
    render_citations,
    session,
)

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
    "FactEvidence",
    "FetchResult",
    "FetchedEvidence",
    "InvalidCitation",
    "InvalidReason",
    "RenderedAnswer",
    "Source",
    "UnsupportedClaim",
    "check_citations",
    "close",
    "discover",
    "explore",
    "fetch",
    "find_entities",
    "navigate",
    "opened",
    "render_citations",
    "session",
]
