from agrag.components.data_models.entity import entity_id_for, normalize_name
from agrag.components.retrievers.query_names import query_entity_ids

NAMES = ("Atlas Controller", "Atlas", "Tomas Berg", "the", "1998", "route planning", "may")
BY_NAME = {normalize_name(n): [entity_id_for(n)] for n in NAMES}


def named(normalized: str) -> list[str]:
    return BY_NAME.get(normalized, [])


def test_longest_known_names_win_and_names_inside_them_are_dropped() -> None:
    found = query_entity_ids("Where did the author of the Atlas Controller study?", named)
    assert found == [entity_id_for("Atlas Controller")]


def test_possessives_and_several_names() -> None:
    found = query_entity_ids("Was Tomas Berg's Atlas older than 1998?", named)
    assert found == [entity_id_for("Tomas Berg"), entity_id_for("Atlas")]


def test_lowercase_phrases_count_only_with_two_content_words() -> None:
    assert query_entity_ids("what is route planning", named) == [entity_id_for("route planning")]
    assert query_entity_ids("the plan may work", named) == []
    assert query_entity_ids("", named) == []


def test_homonyms_with_different_labels_are_both_seeds() -> None:
    person, org = entity_id_for("Jordan Lee", "Person"), entity_id_for("Jordan Lee", "Organization")
    by_name = {"jordan lee": [person, org]}
    assert query_entity_ids("Who is Jordan Lee?", lambda n: by_name.get(n, [])) == [person, org]


def test_the_rarest_name_comes_first_and_the_entities_of_one_name_stay_together() -> None:
    from agrag.components.retrievers.query_names import rarest_names_first

    chunks = {"midway-place": 3, "midway-name": 2, "atoll": 4, "nimitz": 9}
    groups = [["nimitz"], ["midway-place", "midway-name"], ["atoll"]]
    # Midway is 5 chunks as a name (more than Atoll's 4) though each of its entities is rarer than Atoll.
    assert rarest_names_first(groups, chunks.__getitem__) == ["atoll", "midway-name", "midway-place", "nimitz"]
    assert rarest_names_first([], chunks.__getitem__) == []
