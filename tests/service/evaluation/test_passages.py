from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community, CommunityReport
from agrag.components.data_models.cypher_row import CypherRow
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.search_result import SearchItem, SearchResult
from agrag.service.evaluation.passages import community_passages, entities_to_support, ranked_passages

# Document id → corpus index; a chunk id is "<document id>.<version>.<order>".
INDEX = {"dA": 0, "dB": 1, "dC": 2, "dD": 3, "dE": 4}


def chunk(document: str, order: int = 0) -> Chunk:
    return Chunk(f"{document}.v1.{order}", document, "v1", "text", (), order, 0, 4)


def entity(entity_id: str) -> Entity:
    return Entity(entity_id, entity_id.upper(), "Name")


def community(*members: str) -> Community:
    return Community("c" + "".join(members), 0, members, report=CommunityReport("title", "summary", 5.0))


def results(*items: SearchItem) -> list[SearchResult]:
    return [SearchResult(item, 1.0 / (1 + rank), "test") for rank, item in enumerate(items)]


def test_only_chunks_count_as_strict_hits_and_each_passage_counts_once() -> None:
    found = results(chunk("dC"), entity("e1"), chunk("dC", 1), chunk("dA"), chunk("dZ"))
    strict, expanded = ranked_passages(found, INDEX, {"e1": ["dB.v1.0", "dC.v1.0"]})
    assert strict == [2, 0]  # the second chunk of dC and the unknown document dZ add nothing
    assert expanded == [2, 1, 0]


def test_relations_stand_for_the_passages_that_support_them() -> None:
    relation = Relation("r1", "e1", "e2", "RELATED_TO", ("dD.v1.0", "dB.v1.3", "dZ.v1.0"))
    strict, expanded = ranked_passages(results(relation, chunk("dA")), INDEX, {})
    assert strict == [0]
    assert expanded == [3, 1, 0]


def test_a_community_stands_for_the_passages_covering_most_of_its_members() -> None:
    support = {
        "e1": ["dA.v1.0", "dC.v1.0"],  # about dA, mentioned in dC
        "e2": ["dB.v1.0", "dC.v1.0"],
        "e3": ["dC.v1.2", "dD.v1.0", "dZ.v1.0"],
    }
    # dC covers all three members; dA and dB one each, on top of their member's list; dD one, second in its list.
    assert community_passages(community("e1", "e2", "e3"), support, INDEX) == [2, 0, 1, 3]
    assert community_passages(community("e9"), support, INDEX) == []
    strict, expanded = ranked_passages(results(community("e3"), community("e1", "e2", "e3")), INDEX, support)
    assert strict == []
    assert expanded == [2, 3, 0, 1]


def test_text2cypher_rows_map_to_no_passage() -> None:
    row = CypherRow.of("MATCH (d:Document) RETURN count(d) AS n", ("n",), (12,))
    assert ranked_passages(results(row, chunk("dE")), INDEX, {}) == ([4], [4])


def test_the_support_lookup_covers_entity_hits_and_community_members_once() -> None:
    found = results(entity("e2"), community("e1", "e2"), chunk("dA"), community("e3"), entity("e1"))
    assert entities_to_support(found) == ["e2", "e1", "e3"]
