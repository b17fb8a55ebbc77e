from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import entity_id_for
from agrag.components.data_models.extraction import Extraction
from agrag.components.data_models.relation import Relation, relation_id_for
from agrag.components.extractors.lexical_entity_extractor import LexicalEntityExtractor, title_names


def chunk(text: str, cid: str = "c1") -> Chunk:
    return Chunk(cid, "d", "v", text, ("T",), 0, 0, len(text))


def names(text: str) -> set[str]:
    extraction = LexicalEntityExtractor().run(chunks=[chunk(text)])["extraction"]
    return {e.name for e in extraction.entities}


def test_finds_multi_word_proper_nouns_and_acronyms() -> None:
    found = names("Maria Chen wrote the Orion Planner. It reads SLAM maps over the CAN bus.")
    assert {"Maria Chen", "Orion Planner", "SLAM", "CAN"} <= found


def test_ignores_sentence_openers_and_leading_articles() -> None:
    found = names("The Orion Planner is fast. Routes are short. However, it waits.")
    assert found == {"Orion Planner"}


def test_single_capitalized_word_at_sentence_start_counts_when_seen_inside_a_sentence() -> None:
    assert "Lyon" in names("Lyon had an outage. The site in Lyon recovered.")
    assert "Replanning" not in names("Replanning is expensive.")


def test_table_rows_are_read_cell_by_cell() -> None:
    found = names("| Component | Owner |\n| --- | --- |\n| Orion Planner | Maria Chen |")
    assert found == {"Orion Planner", "Maria Chen"}


def test_co_occurring_entities_give_a_relation_with_its_supporting_chunk() -> None:
    extraction = LexicalEntityExtractor().run(chunks=[chunk("Maria Chen and the Orion Planner are old.", "c7")])[
        "extraction"
    ]
    (relation,) = extraction.relations
    maria, orion = entity_id_for("Maria Chen", "Person"), entity_id_for("Orion Planner")
    assert (relation.source_id, relation.target_id) == tuple(sorted((maria, orion)))  # undirected: one edge a pair
    assert relation.chunk_ids == ("c7",)
    assert relation.type == "RELATED_TO"
    assert relation.id == relation_id_for(relation.source_id, relation.target_id, "RELATED_TO")
    assert "Orion Planner are old" in relation.description


def test_a_stated_predicate_makes_a_directed_fact_instead_of_a_co_occurrence() -> None:
    extraction = LexicalEntityExtractor().run(chunks=[chunk("Maria Chen wrote the Orion Planner.", "c7")])["extraction"]
    (relation,) = extraction.relations
    maria, orion = entity_id_for("Maria Chen", "Person"), entity_id_for("Orion Planner")
    assert (relation.source_id, relation.type, relation.target_id) == (maria, "wrote", orion)
    assert relation.id == relation_id_for(maria, orion, "wrote")
    assert relation.chunk_ids == ("c7",)
    assert relation.description == "Maria Chen wrote the Orion Planner."


def test_a_passive_fact_points_from_its_agent() -> None:
    text = "The Orion Planner was written by Maria Chen."
    (relation,) = LexicalEntityExtractor().run(chunks=[chunk(text)])["extraction"].relations
    assert (relation.source_id, relation.type, relation.target_id) == (
        entity_id_for("Maria Chen", "Person"),
        "wrote",
        entity_id_for("Orion Planner"),
    )


def test_one_fact_read_in_two_tenses_and_two_chunks_has_one_id() -> None:
    chunks = [
        chunk("Victor Hale owns Osprey Ceramics.", "c1"),
        chunk("Osprey Ceramics was owned by Victor Hale.", "c2"),
    ]
    extraction = LexicalEntityExtractor().run(chunks=chunks)["extraction"]
    victor, osprey = ids(extraction, "Victor Hale", "Osprey Ceramics")
    assert {(r.id, r.type, r.chunk_ids) for r in extraction.relations} == {
        (relation_id_for(victor, osprey, "owns"), "owns", ("c1",)),
        (relation_id_for(victor, osprey, "owns"), "owns", ("c2",)),
    }


def ids(extraction: Extraction, *names: str) -> tuple[str, ...]:
    """The ids the extraction gave these names (their typed labels are part of them)."""
    by_name = {e.name: e.id for e in extraction.entities}
    return tuple(by_name[n] for n in names)


def typed(relations: tuple[Relation, ...]) -> set[tuple[str, str, str]]:
    return {(r.source_id, r.type, r.target_id) for r in relations}


