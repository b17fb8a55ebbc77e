"""The short-form step of ``EntityResolver`` (``mention_linking``), on batches of documents built by hand."""

from agrag.components.data_models.chunk import chunk_id_for
from agrag.components.data_models.entity import Entity, entity_id_for
from agrag.components.data_models.extraction import Extraction, Mention
from agrag.components.data_models.resolution import KEPT_APART, MERGED, Resolution, ResolutionRule
from agrag.components.resolvers.entity_resolver import EntityResolver

Named = str | tuple[str, str]  # a name (labelled Name), or (name, label)


def entity(named: Named) -> Entity:
    name, label = (named, "Name") if isinstance(named, str) else named
    return Entity(entity_id_for(name, label), name, label)


def eid(named: Named) -> str:
    return entity(named).id


def documents(**docs: list[Named]) -> Extraction:
    """One chunk per document (the keyword), mentioning each name once."""
    entities = tuple(entity(n) for names in docs.values() for n in names)
    mentions = tuple(Mention(chunk_id_for(d, "v1", 0), entity(n).id, 1) for d, names in docs.items() for n in names)
    return Extraction(entities, mentions, ())


def resolve(extraction: Extraction, known: list[Named] = (), **kwargs: object) -> Resolution:  # type: ignore[assignment]
    resolver = EntityResolver(**kwargs)  # type: ignore[arg-type]
    return resolver.run(extraction=extraction, known=[entity(n) for n in known])["resolution"]


def links(resolution: Resolution) -> dict[str, str]:
    """Short-form merges: member id -> resolved id."""
    return {
        d.member_id: d.resolved_id
        for d in resolution.decisions
        if d.decision == MERGED and d.rule == ResolutionRule.SHORT_FORM
    }


def kept_apart(resolution: Resolution) -> dict[tuple[str, str], str]:
    return {
        (d.member_id, d.resolved_id): d.reason
        for d in resolution.decisions
        if d.decision == KEPT_APART and d.rule == ResolutionRule.SHORT_FORM
    }


def test_short_forms_in_one_document_link_to_its_full_name() -> None:
    ada = "Ada Okafor"
    forms = ["Okafor", "Ada", "Dr Okafor", "Dr. Okafor's", "A. Okafor", "Okafor's"]
    resolution = resolve(documents(d1=[ada, *forms, "Dr"]))
    assert links(resolution) == {eid(form): eid(ada) for form in forms}
    assert kept_apart(resolution) == {}
    reason = next(d.reason for d in resolution.decisions if d.member_id == eid("Okafor"))
    assert reason == "'Okafor' (Name) is the surname of 'Ada Okafor' (Name), the only such name in its 1 document"


def test_the_full_name_is_the_target_however_often_the_short_form_is_named() -> None:
    extraction = documents(d1=["Kirsty Munro", "Kirsty"])
    many = Extraction(extraction.entities, (*extraction.mentions, Mention("d1.v1.0", eid("Kirsty"), 9)), ())
    (decision,) = resolve(many).decisions
    assert (decision.member_id, decision.resolved_id, decision.score) == (eid("Kirsty"), eid("Kirsty Munro"), 1.0)


def test_a_longer_short_form_joins_first_so_the_surname_sees_one_person() -> None:
    resolution = resolve(documents(d1=["Ada Nkem Okafor", "Ada Okafor", "Okafor"]))
    assert links(resolution) == {eid("Ada Okafor"): eid("Ada Nkem Okafor"), eid("Okafor"): eid("Ada Nkem Okafor")}


def test_a_shared_surname_links_where_its_document_names_one_of_them() -> None:
    marcus, victor, hale = ("Marcus Hale", "Person"), ("Victor Hale", "Person"), ("Hale", "Person")
    resolution = resolve(documents(d1=[marcus, hale], d2=[victor]))
    assert links(resolution) == {eid(hale): eid(marcus)}


def test_a_shared_surname_in_a_document_naming_neither_stays_apart() -> None:
    marcus, victor, hale = ("Marcus Hale", "Person"), ("Victor Hale", "Person"), ("Hale", "Person")
    resolution = resolve(documents(d1=[marcus, hale], d2=[victor], d3=[hale]))
    assert links(resolution) == {}
    reason = "'Hale' (Person) may stand for 'Marcus Hale' and 'Victor Hale', but 1 document (d3) name none of them"
    assert kept_apart(resolution) == {(eid(hale), eid(marcus)): reason + ": kept apart"} | {
        (eid(hale), eid(victor)): reason + ": kept apart"
    }


def test_a_shared_surname_in_a_document_naming_both_stays_apart() -> None:
    marcus, victor, hale = ("Marcus Hale", "Person"), ("Victor Hale", "Person"), ("Hale", "Person")
    resolution = resolve(documents(d1=[marcus, victor, hale]))
    assert links(resolution) == {}
    (reason,) = set(kept_apart(resolution).values())
    assert "document d1 names 'Marcus Hale' and 'Victor Hale'" in reason


def test_documents_naming_different_full_names_keep_the_short_form_apart() -> None:
    resolution = resolve(documents(d1=["Marcus Hale", "Hale"], d2=["Victor Hale", "Hale"]))
    assert links(resolution) == {}
    (reason,) = set(kept_apart(resolution).values())
    assert "its documents name different ones: 'Marcus Hale' in 1 document (d1); 'Victor Hale' in 1 document (d2)" in (
        reason
    )


