"""Cypher of entity resolution: merges as pointers, the merge log and its undo, and the near misses."""

from agrag.components.stores.kuzu.rows import CandidateRow, EntityRow, MergeLogRow

# Resolution: the stored entities new ones may resolve into, merges as pointers, the log, and near misses.
CANONICAL_ENTITIES = f"MATCH (e:Entity) WHERE e.merged_into = '' RETURN {EntityRow.RETURN}"
SET_MERGED_INTO = "UNWIND $rows AS r MATCH (e:Entity {id: r.member_id}) SET e.merged_into = r.resolved_id"
# Entities merged into a member that is now merged itself follow it to the final entity.
FOLLOW_MERGES = "UNWIND $rows AS r MATCH (e:Entity) WHERE e.merged_into = r.member_id SET e.merged_into = r.resolved_id"
UPSERT_MERGE_LOG = (
    "UNWIND $rows AS r MERGE (m:MergeLog {id: r.id}) SET m.member_id = r.member_id, m.resolved_id = r.resolved_id, "
    "m.decision = r.decision, m.rule = r.rule, m.score = r.score, m.reason = r.reason, m.run_id = r.run_id, "
    "m.undone = false"
)
GET_MERGE_LOG = (
    "MATCH (m:MergeLog) OPTIONAL MATCH (a:Entity {id: m.member_id}) OPTIONAL MATCH (b:Entity {id: m.resolved_id}) "
    f"RETURN {MergeLogRow.RETURN} "
    "ORDER BY m.run_id, m.id"
)
ACTIVE_MERGES_OF = (
    "MATCH (m:MergeLog) WHERE (m.member_id = $id OR m.id = $id) AND m.decision = 'merged' AND NOT m.undone "
    "RETURN m.id, m.member_id, m.resolved_id"
)
UNDO_MERGE = (
    "MATCH (m:MergeLog {id: $log_id}) SET m.undone = true WITH m "
    "MATCH (e:Entity {id: m.member_id}) SET e.merged_into = ''"
)
UPSERT_CANDIDATES = (
    "UNWIND $rows AS r MERGE (x:Candidate {id: r.id}) SET x.entity_id = r.entity_id, x.other_id = r.other_id, "
    "x.name = r.name, x.other_name = r.other_name, x.score = r.score, x.rule = r.rule"
)
GET_CANDIDATES = f"MATCH (x:Candidate) RETURN {CandidateRow.RETURN} ORDER BY x.score DESC, x.id"
DELETE_CANDIDATES_OF = "MATCH (x:Candidate) WHERE x.entity_id IN $ids OR x.other_id IN $ids DELETE x"
