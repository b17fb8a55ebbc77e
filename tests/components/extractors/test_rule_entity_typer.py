"""``RuleEntityTyper``: each rule, batch voting, ambiguity, and the spans the lexical extractor hands it."""

import re

from agrag.components.data_models.entity_type import EntityType
from agrag.components.data_models.name_occurrence import NameOccurrence, SpanKind
from agrag.components.extractors.rule_entity_typer import RuleEntityTyper

PERSON, ORGANIZATION, PLACE = EntityType.PERSON, EntityType.ORGANIZATION, EntityType.PLACE
PRODUCT, EVENT, DATE = EntityType.PRODUCT, EntityType.EVENT, EntityType.DATE


def occurrence(sentence: str, name: str, kind: SpanKind = SpanKind.NAME) -> NameOccurrence:
    """``name`` where it stands in ``sentence``; a title written before it (``Dr. ``) is left out, as the extractor
    does."""
    match = re.search(rf"(?:(Dr|Prof|Mr|Ms|RV)\.? )?{re.escape(name)}", sentence)
    assert match is not None, f"{name!r} is not in {sentence!r}"
    start = match.end() - len(name)
    return NameOccurrence(name, sentence, start, match.end(), kind, match.group(1) or "")


def typed(*pairs: tuple[str, str]) -> dict[str, EntityType]:
    """The types of a batch given as (sentence, name) pairs."""
    return RuleEntityTyper().run([occurrence(sentence, name) for sentence, name in pairs])


def type_of(sentence: str, name: str, kind: SpanKind = SpanKind.NAME) -> EntityType | None:
    return RuleEntityTyper().run([occurrence(sentence, name, kind)]).get(name)


def test_a_title_makes_a_person_and_a_vessel_prefix_a_product() -> None:
    assert type_of("Chair: Dr. Okafor, who joined in spring.", "Okafor") is PERSON
    assert type_of("We sailed on RV Shearwater yesterday.", "Shearwater") is PRODUCT


def test_a_given_name_first_makes_a_person() -> None:
    assert type_of("The plan came from Maria Chen yesterday.", "Maria Chen") is PERSON
    assert type_of("We thanked Lukas for the slides.", "Lukas") is PERSON
    assert type_of("The plan came from Zorblat Quenk yesterday.", "Zorblat Quenk") is None


def test_words_around_a_name_make_a_person() -> None:
    assert type_of("Skipper: Zorblat Quenk.", "Zorblat Quenk") is PERSON
    assert type_of("Quenk Zorblat (lab manager) signs off users.", "Quenk Zorblat") is PERSON
    assert type_of("The vessel's new skipper is Quenk Zorblat.", "Quenk Zorblat") is PERSON
    assert type_of("Please ask Zorblat before you start.", "Zorblat") is PERSON
    assert type_of("Zorblat Quenk retires in June.", "Zorblat Quenk") is PERSON


def test_organisation_head_words_suffixes_and_context() -> None:
    for name in ("Sonacast Ltd", "Halyard Marine Instruments", "Frostline Scientific", "Kelpworks Engineering",
                 "Coastal Futures Fund", "National Marine Research Council", "Fearnan Institute", "Eskholm Trust",
                 "University of Lisdara", "Macleod & Rae", "Gannet Bay Marine Station"):  # fmt: skip
        assert type_of(f"The report thanks {name} for it.", name) is ORGANIZATION, name
    assert type_of("Supplier: Zorblat Quenk, Unit 7.", "Zorblat Quenk") is ORGANIZATION
    assert type_of("Zorblat Quenk, a consultancy doing noise work, said so.", "Zorblat Quenk") is ORGANIZATION
    assert type_of("Zorblat Quenk builds oceanographic profilers.", "Zorblat Quenk") is ORGANIZATION


def test_place_head_words_prepositions_and_nouns() -> None:
    for name in ("Carrick Island", "Gannet Bay", "Corrie Point", "Harbour Road", "Bay of Brevannes", "Mount Kenya"):
        assert type_of(f"We went to {name} on foot.", name) is PLACE, name
    assert type_of("The hut is 6 km west of Zorblat.", "Zorblat") is PLACE
    assert type_of("The boat is near Zorblat today.", "Zorblat") is PLACE
    assert type_of("Boats leave from Zorblat harbour.", "Zorblat") is PLACE
    assert type_of("Zorblat Quenk is an uninhabited island.", "Zorblat Quenk") is PLACE
    assert type_of("The North Atlantic is cold.", "North Atlantic") is PLACE


def test_a_weak_preposition_alone_types_only_a_single_word() -> None:
    assert typed(("We live in Zorblat.", "Zorblat"), ("Buses go to Zorblat.", "Zorblat")) == {"Zorblat": PLACE}
    assert type_of("Alerts arrive in Beacon Telemetry daily.", "Beacon Telemetry") is None


