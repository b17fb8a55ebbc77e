"""``LexicalEntityExtractor``: finds entities and relations offline, with no model and no LLM."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from haystack import component

from agrag.components import defaults
from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity, entity_id_for, normalize_name
from agrag.components.data_models.extraction import Extraction, Mention
from agrag.components.data_models.name_occurrence import NameOccurrence, SpanKind
from agrag.components.data_models.relation import Relation, relation_id_for
from agrag.components.extractors.entity_gazetteers import PERSON_TITLES, VESSEL_PREFIXES
from agrag.components.extractors.pattern_spans import code_spans, date_spans
from agrag.components.extractors.predicate_phrases import predicate_between
from agrag.components.extractors.rule_entity_typer import RuleEntityTyper

CO_OCCURRENCE = "RELATED_TO"
NAME_LABEL = "Name"
ACRONYM_LABEL = "Acronym"

_TOKEN = re.compile(r"[^\W\d_][^\W_]*(?:[-'’][^\W_]+)*")
_ACRONYM = re.compile(r"^[A-Z][A-Z0-9]{1,5}s?$")
# A sentence ends at . ! or ? before a capital or digit, but not after a title ("Dr. Okafor", "Prof. Rao").
_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bProf\.)(?<!\bRev\.)(?<!\bSt\.)"
    r"\s+(?=[\"'(\[]?[A-Z0-9])"
)
_PREFIXES = PERSON_TITLES | VESSEL_PREFIXES
_CONNECTORS = frozenset({"of", "de", "del", "der", "van", "von", "la", "le", "du", "da", "di"})
_MARKUP = re.compile(r"[*_`>#\[\]]|\]\([^)]*\)")
_MAX_DESCRIPTION = 240
_DIGIT = re.compile(r"\d")
# Sentences naming many entities (lists, table rows) would add every pair; only the first few pair up.
_MAX_PAIRED_PER_SENTENCE = 6
# Capitalized words that start sentences or title headings without naming anything.
STOP_WORDS = frozenset(
    """
    a about above after again against all also an and any are as at be because been before being below between
    both but by can could did do does during each either every few for from further had has have having he her
    here hers him his how however i if in into is it its just let may me might more most much must my neither no
    nor not now of off on once one only or other our ours out over own per same she should since so some such
    than that the their them then there these they this those though through thus to too two under until up upon
    us very via was we were what when where whether which while who whom whose why will with within without would
    yes yet you your first second third next last new old see note notes todo table figure section chapter step
    summary overview background introduction conclusion appendix example examples today tomorrow yesterday monday
    tuesday wednesday thursday friday saturday sunday january february march april june july august september
    october november december
    """.split()
)


TOPIC_LABEL = "Topic"
_MAX_TITLE_WORDS = 10
_MAX_TITLE_NAME_WORDS = 3  # a title of more capitalised words names a work, whose words are no names in its text
_QUALIFIER = re.compile(r"\s*\([^)]*\)\s*$")
_TITLE_WORD = re.compile(r"[^\W\d_][\w'’-]*")


def _title_words(title: str) -> set[str]:
    """The capitalised words of a title's names that are not function words (``McRae`` of ``McRae, Arkansas``)."""
    names = title_names(title)
    words = set()
    for name in names:
        content = _content_words(name)
        if len(content) <= _MAX_TITLE_NAME_WORDS:  # a work's title gives ordinary words ("Good" of "No Good")
            words.update(content)
    # a word that is a whole title name ("Lilu" of "Lilu (mythology)") is the Topic every chunk is about already
    return {w for w in words if w not in names}


def _work_titles(title: str) -> list[str]:
    """The title names of more than ``_MAX_TITLE_NAME_WORDS`` capitalised words: a work's, not a name's."""
    return [name for name in title_names(title) if len(_content_words(name)) > _MAX_TITLE_NAME_WORDS]


def _content_words(name: str) -> list[str]:
    """The capitalised words of a title name that are not function words."""
    return [w for w in _TITLE_WORD.findall(name) if w[:1].isupper() and w.casefold() not in STOP_WORDS]


def _outside_works(sentence: str, spans: list[_Span], works: list[str]) -> list[_Span]:
    """``spans`` less those inside a work's title written out ("Terrible" of "Alexander and the Terrible, ...")."""
    inside = []
    for name in works:
        at = sentence.find(name)
        while at >= 0:
            inside.append((at, at + len(name)))
            at = sentence.find(name, at + len(name))
    if not inside:
        return spans
    return [span for span in spans if not any(start < span.end and span.start < end for start, end in inside)]


