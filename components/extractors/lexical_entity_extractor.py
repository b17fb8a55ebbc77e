"""``LexicalEntityExtractor``: finds entities and relations offline, with no model and no LLM."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from haystack import component

from agrag.components import defaults
from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity, entity_id_for, normalize_name
from agrag.components.data_models.extraction import Extraction, Mention
from agrag.components.data_models.relation import Relation, relation_id_for
from agrag.components.extractors.predicate_phrases import predicate_between

CO_OCCURRENCE = "RELATED_TO"
NAME_LABEL = "Name"
ACRONYM_LABEL = "Acronym"

_TOKEN = re.compile(r"[^\W\d_][^\W_]*(?:[-'’][^\W_]+)*")
_ACRONYM = re.compile(r"^[A-Z][A-Z0-9]{1,5}s?$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_CONNECTORS = frozenset({"of", "de", "del", "der", "van", "von", "la", "le", "du", "da", "di"})
_MARKUP = re.compile(r"[*_`>#\[\]]|\]\([^)]*\)")
_MAX_DESCRIPTION = 240
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
_QUALIFIER = re.compile(r"\s*\([^)]*\)\s*$")


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


@dataclass(frozen=True, slots=True)
class _Span:
    name: str
    acronym: bool
    at_start: bool
    start: int = 0  # offsets in the sentence; ``end`` includes a possessive ``'s``
    end: int = 0


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


def _spans(sentence: str) -> Iterator[_Span]:
    """Yield runs of capitalized words (``Orion Planner``) and acronyms (``SLAM``) in one sentence."""
    tokens = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(sentence)]
    run: list[tuple[str, int, int]] = []
    for index, (token, start, end) in enumerate([*tokens, ("", -1, -1)]):
        joined = bool(run) and sentence[run[-1][2] : start] == " "
        connector = token in _CONNECTORS and joined and index + 1 < len(tokens) and tokens[index + 1][0][:1].isupper()
        if token and (_is_capitalized(token) or connector) and (not run or joined):
            run.append((token, start, end))
            continue
        while run and run[-1][0] in _CONNECTORS:
            run.pop()
        if run:
            words = [w.removesuffix("'s").removesuffix("’s") for w, _, _ in run]
            acronym = len(words) == 1 and bool(_ACRONYM.match(words[0]))
            yield _Span(" ".join(words), acronym, _opens_clause(sentence, run[0][1]), run[0][1], run[-1][2])
        run = [(token, start, end)] if token and _is_capitalized(token) else []


_LOWERCASE_WORD = re.compile(r"\b[a-z][a-z]+\b")


def _drop_opener(span: _Span, seen_inside: set[str], inside_words: set[str], lowercase: set[str]) -> _Span:
    """``Check Beacon Telemetry`` opening a sentence is ``Beacon Telemetry``.

    A span that opens a clause loses its first word when the rest is a name the batch uses in mid-sentence, the
    whole span never appears in mid-sentence, and the first word is an ordinary word: never capitalized in
    mid-sentence, and written in lowercase somewhere in the batch. ``Controller Area Network`` keeps its first word,
    since ``Area Network`` is no name of its own.
    """
    first, _, rest = span.name.partition(" ")
    if not span.at_start or not rest or span.name in seen_inside or first in inside_words:
        return span
    if rest not in seen_inside or first.casefold() not in lowercase:
        return span
    acronym = " " not in rest and bool(_ACRONYM.match(rest))
    return replace(span, name=rest, acronym=acronym, at_start=False, start=span.start + len(first) + 1)


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

    def __init__(self, min_name_length: int = defaults.LEXICAL_MIN_NAME_LENGTH) -> None:
        if min_name_length < 1:
            raise ComponentConfigError(
                "LexicalEntityExtractor",
                f"min_name_length must be at least 1, got {min_name_length}",
                "Set ingest.extractor.min_name_length to 1 or more.",
            )
        self.min_name_length = min_name_length

    @component.output_types(extraction=Extraction)
    def run(self, chunks: list[Chunk]) -> dict[str, Extraction]:
        """Extract from a batch of chunks (one or more documents)."""
        parsed = [(chunk, [(s, list(_spans(s))) for s in _sentences(chunk.text)]) for chunk in chunks]
        seen_inside = {
            span.name for _, sentences in parsed for _, spans in sentences for span in spans if not span.at_start
        }
        inside_words = {word for name in seen_inside for word in name.split()}
        lowercase = {m.group() for chunk in chunks for m in _LOWERCASE_WORD.finditer(chunk.text)}

        def trimmed(spans: list[_Span]) -> list[_Span]:
            return [_drop_opener(span, seen_inside, inside_words, lowercase) for span in spans]

        parsed = [(chunk, [(s, trimmed(spans)) for s, spans in sentences]) for chunk, sentences in parsed]
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
                kept = [s for s in spans if self._keep(s, seen_inside)]
                ids: list[str] = []
                placed: list[tuple[str, tuple[int, int]]] = []
                for span in kept:
                    entity_id = entity_id_for(span.name)
                    counts[entity_id] += 1
                    label = ACRONYM_LABEL if span.acronym else NAME_LABEL
                    entities.append(Entity(entity_id, span.name, label, sentence.strip()[:_MAX_DESCRIPTION]))
                    placed.append((entity_id, (span.start, span.end)))
                    if entity_id not in ids:
                        ids.append(entity_id)
                relations.extend(self._pairs(ids[:_MAX_PAIRED_PER_SENTENCE], placed, chunk.id, sentence))
            mentions.extend(Mention(chunk.id, entity_id, n) for entity_id, n in counts.items())
        return {"extraction": Extraction(tuple(entities), tuple(mentions), tuple(relations), tuple(about))}

    def _keep(self, span: _Span, seen_inside: set[str]) -> bool:
        if len(span.name) < self.min_name_length:
            return False
        single_word = " " not in span.name
        return span.acronym or not single_word or not span.at_start or span.name in seen_inside

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