def test_codes_are_products_and_dates_are_dates() -> None:
    assert type_of("The CT-60 goes back every winter.", "CT-60", SpanKind.CODE) is PRODUCT
    assert type_of("We use the Halyard CT-60 profiler.", "Halyard CT-60") is PRODUCT
    assert type_of("Instrument: Zorblat Quenk.", "Zorblat Quenk") is PRODUCT
    assert type_of("It retires on 31 October 2024.", "31 October 2024", SpanKind.DATE) is DATE
    assert type_of("Dr. April 2025 came.", "April 2025", SpanKind.DATE) is DATE  # a date whatever surrounds it


def test_event_head_words_and_storms() -> None:
    assert (
        type_of("Talks at the North Atlantic Plankton Symposium went well.", "North Atlantic Plankton Symposium")
        is EVENT
    )
    assert type_of("The mooring was lost during Storm Imelda.", "Storm Imelda") is EVENT
    assert type_of("Course: Marine Field Skills (third year).", "Marine Field Skills") is EVENT


def test_a_name_gets_one_type_by_the_votes_of_the_whole_batch() -> None:
    batch = (
        ("Thanks to Quenk Zorblat for the photos.", "Quenk Zorblat"),
        ("We met at Quenk Zorblat again.", "Quenk Zorblat"),
        ("Chair: Dr. Quenk Zorblat.", "Quenk Zorblat"),
    )
    assert typed(*batch) == {"Quenk Zorblat": PERSON}
    spelled = typed(
        ("Dr. Élodie Marchetti spoke.", "Élodie Marchetti"), ("Then Elodie Marchetti left.", "Elodie Marchetti")
    )
    assert spelled == {"Élodie Marchetti": PERSON, "Elodie Marchetti": PERSON}, "spellings that normalize alike agree"


def test_a_tie_or_too_little_evidence_leaves_a_name_untyped() -> None:
    tie = (("Skipper: Zorblat.", "Zorblat"), ("Supplier: Zorblat.", "Zorblat"))
    assert typed(*tie) == {}
    assert typed(("Zorblat was fine.", "Zorblat")) == {}


def test_first_names_and_surnames_of_a_person_are_that_person() -> None:
    batch = (
        ("Chair: Dr. Moira Cathcart.", "Moira Cathcart"),
        ("Zorblat Quenk retires today.", "Zorblat Quenk"),
        ("Cathcart opened the meeting.", "Cathcart"),
        ("Quenk was not there.", "Quenk"),
        ("Zorblat smiled.", "Zorblat"),
    )
    assert typed(*batch) == {
        "Moira Cathcart": PERSON,
        "Zorblat Quenk": PERSON,
        "Cathcart": PERSON,
        "Quenk": PERSON,
        "Zorblat": PERSON,
    }


def test_a_full_name_is_a_person_when_its_surname_is_one_on_its_own() -> None:
    batch = (("The survey is led by Quenk Okafor.", "Quenk Okafor"), ("It was signed by Dr Okafor.", "Okafor"))
    assert typed(*batch) == {"Quenk Okafor": PERSON, "Okafor": PERSON}
    holding = (("Okafor Holdings bought it.", "Okafor Holdings"), ("It was signed by Dr Okafor.", "Okafor"))
    assert typed(*holding) == {"Okafor Holdings": ORGANIZATION, "Okafor": PERSON}


def test_an_acronym_takes_the_type_of_the_name_it_abbreviates() -> None:
    batch = [
        occurrence("Partner: Institut Oceanique de Brevannes (IOB), an institute.", "Institut Oceanique de Brevannes"),
        occurrence("We visited IOB.", "IOB", SpanKind.ACRONYM),
        occurrence("Data go to the Northwold Ocean Data Archive.", "Northwold Ocean Data Archive"),
        occurrence("NODA is run by the library.", "NODA", SpanKind.ACRONYM),
        occurrence("It uses SLAM.", "SLAM", SpanKind.ACRONYM),
    ]
    assert RuleEntityTyper().run(batch) == {
        "Institut Oceanique de Brevannes": ORGANIZATION,
        "IOB": ORGANIZATION,
        "Northwold Ocean Data Archive": ORGANIZATION,
        "NODA": ORGANIZATION,
    }


def test_demonyms_and_languages_stay_untyped_whatever_surrounds_them() -> None:
    assert type_of("Students came from the Chilean coast.", "Chilean") is None
    assert type_of("She is learning Gaelic in Skerrin.", "Gaelic") is None
    assert type_of("Boats cross the Atlantic often.", "Atlantic") is PLACE


def test_a_list_or_a_modifier_before_a_name_says_nothing_of_its_type() -> None:
    assert type_of("Site,City,Robots,Planner version", "City") is None
    assert type_of("Bring your university ID card.", "ID", SpanKind.ACRONYM) is None


def test_only_the_first_occurrences_of_a_name_vote() -> None:
    typer = RuleEntityTyper(max_votes=2)
    batch = [occurrence("Thanks to Quenk Zorblat.", "Quenk Zorblat")] * 2 + [
        occurrence("Chair: Dr. Quenk Zorblat.", "Quenk Zorblat")
    ]
    assert typer.run(batch) == {}
    assert RuleEntityTyper().run(batch) == {"Quenk Zorblat": PERSON}