def title_names(title: str) -> list[str]:
    """The names a document title gives its chunks to be about: the title, and without a ``(qualifier)``.

    Long titles (sentences rather than names) and titles that are only function words or digits give none.
    """
    names = []
    for name in (title.strip(), _QUALIFIER.sub("", title).strip()):
        normalized = normalize_name(name)
        if (
            normalized
            and len(normalized.split()) <= _MAX_TITLE_WORDS
            and normalized not in STOP_WORDS
            and not normalized.isdigit()
            and name not in names
        ):
            names.append(name)
    return names


def topic_links(chunk: Chunk) -> tuple[list[Entity], list[Mention]]:
    """The ``Topic`` entities of a chunk's document title, and the chunk's *about* links to them."""
    names = title_names(chunk.title)
    entities = [Entity(entity_id_for(n), n, TOPIC_LABEL, f"Subject of {chunk.title!r}") for n in names]
    return entities, [Mention(chunk.id, e.id, 1) for e in entities]


class _Span(NamedTuple):
    """A span of one sentence (a tuple: a batch makes one per span, and tuples are built fastest)."""

    name: str
    kind: SpanKind
    at_start: bool
    start: int = 0  # where the name starts in its sentence (after a title left out of it)
    end: int = 0  # where it ends, a possessive 's included
    title: str = ""  # "Dr", "Prof", "RV": written before the name, kept out of it, evidence of its type

    @property
    def acronym(self) -> bool:
        return self.kind is SpanKind.ACRONYM


def _sentences(chunk_text: str) -> Iterator[str]:
    for raw_line in chunk_text.splitlines():
        line = raw_line.strip()
        if not line or line.startswith("#") or set(line) <= set("|-: "):
            continue  # headings repeat the heading path; table rules carry no words
        if line.startswith("|"):
            yield " ; ".join(cell.strip() for cell in line.strip("|").split("|"))
            continue
        yield from (s for s in _SENTENCE_END.split(_MARKUP.sub(" ", line)) if s.strip())


def _opens_clause(sentence: str, offset: int) -> bool:
    """True if only list markers, numbers or punctuation precede ``offset`` in its clause.

    A clause starts a sentence, a table cell or follows a colon; capitals there say nothing about names.
    """
    clause = re.split(r"[;:]", sentence[:offset])[-1]
    return not re.search(r"[A-Za-z]", clause)


def _is_capitalized(token: str) -> bool:
    return bool(_ACRONYM.match(token)) or (token[0].isupper() and token.casefold() not in STOP_WORDS)


def _joins(sentence: str, run: list[tuple[str, int, int]], start: int) -> bool:
    """Whether a token at ``start`` continues ``run`` across more than a space: after ``Dr. `` or across `` & ``."""
    gap = sentence[run[-1][2] : start]
    return (gap == ". " and len(run) == 1 and run[0][0].casefold() in _PREFIXES) or gap == " & "


def _spans(sentence: str) -> list[_Span]:
    """Runs of capitalized words (``Orion Planner``), acronyms (``SLAM``), codes (``CT-60``) and dates, in order."""
    runs = _capitalized_runs(sentence)
    dates = list(date_spans(sentence))
    codes = list(code_spans(sentence)) if _DIGIT.search(sentence) else []
    if not dates and not codes:
        return runs
    found = [_Span(sentence[a:b], SpanKind.DATE, _opens_clause(sentence, a), a, b) for a, b in dates]
    codes = [(a, b) for a, b in codes if not any(x <= a < y for x, y in dates)]
    whole = set()
    for run in runs:
        if any(a <= run.start < b for a, b in dates):
            continue
        whole.add((run.start, run.end))  # a run that is one code (CT-60) is a code, wherever it stands
        found.append(run._replace(kind=SpanKind.CODE) if (run.start, run.end) in codes else run)
    for a, b in codes:
        if (a, b) not in whole:
            found.append(_Span(sentence[a:b], SpanKind.CODE, _opens_clause(sentence, a), a, b))
    return sorted(found, key=lambda span: span.start)


def _capitalized_runs(sentence: str) -> list[_Span]:
    found: list[_Span] = []
    tokens = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(sentence)]
    run: list[tuple[str, int, int]] = []
    for index, (token, start, end) in enumerate([*tokens, ("", -1, -1)]):
        joined = bool(run) and (sentence[run[-1][2] : start] == " " or _joins(sentence, run, start))
        connector = token in _CONNECTORS and joined and index + 1 < len(tokens) and tokens[index + 1][0][:1].isupper()
        if token and (_is_capitalized(token) or connector) and (not run or joined):
            run.append((token, start, end))
            continue
        while run and run[-1][0] in _CONNECTORS:
            run.pop()
        title = ""
        if len(run) > 1 and run[0][0].casefold() in _PREFIXES:
            title = run.pop(0)[0]
        if run and not (len(run) == 1 and run[0][0].casefold() in _PREFIXES):
            found.append(_run_span(sentence, run, title))
        run = [(token, start, end)] if token and _is_capitalized(token) else []
    return found


