"""The enums of closed sets: ``from_str`` names the valid values, and each value is the string it replaced."""

import json

import pytest

from agrag.components.choice_errors import UnknownChoiceError, UnknownStoredValueError
from agrag.components.data_models.chunk import TEXT_CHUNK, ChunkKind
from agrag.components.data_models.community import ReportMethod
from agrag.components.data_models.resolution import KEPT_APART, MERGED, MergeOutcome, ResolutionRule
from agrag.components.data_models.retrieval_method import Reranker, RetrievalMethod, SearchStep
from agrag.components.data_models.traversal_direction import TraversalDirection
from agrag.components.errors import RetrievalError, StoreError, UnknownRecipeMethodError
from agrag.pipelines import config_models, recipe_config


def test_from_str_parses_and_lists_the_valid_values() -> None:
    assert ReportMethod.from_str("llm") is ReportMethod.LLM
    with pytest.raises(UnknownChoiceError, match=r"Unknown community report method 'abstractive'\. Use one of: llm, "):
        ReportMethod.from_str("abstractive")
    with pytest.raises(ValueError, match="Use one of: merged, kept_apart"):  # a ValueError too, for pydantic
        MergeOutcome.from_str("split")
    with pytest.raises(UnknownChoiceError, match=r"resolution rule 'guess'.*acronym"):
        ResolutionRule.from_str("guess")
    with pytest.raises(UnknownChoiceError, match=r"reranker 'bm25'\. Use one of: cross_encoder, node_distance"):
        Reranker.from_str("bm25")


def test_an_unknown_stored_value_is_a_store_error_naming_the_store() -> None:
    assert ChunkKind.from_stored("table", "graph store") is ChunkKind.TABLE
    with pytest.raises(StoreError, match=r"The vector store holds an unknown chunk kind 'figure' \(this agrag knows "):
        ChunkKind.from_stored("figure", "vector store")
    with pytest.raises(UnknownStoredValueError, match=r"resolution rule 'phonetic'.*homonym"):
        ResolutionRule.from_stored("phonetic", "graph store")


def test_an_unknown_traversal_direction_is_a_retrieval_error() -> None:
    assert TraversalDirection.from_str("out") is TraversalDirection.OUT
    with pytest.raises(RetrievalError, match=r"Unknown traversal direction 'sideways'\. Use one of: both, out, in\."):
        TraversalDirection.from_str("sideways")


def test_an_unknown_method_keeps_its_recipe_error() -> None:
    with pytest.raises(UnknownRecipeMethodError, match="'vector' in recipe 'mine'"):
        RetrievalMethod.from_str("vector", "mine")


def test_values_serialize_as_the_strings_they_replaced() -> None:
    assert (MERGED, KEPT_APART, TEXT_CHUNK) == ("merged", "kept_apart", "text")
    assert json.dumps([ReportMethod.EXTRACTIVE, SearchStep.COMMUNITY_EXPAND, RetrievalMethod.PPR]) == (
        '["extractive", "community_expand", "ppr"]'
    )
    assert f"{TraversalDirection.BOTH}" == "both"


def test_pipelines_still_export_the_recipe_enums() -> None:
    assert config_models.RetrievalMethod is recipe_config.RetrievalMethod is RetrievalMethod
    assert config_models.Reranker is recipe_config.Reranker is Reranker
