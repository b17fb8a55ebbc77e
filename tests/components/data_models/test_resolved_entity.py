"""``ResolvedEntity``: an ``Entity`` that names what it absorbed, and is fused and ranked as that entity."""

from dataclasses import replace

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.resolution import ResolutionRule
from agrag.components.data_models.resolved_entity import MergedEntity, ResolvedEntity, with_merged
from agrag.components.data_models.search_result import SearchResult, item_key
from agrag.components.joiners.rrf_joiner import reciprocal_rank_fusion

SMITH = Entity("e-john", "John Smith", "Person", "An engineer.")
J_SMITH = MergedEntity("e-j", "J. Smith", "Person", ResolutionRule.FUZZY, 88.0, "'J. Smith' is 'John Smith' shortened")
SMITH_TYPO = MergedEntity("e-typo", "John Smith", "Name", ResolutionRule.LABEL, 1.0, "an untyped name folded")
RESOLVED = ResolvedEntity.of(SMITH, [SMITH_TYPO, J_SMITH])


def test_a_resolved_entity_is_the_entity_with_what_was_merged_into_it() -> None:
    assert isinstance(RESOLVED, Entity)
    assert (RESOLVED.id, RESOLVED.name, RESOLVED.label, RESOLVED.description) == (
        SMITH.id,
        SMITH.name,
        SMITH.label,
        SMITH.description,
    )
    assert RESOLVED.merged_from == (J_SMITH, SMITH_TYPO)  # by name, then id
    assert RESOLVED.aliases == ("J. Smith",)  # its own name is no alias
    assert RESOLVED.merged_ids == ("e-j", "e-typo")
    assert item_key(RESOLVED) == item_key(SMITH) == ("Entity", "e-john")
    assert with_merged(SMITH, []) is SMITH
    assert with_merged(SMITH, [J_SMITH]) == ResolvedEntity.of(SMITH, [J_SMITH])
    assert replace(RESOLVED, description="").merged_from == RESOLVED.merged_from  # what a scoped caller gets


def test_fusion_ranks_a_resolved_entity_as_its_entity_and_keeps_what_it_absorbed() -> None:
    chunk = Chunk("d1.v1.c1", "d1", "v1", "John Smith wrote it.", ("Notes",), 1, 0, 20)
    other = Entity("e-ada", "Ada Lovelace", "Person")

    def lists(entity: Entity) -> list[list[SearchResult]]:
        return [
            [SearchResult(other, 0.9, "entity"), SearchResult(entity, 0.8, "entity")],
            [SearchResult(chunk, 0.7, "chunk")],
            [SearchResult(SMITH, 1.0, "bfs"), SearchResult(other, 0.5, "bfs")],  # a step that knows no merges
        ]

    plain = reciprocal_rank_fusion(lists(SMITH), k=60)
    resolved = reciprocal_rank_fusion(lists(RESOLVED), k=60)
    assert [(r.key, r.score, r.method, r.methods) for r in resolved] == [
        (r.key, r.score, r.method, r.methods) for r in plain
    ]
    (smith,) = [r for r in resolved if r.key == ("Entity", "e-john")]
    assert smith.item == RESOLVED and smith.methods == ("bfs", "entity")
    assert len(resolved) == 3