def _run_span(sentence: str, run: list[tuple[str, int, int]], title: str) -> _Span:
    words = [w.removesuffix("'s").removesuffix("’s") for w, _, _ in run]
    parts = words
    if len(run) > 1 and " & " in sentence:
        parts = [words[0]]
        for (_, _, prev_end), (_, start, _), word in zip(run, run[1:], words[1:], strict=False):
            parts.extend(("&", word) if sentence[prev_end:start] == " & " else (word,))
    kind = SpanKind.ACRONYM if len(words) == 1 and _ACRONYM.match(words[0]) else SpanKind.NAME
    end = run[-1][2]  # the token's end: a possessive 's is inside the span (predicate_between reads past it)
    return _Span(" ".join(parts), kind, _opens_clause(sentence, run[0][1]), run[0][1], end, title)


_LOWERCASE_WORD = re.compile(r"\b[a-z][a-z]+\b")


def _drop_opener(span: _Span, seen_inside: set[str], inside_words: set[str], lowercase: set[str]) -> _Span:
    """``Check Beacon Telemetry`` opening a sentence is ``Beacon Telemetry``.

    A span that opens a clause loses its first word when the rest is a name the batch uses in mid-sentence, the
    whole span never appears in mid-sentence, and the first word is an ordinary word: never capitalized in
    mid-sentence, and written in lowercase somewhere in the batch. ``Controller Area Network`` keeps its first word,
    since ``Area Network`` is no name of its own.
    """
    first, _, rest = span.name.partition(" ")
    if span.kind is not SpanKind.NAME or not span.at_start or not rest or span.name in seen_inside:
        return span
    if first in inside_words:
        return span
    if rest not in seen_inside or first.casefold() not in lowercase:
        return span
    kind = SpanKind.ACRONYM if " " not in rest and _ACRONYM.match(rest) else SpanKind.NAME
    return _Span(
        rest, kind, False, span.start + len(first) + 1, span.end
    )  # end may hold a possessive: count from start