def test_a_person_links_across_documents_when_one_full_name_in_scope_fits() -> None:
    tessa, kirsty = ("Tessa", "Person"), ("Kirsty", "Person")
    resolution = resolve(
        documents(d1=[("Tessa Oyelaran", "Person")], d2=[tessa, kirsty]), known=[("Kirsty Munro", "Person")]
    )
    assert links(resolution) == {
        eid(tessa): eid(("Tessa Oyelaran", "Person")),
        eid(kirsty): eid(("Kirsty Munro", "Person")),
    }
    reason = next(d.reason for d in resolution.decisions if d.member_id == eid(tessa))
    assert reason.endswith("the only name it fits in scope")


def test_a_whole_name_of_fewer_words_links_only_beside_the_longer_one() -> None:
    # HotpotQA: the consultant "Scott Howell" is not the archer "Lida Scott Howell" of another article
    scott, lida = ("Scott Howell", "Person"), ("Lida Scott Howell", "Person")
    apart = resolve(documents(d1=[lida], d2=[scott]))
    assert links(apart) == {}
    ada, full = ("Ada Okafor", "Person"), ("Ada Nkem Okafor", "Person")
    assert links(resolve(documents(d1=[full, ada]))) == {eid(ada): eid(full)}


def test_untyped_names_link_across_documents_only_as_near_misses() -> None:
    # untyped, "Lisbon" and "Lisbon Metropolitan Area" look like a first name and a full name
    resolution = resolve(documents(d1=["Tessa Oyelaran"], d2=["Tessa"], d3=["Lisbon Metropolitan Area", "Lisbon"]))
    assert links(resolution) == {eid("Lisbon"): eid("Lisbon Metropolitan Area")}  # within its document
    (near,) = [c for c in resolution.candidates if c.rule == ResolutionRule.SHORT_FORM]
    assert (near.name, near.other_name, near.score) == ("Tessa", "Tessa Oyelaran", 0.0)


def test_a_person_never_links_to_an_organisation() -> None:
    hale = ("Hale", "Person")
    resolution = resolve(documents(d1=[hale, ("Hale Marine", "Organization"), ("Marcus Hale", "Person")]))
    assert links(resolution) == {eid(hale): eid(("Marcus Hale", "Person"))}
    resolution = resolve(documents(d1=[hale, ("Marcus Hale", "Organization")]))
    assert links(resolution) == {}


def test_a_place_word_is_nobodys_first_name() -> None:
    resolution = resolve(documents(d1=["Skerrin", "Skerrin Arms"], d2=["Eskholm", "Eskholm Royal Infirmary"]))
    assert links(resolution) == {}


def test_codes_a_character_apart_stay_apart() -> None:
    codes = ["CT-60", "CT-6", "CT-6s", "GB-3", "GB-3R"]
    without = resolve(documents(d1=codes, d2=["GB-3", "GB-3R"]), short_forms_enabled=False)
    assert [d for d in without.decisions if d.decision == MERGED] == []  # fuzzy, exact and acronyms keep them too
    resolution = resolve(documents(d1=["Halyard CT-60", *codes], d2=["CT-60", "GB-3R"]))
    assert [d for d in resolution.decisions if d.decision == MERGED] == [
        d for d in resolution.decisions if d.member_id == eid("CT-60")
    ]
    assert links(resolution) == {eid("CT-60"): eid("Halyard CT-60")}


def test_an_organisation_without_its_legal_form_and_a_vessel_without_its_prefix() -> None:
    resolution = resolve(
        documents(d1=["Frostline Scientific Ltd"], d2=["Frostline Scientific", "RV Shearwater"], d3=["Shearwater"])
    )
    assert links(resolution) == {
        eid("Frostline Scientific"): eid("Frostline Scientific Ltd"),
        eid("Shearwater"): eid("RV Shearwater"),
    }
    # a place is no company's short form once it names something else too
    resolution = resolve(documents(d1=["Boston Corporation"], d2=["Boston", "Boston Yanks"]))
    assert links(resolution) == {}


def test_stored_short_forms_are_left_as_they_stand() -> None:
    # canonical: it may hold full names merged into it that the scope does not show
    resolution = resolve(documents(d1=["Ada Okafor", "Okafor"]), known=["Okafor"])
    assert links(resolution) == {}
    # merged by an earlier run (into another Okafor): that merge stands
    resolver = EntityResolver()
    stored = resolver.run(extraction=documents(d1=["Ben Okafor", "Okafor"]), stored=[eid("Okafor")])["resolution"]
    assert links(stored) == {}


def test_a_short_form_links_to_a_stored_full_name() -> None:
    resolution = resolve(documents(d1=["Okafor", "Ada Okafor"]), known=["Ada Okafor"])
    assert links(resolution) == {eid("Okafor"): eid("Ada Okafor")}


def test_the_step_can_be_turned_off() -> None:
    assert links(resolve(documents(d1=["Ada Okafor", "Okafor"]), short_forms_enabled=False)) == {}
