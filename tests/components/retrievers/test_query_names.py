from agrag.components.data_models.entity import entity_id_for
from agrag.components.retrievers.query_names import query_entity_ids

KNOWN = {entity_id_for(n) for n in ("Atlas Controller", "Atlas", "Tomas Berg", "the", "1998", "route planning", "may")}


def test_longest_known_names_win_and_names_inside_them_are_dropped() -> None:
    found = query_entity_ids("Where did the author of the Atlas Controller study?", KNOWN.__contains__)
    assert found == [entity_id_for("Atlas Controller")]


def test_possessives_and_several_names() -> None:
    found = query_entity_ids("Was Tomas Berg's Atlas older than 1998?", KNOWN.__contains__)
    assert found == [entity_id_for("Tomas Berg"), entity_id_for("Atlas")]


def test_lowercase_phrases_count_only_with_two_content_words() -> None:
    assert query_entity_ids("what is route planning", KNOWN.__contains__) == [entity_id_for("route planning")]
    assert query_entity_ids("the plan may work", KNOWN.__contains__) == []
    assert query_entity_ids("", KNOWN.__contains__) == []
