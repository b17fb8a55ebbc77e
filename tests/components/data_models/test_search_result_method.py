"""``SearchResult.method`` names what found a result with an enum, which prints and serializes as its plain value."""

import json

import pytest

from agrag.components.choice_errors import UnknownChoiceError
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.query_leg import QueryLeg
from agrag.components.data_models.retrieval_method import RetrievalMethod, SearchStep
from agrag.components.data_models.search_result import SearchResult, search_method_from_str
from agrag.components.joiners.rrf_joiner import reciprocal_rank_fusion
from agrag.service.tools.search_tool import hit_of, result_of

CHUNK = Chunk("d1.v1.0", "d1", "v1", "Ada wrote it.", ("Doc",), 0, 0, 13)


def test_every_method_step_and_leg_parses_back_from_its_value() -> None:
    for member in (*RetrievalMethod, *SearchStep, *QueryLeg):
        assert search_method_from_str(member.value) is member
    with pytest.raises(UnknownChoiceError, match=r"search method 'vector'\. Use one of: entity, .*traverse, dense"):
        search_method_from_str("vector")


def test_fusion_keeps_the_enums_and_the_output_keeps_the_values() -> None:
    dense = [SearchResult(CHUNK, 0.9, QueryLeg.DENSE, (QueryLeg.DENSE,))]
    chunk = [SearchResult(CHUNK, 0.8, RetrievalMethod.CHUNK, (RetrievalMethod.CHUNK,))]
    fused = reciprocal_rank_fusion([chunk, dense], k=60)[0]
    # equal ranks fall to the value's order, as they did when methods were strings
    assert (fused.method, fused.methods) == (RetrievalMethod.CHUNK, (RetrievalMethod.CHUNK, QueryLeg.DENSE))
    assert f"{fused.method:<7}|" == "chunk  |"
    hit = hit_of(fused)
    assert json.loads(hit.model_dump_json())["methods"] == ["chunk", "dense"]
    back = result_of(hit)
    assert back == fused
    assert type(back.method) is RetrievalMethod
    assert type(back.methods[1]) is QueryLeg
