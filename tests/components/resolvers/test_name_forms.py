import pytest

from agrag.components.resolvers.name_forms import FitKind, fit_kind, may_be_person, name_form


def fit(short: str, full: str, short_label: str = "Name", full_label: str = "Name") -> FitKind | None:
    return fit_kind(name_form(short), short_label, name_form(full), full_label)


def test_titles_and_possessives_come_off_and_words_fold() -> None:
    form = name_form("Dr. Okafor's")
    assert (form.core, form.titled, form.possessive) == (("okafor",), True, True)
    assert name_form("Prof Tessa Oyelaran").core == ("tessa", "oyelaran")
    assert name_form("Tomás’s").core == ("tomas",)
    assert name_form("Ji-woo Han").core == ("ji-woo", "han")  # a hyphenated given name stays one word


def test_a_title_alone_names_nobody() -> None:
    # the lexical extractor cuts "Dr. Moira Cathcart" at the period: "Dr" becomes an entity of its own
    for title in ("Dr", "Dr.", "Prof"):
        form = name_form(title)
        assert form.core == () and form.titled
        assert fit(title, "Moira Cathcart") is None


def test_initials_are_the_leading_single_letters() -> None:
    assert name_form("A. Okafor").initials == 1
    assert name_form("A. N. Okafor").initials == 2
    assert name_form("Ada N. Okafor").initials == 0  # a middle initial: a full name
    assert name_form("Line 4").initials == 0  # a number is no initial


@pytest.mark.parametrize(
    ("short", "full", "kind"),
    [
        ("Okafor", "Ada Okafor", FitKind.SURNAME),
        ("Okafor's", "Ada Okafor", FitKind.SURNAME),
        ("Dr Okafor", "Ada Okafor", FitKind.SURNAME),
        ("Dr. Okafor", "Dr. Ada Okafor", FitKind.SURNAME),
        ("Ada", "Ada Okafor", FitKind.FIRST_NAME),
        ("A. Okafor", "Ada Okafor", FitKind.INITIALS),
        ("A. N. Okafor", "Ada Nkem Okafor", FitKind.INITIALS),
        ("Ada Okafor", "Ada Nkem Okafor", FitKind.FEWER_NAMES),
        ("Kathleen Turner", "Mary Kathleen Turner", FitKind.FEWER_NAMES),
        ("Dr Moira Cathcart", "Moira Cathcart", FitKind.SAME_NAME),
        ("Okafor's", "Okafor", FitKind.SAME_NAME),
        ("Frostline Scientific", "Frostline Scientific Ltd", FitKind.WITHOUT_DESIGNATOR),
        ("Shearwater", "RV Shearwater", FitKind.WITHOUT_DESIGNATOR),
        ("CT-60", "Halyard CT-60", FitKind.MODEL_CODE),
    ],
)
def test_short_forms_fit_their_full_name(short: str, full: str, kind: FitKind) -> None:
    assert fit(short, full) is kind


@pytest.mark.parametrize(
    ("short", "full"),
    [
        ("Ada Okafor", "Ada Okafor"),  # the same name, no decoration: exact resolution's job
        ("Okafor", "Dr Okafor"),  # a title narrows, never widens
        ("Dr Hale", "Hale"),  # a title on one word may be another Hale
        ("B. Okafor", "Ada Okafor"),
        ("Nkem", "Ada Nkem Okafor"),  # a middle name alone is no short form
        ("Okafor Ada", "Ada Okafor"),
        ("CT-6", "Halyard CT-60"),  # codes a character apart
        ("CT-6", "CT-60"),
        ("GB-3", "GB-3R"),
        ("CT-6s", "CT-6"),
        ("SH-24-07", "Cruise report SH-24-07"),  # a title is no maker
    ],
)
def test_other_pairs_do_not_fit(short: str, full: str) -> None:
    assert fit(short, full) is None


def test_labels_choose_the_rules() -> None:
    assert fit("Okafor", "Ada Okafor", "Person", "Person") is FitKind.SURNAME
    assert fit("Okafor", "Ada Okafor", "Name", "Person") is FitKind.SURNAME
    assert fit("Okafor", "Ada Okafor", "Person", "Organization") is None  # a person is no organisation's short form
    assert fit("Okafor", "Okafor Holdings", "Name", "Organization") is None  # nor is a word of an organisation
    assert fit("CT-60", "Halyard CT-60", "Name", "Product") is FitKind.MODEL_CODE
    assert fit("CT-60", "Halyard CT-60", "Person", "Product") is None


def test_person_rules_need_a_person_or_a_name_shaped_like_one() -> None:
    assert may_be_person(name_form("Kirsty Munro"), "Name")
    assert may_be_person(name_form("Kirsty Munro"), "Person")
    assert not may_be_person(name_form("Kirsty Munro"), "Organization")
    places = ("Skerrin Arms", "Gannet Bay", "Carrick Island", "Halyard CT-60", "IOB", "University of Tarrant")
    for name in (*places, "Atlantis: The Lost Empire", "Superman (It's Not Easy)", "Line 4"):
        assert not may_be_person(name_form(name), "Name"), name
