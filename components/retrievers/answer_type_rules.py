"""The expected answer type of a question, by rules: its question word and the noun that follows it."""

from __future__ import annotations

from agrag.components.data_models.query_analysis import AnswerType
from agrag.components.retrievers.query_words import AUXILIARIES, FUNCTION_WORDS, QUESTION_WORDS, Word, words_of

_TYPE_NOUNS: dict[AnswerType, str] = {
    AnswerType.PERSON: """
        person people man men woman women child children individual who actor actress singer writer author poet
        novelist player president director skipper captain manager scientist researcher student supervisor
        collaborator technician engineer member staff employee founder cofounder leader chief ceo owner winner
        chairman chairwoman chair professor doctor lecturer colleague guitarist drummer bassist vocalist rapper
        musician artist composer producer painter sculptor architect designer journalist editor presenter host
        coach judge senator governor mayor minister politician king queen prince princess emperor pope bishop saint
        officer soldier general admiral spouse wife husband partner mother father son daughter brother sister
        parent sibling uncle aunt nephew niece grandson granddaughter character athlete comedian
        dancer investor inventor philosopher historian economist physicist chemist biologist mathematician pi
        explorer astronaut pilot scholar priest monk ruler
    """,
    AnswerType.ORGANIZATION: """
        company firm supplier manufacturer maker contractor yard funder sponsor organization organisation
        agency institution institute university college school band group team club label publisher network
        broadcaster airline bank party corporation business brand retailer store hospital observatory
        department ministry council committee foundation charity league federation association union studio
        laboratory lab employer newspaper distributor developer operator consultancy consortium station channel
        church
    """,
    AnswerType.PLACE: """
        town city country state province county region island village place location district continent river
        mountain lake sea ocean street road building venue stadium airport port harbour harbor capital nation
        neighbourhood neighborhood municipality borough territory park site birthplace hometown headquarters
        suburb valley bay peninsula waterfall desert forest canyon coast beach cape tip range hotel water area
    """,
    AnswerType.PRODUCT: """
        instrument vessel boat ship mooring device product software tool equipment part component vehicle
        car aircraft plane engine weapon film movie album song book novel game series show magazine opera
        painting sculpture recorder sensor laser machine computer phone app program
        programme platform drug medicine comedy drama documentary sitcom piece franchise
    """,
    AnswerType.EVENT: """
        event battle war storm festival tournament championship competition election conference symposium race
        match ceremony incident disaster accident cruise expedition campaign meeting workshop summit revolution
        outbreak earthquake flood hurricane epidemic pandemic
    """,
    AnswerType.DATE: "year date day month century decade time era season",
    AnswerType.QUANTITY: """
        number amount total cost price height length depth width size distance speed gust weight temperature
        population capacity percentage percent rate score snowfall rainfall salary budget revenue duration
        turnaround sum fee value altitude elevation ranking
    """,
}
TYPE_OF_NOUN: dict[str, AnswerType] = {noun: kind for kind, nouns in _TYPE_NOUNS.items() for noun in nouns.split()}
_IRREGULAR_PLURALS = {"people": "person", "men": "man", "women": "woman", "children": "child", "series": "series"}
# Nouns whose kind is in the noun after ``of`` ("the name of the band", "what part of the state"), with the kind they
# mean when that noun says nothing ("which part of the cytometer": a part).
_CONTAINERS: dict[str, AnswerType | None] = {
    "name": None, "kind": None, "type": None, "sort": None, "title": None, "one": None, "body": None,
    "group": AnswerType.ORGANIZATION, "part": AnswerType.PRODUCT,
}  # fmt: skip
_MEASURES = frozenset(
    "many much long deep large big far tall high old wide heavy often fast small short thick hot cold".split()
)
# "Where did she work / study / do her degree" asks for an employer or a school, not a place.
_INSTITUTION_VERBS = frozenset(
    """
    work works worked working study studies studied studying educated train trained training degree degrees phd
    master master's doctorate graduate graduated employed teach taught teaching intern research researched
    """.split()
)
_PREPOSITIONS = frozenset(
    "in on at by for from to of with under over into onto about after before between during since through".split()
)
_DETERMINERS = frozenset({"the", "a", "an", "most", "more", "least"})  # "the most popular hotel"
_BE = frozenset({"is", "are", "was", "were"})
_NOUN_WINDOW = 5
_BY_WORD = {"who": AnswerType.PERSON, "whom": AnswerType.PERSON, "whose": AnswerType.PERSON, "when": AnswerType.DATE}


def _singular(word: str) -> str:
    if word in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[word]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def noun_type(word: str) -> AnswerType | None:
    """The answer type a noun names (``supplier`` -> Organization, ``towns`` -> Place), or None."""
    lower = word.casefold()
    return TYPE_OF_NOUN.get(lower) or TYPE_OF_NOUN.get(_singular(lower))