@component
class LexicalEntityExtractor:
    """Extracts entities and relations with rules: proper-noun spans, acronyms, and sentence co-occurrence.

    A span is a run of capitalized words (``Maria Chen``, ``Orion Planner``) or an acronym (``SLAM``). A single
    capitalized word at the start of a sentence counts only if the same word also appears capitalized in the middle
    of a sentence somewhere in the batch, so ordinary sentence openers do not become entities. Two entities in one
    sentence (or one table row) give a relation that keeps the chunk supporting it and the sentence: a fact named by
    the predicate the sentence states between them (``Victor Hale -[owns]-> Osprey Ceramics``, directed from its
    subject; see ``predicate_between``), else an undirected ``RELATED_TO``. A fact's id is its subject, predicate and
    object, so the same fact read in two chunks merges with both. Every chunk is
    *about* its document's title (a ``Topic`` entity; see ``title_names``). Output is not yet merged:
    ``EntityResolver`` merges it.

    Usage:
        ```python
        extraction = LexicalEntityExtractor().run(chunks=chunks)["extraction"]
        ```
    """

    def __init__(
        self, min_name_length: int = defaults.LEXICAL_MIN_NAME_LENGTH, entity_labels: Sequence[str] = ()
    ) -> None:
        if min_name_length < 1:
            raise ComponentConfigError(
                "LexicalEntityExtractor",
                f"min_name_length must be at least 1, got {min_name_length}",
                "Set ingest.extractor.min_name_length to 1 or more.",
            )
        self.min_name_length = min_name_length
        self.entity_labels = tuple(entity_labels)

    @component.output_types(extraction=Extraction)
    def run(self, chunks: list[Chunk]) -> dict[str, Extraction]:
        """Extract from a batch of chunks (one or more documents)."""
        parsed = []
        for chunk in chunks:
            works = _work_titles(chunk.title)
            parsed.append((chunk, [(s, _outside_works(s, _spans(s), works)) for s in _sentences(chunk.text)]))
        seen_inside = {
            span.name for _, sentences in parsed for _, spans in sentences for span in spans if not span.at_start
        }
        inside_words = {word for name in seen_inside for word in name.split()}
        lowercase = {m.group() for chunk in chunks for m in _LOWERCASE_WORD.finditer(chunk.text)}

        # "Ewan has been mate ...": an opener is kept when it is a word of a name used mid-sentence (Ewan Dalgleish)
        # that the batch never writes in lower case.
        known = seen_inside | {word for word in inside_words if word.casefold() not in lowercase}

        def trimmed(spans: list[_Span], own_title: set[str]) -> list[_Span]:
            kept = []
            for span in spans:
                trim = _drop_opener(span, seen_inside, inside_words, lowercase)
                if self._keep(trim, known) or self._keep(trim, own_title):
                    kept.append(trim)
            return kept

        trimmed_parsed = []
        for chunk, sentences in parsed:
            # "McRae is a city in ...", in the note "McRae, Arkansas": a word of its own title is a name there too
            own_title = {w for w in _title_words(chunk.title) if w.casefold() not in lowercase}
            trimmed_parsed.append((chunk, [(s, trimmed(spans, own_title)) for s, spans in sentences]))
        parsed = trimmed_parsed
        labels = self._labels(parsed)
        entities: list[Entity] = []
        mentions: list[Mention] = []
        relations: list[Relation] = []
        about: list[Mention] = []
        for chunk, sentences in parsed:
            topics, links = topic_links(chunk)
            entities.extend(topics)
            about.extend(links)
            counts: Counter[str] = Counter()
            for sentence, spans in sentences:
                ids: list[str] = []
                placed: list[tuple[str, tuple[int, int]]] = []
                for span in spans:
                    label = labels.get(span.name) or (ACRONYM_LABEL if span.acronym else NAME_LABEL)
                    entity_id = entity_id_for(span.name, label)
                    counts[entity_id] += 1
                    entities.append(Entity(entity_id, span.name, label, sentence.strip()[:_MAX_DESCRIPTION]))
                    placed.append((entity_id, (span.start, span.end)))
                    if entity_id not in ids:
                        ids.append(entity_id)
                relations.extend(self._pairs(ids[:_MAX_PAIRED_PER_SENTENCE], placed, chunk.id, sentence))
            mentions.extend(Mention(chunk.id, entity_id, n) for entity_id, n in counts.items())
        return {"extraction": Extraction(tuple(entities), tuple(mentions), tuple(relations), tuple(about))}

    def _keep(self, span: _Span, known: set[str]) -> bool:
        if len(span.name) < self.min_name_length:
            return False
        single_word = " " not in span.name
        return span.kind is not SpanKind.NAME or not single_word or not span.at_start or span.name in known

    def _labels(self, parsed: list[tuple[Chunk, list[tuple[str, list[_Span]]]]]) -> dict[str, str]:
        """The typed label of each name of the batch that ``RuleEntityTyper`` types, in the ontology's words."""
        occurrences = (
            NameOccurrence(span.name, sentence, span.start, span.end, span.kind, span.title)
            for _, sentences in parsed
            for sentence, spans in sentences
            for span in spans
        )
        types = RuleEntityTyper().run(occurrences)
        labels = {name: kind.label_in(self.entity_labels) for name, kind in types.items()}
        return labels

    @staticmethod
    def _pairs(
        ids: list[str], placed: Sequence[tuple[str, tuple[int, int]]], chunk_id: str, sentence: str
    ) -> Iterator[Relation]:
        """A fact for each pair the sentence names a predicate between, else a co-occurrence."""
        description = sentence.strip()[:_MAX_DESCRIPTION]
        spans = [span for _, span in placed]
        where: dict[str, list[tuple[int, int]]] = {}
        for entity_id, span in placed:
            where.setdefault(entity_id, []).append(span)
        for i, a in enumerate(ids):
            for b in ids[i + 1 :]:
                fact = _fact(a, b, where, spans, sentence)
                if fact is not None:
                    source, phrase, target = fact
                else:
                    source, target = sorted((a, b))  # co-occurrence has no direction: one edge per pair
                    phrase = CO_OCCURRENCE
                relation_id = relation_id_for(source, target, phrase)
                yield Relation(relation_id, source, target, phrase, (chunk_id,), description)


def _fact(
    a: str, b: str, where: dict[str, list[tuple[int, int]]], spans: list[tuple[int, int]], sentence: str
) -> tuple[str, str, str] | None:
    """(subject id, predicate phrase, object id) the sentence states between two entities, nearest mentions first."""
    pairs = [(x, y, True) if x[0] < y[0] else (y, x, False) for x in where[a] for y in where[b]]
    for left, right, a_first in sorted(pairs, key=lambda pair: pair[1][0] - pair[0][1]):
        predicate = predicate_between(sentence, left, right, spans)
        if predicate is not None:
            subject, obj = (a, b) if a_first == predicate.subject_first else (b, a)
            return subject, predicate.phrase, obj
    return None
