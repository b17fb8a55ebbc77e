"""Cypher fragments the statements of several roles share: resolved ids, document scopes, relation ends."""

# An entity's resolved id: the entity it was merged into, else itself.
CANONICAL = "CASE WHEN e.merged_into <> '' THEN e.merged_into ELSE e.id END"


# Reads within a document scope, applied in the query: `$any_doc` true reads every document, else only those whose id
# is in `$docs` (both always bound; the cast types an empty list).
def in_scope(document_id: str) -> str:
    """Whether the document ``document_id`` (a Cypher expression) is in the scope ``$any_doc``/``$docs``."""
    return f"($any_doc OR {document_id} IN CAST($docs AS STRING[]))"


# The resolved ids of the ends `a` and `b` of a relation `x`, and whether each is in the frontier `$ids`.
A = "CASE WHEN a.merged_into <> '' THEN a.merged_into ELSE a.id END"
B = "CASE WHEN b.merged_into <> '' THEN b.merged_into ELSE b.id END"
A_IN_FRONTIER = "(a.id IN $ids OR a.merged_into IN $ids)"
B_IN_FRONTIER = "(b.id IN $ids OR b.merged_into IN $ids)"
# The resolved id of the entity `s` a statement starts from.
S = "CASE WHEN s.merged_into <> '' THEN s.merged_into ELSE s.id END"


# Evidence reads within a document scope. A resolved entity is visible in a scope when a current chunk of an
# in-scope document mentions it or is about it, or about or mentioning an entity merged into it. Two subqueries
# joined on equality, not one with `vm.id = X OR vm.merged_into = X`: Kùzu hashes an equality join but compares every
# pair of rows for an OR (or for an equality on a CASE), which takes minutes on a large graph.
def visible(entity_id: str) -> str:
    """Whether the resolved entity ``entity_id`` (a Cypher expression) is visible in the scope ``$docs``."""
    chunks = f"MATCH (vc:Chunk)-[:MENTIONS|:ABOUT]->(vm:Entity) WHERE vc.current AND {in_scope('vc.document_id')}"
    return f"(EXISTS {{ {chunks} AND vm.id = {entity_id} }} OR EXISTS {{ {chunks} AND vm.merged_into = {entity_id} }})"