def test_a_sentence_mixes_facts_and_co_occurrences_pair_by_pair() -> None:
    text = "Victor Hale owns Osprey Ceramics, and Anna Berg attended."
    extraction = LexicalEntityExtractor().run(chunks=[chunk(text)])["extraction"]
    relations = extraction.relations
    victor, osprey, anna = ids(extraction, "Victor Hale", "Osprey Ceramics", "Anna Berg")
    assert typed(relations) == {
        (victor, "owns", osprey),
        (min(victor, anna), "RELATED_TO", max(victor, anna)),
        (min(osprey, anna), "RELATED_TO", max(osprey, anna)),
    }


def test_a_list_gives_co_occurrences_only() -> None:
    text = "Present: Lukas Brenner, Anna Lisowska and Kirsty Munro attended."
    relations = LexicalEntityExtractor().run(chunks=[chunk(text)])["extraction"].relations
    assert len(relations) == 3
    assert {r.type for r in relations} == {"RELATED_TO"}


def test_a_fact_is_read_between_the_nearest_mentions_of_a_repeated_name() -> None:
    text = "Victor Hale met Anna Berg; then Victor Hale owns Osprey Ceramics."
    extraction = LexicalEntityExtractor().run(chunks=[chunk(text)])["extraction"]
    relations = extraction.relations
    victor, osprey, anna = ids(extraction, "Victor Hale", "Osprey Ceramics", "Anna Berg")
    assert {(victor, "meets", anna), (victor, "owns", osprey)} <= typed(relations)


def test_table_rows_give_no_facts() -> None:
    text = "| Owner | Component |\n| --- | --- |\n| Maria Chen owns | Orion Planner |"
    relations = LexicalEntityExtractor().run(chunks=[chunk(text)])["extraction"].relations
    assert {r.type for r in relations} == {"RELATED_TO"}


def test_mentions_count_occurrences_per_chunk() -> None:
    extraction = LexicalEntityExtractor().run(chunks=[chunk("Vega Perception is new. Vega Perception is fast.")])[
        "extraction"
    ]
    assert [(m.entity_id, m.count) for m in extraction.mentions] == [(entity_id_for("Vega Perception"), 2)]


def test_headings_are_not_extracted() -> None:
    assert names("## Design Notes\n\nNothing named here.") == set()


def test_labels_tell_acronyms_from_names() -> None:
    extraction = LexicalEntityExtractor().run(chunks=[chunk("Maria Chen maintains the ROS node.")])["extraction"]
    assert {(e.name, e.label) for e in extraction.entities} == {("Maria Chen", "Person"), ("ROS", "Acronym")}


def test_every_chunk_is_about_its_document_title_and_the_title_without_qualifier() -> None:
    titled = Chunk(
        "c9",
        "d",
        "v",
        "Lilu is a figure in Mesopotamian myth.",
        ("Lilu (mythology)",),
        0,
        0,
        38,
        None,
        "Lilu (mythology)",
    )
    extraction = LexicalEntityExtractor().run(chunks=[titled])["extraction"]
    about = {m.entity_id for m in extraction.about if m.chunk_id == "c9"}
    assert about == {entity_id_for("Lilu (mythology)"), entity_id_for("Lilu")}
    assert {e.label for e in extraction.entities if e.id in about} == {"Topic"}


def test_a_word_of_its_note_title_opening_a_sentence_is_a_name() -> None:
    text = "McRae is a city in White County. The city has a school."
    chunk = Chunk("c8", "d", "v", text, ("McRae, Arkansas",), 0, 0, len(text), None, "McRae, Arkansas")
    names = {e.name for e in LexicalEntityExtractor().run(chunks=[chunk])["extraction"].entities}
    assert "McRae" in names  # a single opening word, kept because the note's title names it
    assert "The" not in names and "City" not in names
    untitled = Chunk("c8", "d", "v", text, ("Towns",), 0, 0, len(text), None, "Towns")
    assert "McRae" not in {e.name for e in LexicalEntityExtractor().run(chunks=[untitled])["extraction"].entities}


