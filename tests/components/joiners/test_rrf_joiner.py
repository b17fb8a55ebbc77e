import pytest

from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.search_result import SearchResult
from agrag.components.joiners.rrf_joiner import RRFJoiner, reciprocal_rank_fusion


def entity(name: str) -> Entity:
    return Entity(id=f"e-{name}", name=name, label="Name")


def chunk(cid: str) -> Chunk:
    return Chunk(id=cid, document_id="d", document_version="v", text=cid, heading_path=("T",), order=0, start=0, end=1)


def ranked(method: str, *items: Entity | Chunk) -> list[SearchResult]:
    return [SearchResult(item, 1.0 / (i + 1), method, (method,)) for i, item in enumerate(items)]


def test_scores_are_sums_of_reciprocal_ranks_with_k() -> None:
    a, b = entity("A"), entity("B")
    fused = reciprocal_rank_fusion([ranked("entity", a, b), ranked("chunk", chunk("c1"), a)], k=10)
    scores = {r.key: r.score for r in fused}
    assert scores[("Entity", "e-A")] == pytest.approx(1 / 11 + 1 / 12)
    assert scores[("Entity", "e-B")] == pytest.approx(1 / 12)
    assert scores[("Chunk", "c1")] == pytest.approx(1 / 11)


def test_item_found_by_two_methods_outranks_items_found_by_one() -> None:
    a, b, c = entity("A"), entity("B"), chunk("c1")
    fused = reciprocal_rank_fusion([ranked("entity", b, a), ranked("chunk", c, a)])
    assert fused[0].item == a
    assert set(fused[0].methods) == {"entity", "chunk"}


def test_duplicate_inside_one_list_votes_once_and_does_not_push_others_down() -> None:
    a, b = entity("A"), entity("B")
    with_duplicate = reciprocal_rank_fusion([ranked("entity", a, a, a, b)], k=60)
    without = reciprocal_rank_fusion([ranked("entity", a, b)], k=60)
    assert [(r.key, r.score) for r in with_duplicate] == [(r.key, r.score) for r in without]


def test_two_lists_of_one_method_give_one_vote_at_the_best_rank() -> None:
    a, b = entity("A"), entity("B")
    fused = reciprocal_rank_fusion([ranked("entity", a, b), ranked("entity", b, a)], k=60)
    assert {r.key: r.score for r in fused} == {
        ("Entity", "e-A"): pytest.approx(1 / 61),
        ("Entity", "e-B"): pytest.approx(1 / 61),
    }


def test_output_is_deduplicated_and_sorted() -> None:
    a, b, c = entity("A"), entity("B"), chunk("c1")
    fused = reciprocal_rank_fusion([ranked("entity", a, b), ranked("chunk", c, b, a)])
    keys = [r.key for r in fused]
    assert len(keys) == len(set(keys)) == 3
    assert [r.score for r in fused] == sorted((r.score for r in fused), reverse=True)


def test_ties_are_broken_deterministically() -> None:
    a, b = entity("A"), chunk("c1")
    first = reciprocal_rank_fusion([ranked("entity", a), ranked("chunk", b)])
    second = reciprocal_rank_fusion([ranked("chunk", b), ranked("entity", a)])
    assert [r.key for r in first] == [r.key for r in second]


def test_best_method_is_reported_first() -> None:
    a = entity("A")
    fused = reciprocal_rank_fusion([ranked("entity", entity("X"), entity("Y"), a), ranked("chunk", a)])
    top = next(r for r in fused if r.item == a)
    assert top.method == "chunk"
    assert top.methods == ("chunk", "entity")


def test_single_method_still_deduplicates() -> None:
    a = entity("A")
    fused = RRFJoiner(k=60).run(results=[ranked("entity", a, a)])["results"]
    assert len(fused) == 1


def test_empty_input_gives_empty_output() -> None:
    assert RRFJoiner().run(results=[[], []])["results"] == []


@pytest.mark.parametrize("k", [0, -5])
def test_k_must_be_positive(k: int) -> None:
    with pytest.raises(ComponentConfigError, match="at least 1"):
        RRFJoiner(k=k)
