"""``QueryLeg``: the two search legs of a vector store."""

from __future__ import annotations

from agrag.components.data_models.closed_set import ClosedSet


class QueryLeg(ClosedSet, what="query leg"):
    """Dense vectors (``dense``) and keyword (BM25) sparse vectors (``keyword``); evidence discover names them."""

    DENSE = "dense"
    KEYWORD = "keyword"