def test_the_words_of_a_work_title_written_out_in_its_note_are_no_names() -> None:
    title = "Alexander and the Terrible, Horrible, No Good, Very Bad Day"
    text = f"{title}, published in 1972, is a book written by Judith Viorst. Good reviews followed."
    chunk = Chunk("c7", "d", "v", text, (title,), 0, 0, len(text), None, title)
    extraction = LexicalEntityExtractor().run(chunks=[chunk])["extraction"]
    names = {e.name for e in extraction.entities}
    # the title is the note's Topic; its words are not names of their own, nor is an opener that a title word
    # of a work's title (more than three capitalised words) happens to be
    assert {"Terrible", "Horrible", "Bad Day", "Good", "Alexander"}.isdisjoint(names)
    assert {"Judith Viorst", title} <= names
    short = Chunk("c8", "d", "v", "McRae, Arkansas is a city.", ("McRae, Arkansas",), 0, 0, 26, None, "McRae, Arkansas")
    assert "McRae" in {e.name for e in LexicalEntityExtractor().run(chunks=[short])["extraction"].entities}


def test_sentence_long_titles_and_function_words_give_no_topic() -> None:
    assert title_names("Notes from the long meeting where we decided many things about the roadmap") == []
    assert title_names("The") == []
    assert title_names("1998") == []
    assert title_names("Orion Planner") == ["Orion Planner"]


def test_a_common_word_opening_a_sentence_is_not_part_of_the_name() -> None:
    text = (
        "Check Beacon Telemetry for a spike. Alerts come from Beacon Telemetry; check them. Tomas Eriksen owns it. "
        "CAN: Controller Area Network, the bus."
    )
    chunk = Chunk("d.v.0", "d", "v", text, ("Runbook",), 0, 0, len(text), None, "Runbook")
    names = {e.name for e in LexicalEntityExtractor().run(chunks=[chunk])["extraction"].entities}
    assert "Beacon Telemetry" in names and "Check Beacon Telemetry" not in names
    assert "Tomas Eriksen" in names, "a span whose rest is no name of its own stays whole"
    assert "Controller Area Network" in names


def test_names_with_accented_letters_are_kept_whole() -> None:
    text = "Kolinda Grabar-Kitarović visited São Paulo. The talks with Kolinda Grabar-Kitarović went well."
    chunk = Chunk("d.v.0", "d", "v", text, ("Visits",), 0, 0, len(text), None, "Visits")
    names = {e.name for e in LexicalEntityExtractor().run(chunks=[chunk])["extraction"].entities}
    assert {"Kolinda Grabar-Kitarović", "São Paulo"} <= names


def test_the_extractor_labels_spans_with_types_in_the_ontologys_words() -> None:
    text = (
        "Dr. Okafor joined Sonacast Ltd on 31 October 2024. The CT-60 and the serial 60-0417 went to Carrick Island. "
        "Okafor said the ct-60 was fine."
    )
    chunk = Chunk("d.v.0", "d", "v", text, ("Notes",), 0, 0, len(text), None, "Notes")
    open_labels = {(e.name, e.label) for e in LexicalEntityExtractor().run(chunks=[chunk])["extraction"].entities}
    assert {
        ("Okafor", "Person"),
        ("Sonacast Ltd", "Organization"),
        ("31 October 2024", "Date"),
        ("CT-60", "Product"),
        ("60-0417", "Product"),
        ("Carrick Island", "Place"),
        ("ct-60", "Product"),
    } <= open_labels
    assert not any(name.startswith("Dr") for name, _ in open_labels), "the title is no part of the name"
    closed = LexicalEntityExtractor(entity_labels=["Person", "Organization", "Component", "Location"])
    labels = {(e.name, e.label) for e in closed.run(chunks=[chunk])["extraction"].entities}
    assert {("CT-60", "Component"), ("Carrick Island", "Location"), ("31 October 2024", "Date")} <= labels


def test_a_title_joins_the_name_after_it_and_stays_out_of_it() -> None:
    text = "Chair: Dr. Moira Cathcart. Prof. Rao and Dr Okafor met RV Shearwater's crew."
    found = names(text)
    assert {"Moira Cathcart", "Rao", "Okafor", "Shearwater"} <= found
    assert not found & {"Dr", "Prof", "RV", "Dr. Moira Cathcart", "RV Shearwater"}


def test_dates_and_codes_are_spans_even_where_capitals_say_nothing() -> None:
    found = names("Service on 6 January 2025 for the ct-60 and v2. Date: April 2025. The GB-3R went out.")
    assert {"6 January 2025", "ct-60", "v2", "April 2025", "GB-3R"} <= found


def test_a_name_joined_by_an_ampersand_is_one_name() -> None:
    assert "Macleod & Rae" in names("The contractor is Macleod & Rae this year.")


def test_an_opener_that_is_a_word_of_a_name_the_batch_knows_is_kept() -> None:
    found = names("From 1 November the skipper is Ewan Dalgleish. Ewan has been mate for years. Boats are slow.")
    assert "Ewan" in found and "Boats" not in found