def _noun_phrase_type(lowers: list[str]) -> AnswerType | None:
    """The kind the noun phrase ``lowers`` opens names: its last typed noun, looking past ``the name of``.

    The phrase ends at a function word after its first word (``Which company employed the technician`` is about
    the company); ``and``/``or`` inside it do not end it (``which television and movie actor``).
    """
    kind: AnswerType | None = None
    index, seen = 0, 0
    while index < len(lowers) and seen < _NOUN_WINDOW:
        word = lowers[index]
        if seen == 0 and word in _DETERMINERS:
            index += 1
            continue
        if word in _CONTAINERS and lowers[index + 1 : index + 2] == ["of"]:
            return _noun_phrase_type(lowers[index + 2 :]) or kind or _CONTAINERS[word]
        if word in ("and", "or") and seen:
            index += 1
            continue
        if word in FUNCTION_WORDS:
            break
        kind = noun_type(word) or kind
        index, seen = index + 1, seen + 1
    return kind


def _fronted(words: list[Word], index: int, query: str) -> bool:
    """Whether the question word at ``index`` opens its sentence (after prepositions or an adverb)."""
    sentence = max(query.rfind(mark, 0, words[index].start) for mark in (". ", "? ", "! "))
    before = [w for w in words[:index] if w.start > sentence]
    return all(w.lower in _PREPOSITIONS or w.lower.endswith("ly") for w in before)


def _interrogative(words: list[Word], index: int, query: str) -> bool:
    """Whether the question word at ``index`` asks (``the mayor of what city``).

    A relative one relates instead: ``the association which published``, ``Chiang Kai-shek, who died``.
    """
    lowers = [w.lower for w in words]
    word, rest = lowers[index], lowers[index + 1 :]
    after_comma = index > 0 and query[words[index - 1].end : words[index].start].strip() == ","
    if word == "how":
        return bool(rest) and (rest[0] in _MEASURES or rest[0] in AUXILIARIES)  # not "How to Eat"
    if _fronted(words, index, query) or not rest:
        return True
    if word == "what":
        return True  # in place: "the mayor of what city"
    if word == "which":
        return _noun_phrase_type(rest[:3]) is not None  # "starred which Canadian actress"
    return after_comma and rest[0] in AUXILIARIES  # "Before joining the station, where did she work"


def answer_type(query: str) -> AnswerType:
    """What ``query`` asks for: its answer type, from its question word and the noun after it.

    ``who`` -> Person, ``where`` -> Place, ``when`` -> Date, ``how many`` -> Quantity, ``which company`` ->
    Organization, ``which vessel`` -> Product; ``Unknown`` for yes/no, why, and the rest.

    ``where`` with a verb of work or study (``where did she work``, ``where did he do his degree``) asks for an
    employer or a school: Organization. A relative ``who``/``which``/``where`` after a noun is passed over.

    Usage:
        ```python
        answer_type("In which town is the maker of DEEPSONG's recorders located?")  # AnswerType.PLACE
        ```
    """
    words = words_of(query)
    lowers = [w.lower for w in words]
    asking = [i for i, w in enumerate(lowers) if w in QUESTION_WORDS and _interrogative(words, i, query)]
    if not asking:
        imperative = lowers[:1] in (["name"], ["list"], ["identify"])  # "Name the mother of ..."
        return (_noun_phrase_type(lowers[1:]) if imperative else None) or AnswerType.UNKNOWN
    # a question that ends on its question word asks with it ("... a war that Italy entered when?")
    index = asking[-1] if asking[-1] == len(lowers) - 1 else asking[0]
    return _answer_of(lowers[index], lowers[index + 1 :], lowers)


def _answer_of(word: str, rest: list[str], lowers: list[str]) -> AnswerType:
    """The answer type the question word ``word`` asks for, followed by ``rest`` in the question ``lowers``."""
    if word in _BY_WORD:
        return _BY_WORD[word]
    if word == "where":
        institution = any(w in _INSTITUTION_VERBS for w in lowers)
        return AnswerType.ORGANIZATION if institution else AnswerType.PLACE
    if word == "how":
        return AnswerType.QUANTITY if rest[0] in _MEASURES else AnswerType.UNKNOWN
    if word == "which" and rest[:1] == ["of"]:
        rest = rest[1:]  # "which of the founders"
    elif rest[:1] and rest[0] in _BE:
        # "What is the turnaround" names its kind; "What did the individual use" and "Which was built first" do not
        rest = rest[1:] if rest[1:2] and rest[1] in _DETERMINERS else []
    # "which was built first" (no noun) and "why": Unknown
    return (_noun_phrase_type(rest) if word in ("what", "which") else None) or AnswerType.UNKNOWN
