"""``QueryAnalysis``: its closed sets parse by name, and its summary is one readable line."""

import pytest

from agrag.components.choice_errors import UnknownChoiceError
from agrag.components.data_models.query_analysis import AnswerType, QueryAnalysis, QueryAnalyzerKind


def test_the_answer_types_are_the_ontology_types_plus_quantity_and_unknown() -> None:
    assert [t.value for t in AnswerType] == [
        "Person", "Organization", "Place", "Product", "Event", "Date", "Quantity", "Unknown",
    ]  # fmt: skip
    assert AnswerType.from_str("Place") is AnswerType.PLACE
    with pytest.raises(UnknownChoiceError, match=r"Unknown answer type 'Location'\. Use one of: Person, "):
        AnswerType.from_str("Location")
    with pytest.raises(UnknownChoiceError, match=r"query analyzer 'spacy'\. Use one of: auto, rules, llm"):
        QueryAnalyzerKind.from_str("spacy")


def test_the_summary_names_the_type_the_names_the_relations_and_a_fallback() -> None:
    analysis = QueryAnalysis(AnswerType.PERSON, ("BLOOMCAST",), ("uses", "counts"), QueryAnalyzerKind.RULES)
    assert analysis.summary() == "answer Person; names: BLOOMCAST; relations: uses, counts (rules)"
    fallen = QueryAnalysis(AnswerType.UNKNOWN, (), (), QueryAnalyzerKind.RULES, error="LLMError: timed out")
    assert (
        fallen.summary() == "answer Unknown; names: none; relations: none (rules; the LLM failed: LLMError: timed out)"
    )
