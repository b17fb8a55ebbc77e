"""``LLMEntityExtractor``: entities and relations from an LLM behind an OpenAI-compatible endpoint, as JSON."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from haystack import component

from agrag.components import defaults
from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity, entity_id_for, normalize_name
from agrag.components.data_models.extraction import ChunkFailure, Extraction, Mention
from agrag.components.data_models.llm_estimate import CHARS_PER_TOKEN, LLMEstimate
from agrag.components.data_models.ontology import Ontology
from agrag.components.data_models.relation import Relation, relation_id_for
from agrag.components.errors import LLMError
from agrag.components.extractors.extraction_prompts import (
    PromptStyle,
    extraction_messages,
    gleaning_messages,
    repair_messages,
)
from agrag.components.extractors.lexical_entity_extractor import topic_links
from agrag.components.extractors.verb_phrases import written_predicate
from agrag.components.llm.openai_chat_client import ChatMessage, OpenAIChatClient, parse_json_object

UNTYPED_LABEL = "Entity"
_MAX_TYPE = 48


def _text(value: Any) -> str:
    """A string field of the answer, whitespace collapsed; numbers become text, anything else is empty."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return ""
    return " ".join(str(value).split())


def _items(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = data.get(key)
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


@dataclass
class _Found:
    """What the rounds of one chunk answered so far, keyed so that a repeat adds nothing."""

    labels: dict[str, str]
    entities: dict[str, Entity] = field(default_factory=dict)
    relations: dict[tuple[str, str, str], tuple[str, str, str]] = field(default_factory=dict)

    def add(self, data: dict[str, Any]) -> bool:
        """Add one answer; return True if it named an entity or relation not seen before."""
        before = (len(self.entities), len(self.relations))
        for item in _items(data, "entities"):
            name = _text(item.get("name"))
            if not normalize_name(name):
                continue
            label = _text(item.get("label")) or UNTYPED_LABEL
            label = self.labels.get(label.casefold(), label)  # "person" is the declared "Person"
            entity_id = entity_id_for(name, label)
            self.entities.setdefault(entity_id, Entity(entity_id, name, label, _text(item.get("description"))))
        for item in _items(data, "relations"):
            source, target = _text(item.get("source")), _text(item.get("target"))
            if not normalize_name(source) or not normalize_name(target):
                continue
            predicate = written_predicate(_text(item.get("type")), _MAX_TYPE)
            if not predicate.subject_first:  # "PUBLISHED_BY": the target published the source
                source, target = target, source
            key = (normalize_name(source), normalize_name(target), predicate.phrase)
            self.relations.setdefault(key, (source, target, _text(item.get("description"))))
        return (len(self.entities), len(self.relations)) != before

    def extraction(self, chunk: Chunk) -> Extraction:
        """Entities, mentions and relations of the chunk; relation endpoints are looked up by name."""
        ids: dict[str, str] = {}
        for entity in self.entities.values():
            ids.setdefault(normalize_name(entity.name), entity.id)  # several labels for one name: the first
        text = chunk.text.casefold()
        mentions = [Mention(chunk.id, e.id, max(1, text.count(e.name.casefold()))) for e in self.entities.values()]
        relations: dict[str, Relation] = {}
        unlisted: dict[str, str] = {}

        def endpoint(key: str, name: str) -> str:
            # An endpoint the answer did not list as an entity keeps an untyped id; the pruner reports it by name.
            if key in ids:
                return ids[key]
            unlisted.setdefault(entity_id_for(name), name)
            return entity_id_for(name)

        for (source_key, target_key, rel_type), (source, target, description) in self.relations.items():
            source_id, target_id = endpoint(source_key, source), endpoint(target_key, target)
            if source_id == target_id:
                continue
            rel_id = relation_id_for(source_id, target_id, rel_type)
            relations.setdefault(rel_id, Relation(rel_id, source_id, target_id, rel_type, (chunk.id,), description))
        unlisted = {k: v for k, v in unlisted.items() if k not in self.entities}
        entities = tuple(self.entities.values())
        return Extraction(entities, tuple(mentions), tuple(relations.values()), (), tuple(unlisted.items()))


@dataclass(frozen=True, slots=True)
class _ChunkResult:
    extraction: Extraction | None
    failure: ChunkFailure | None


@component
class LLMEntityExtractor:
    """Asks an LLM for the entities and relations of each chunk, as one JSON object, and gleans what it missed.

    Each text or table chunk is sent once (section chunks repeat their children's text and are skipped), with the
    ontology's labels and relation types in the prompt (see ``extraction_prompts``). An answer that is not valid
    JSON is re-asked once. Then up to ``gleaning_rounds`` more rounds ask for what was missed, stopping at the first
    round that adds nothing new. Entity ids include typed labels (``entity_id_for``); relation endpoints are names,
    mapped to the entity of that name in the same chunk's answer. A relation naming something the answer did not
    list as an entity keeps an untyped id with no entity, for ``OntologyPruner`` to report. Every chunk is *about*
    its document's title, as with the other extractors. Chunks run concurrently; the output is in chunk order, so
    the same answers always give the same extraction.

    A chunk whose LLM call fails (after the client's retries), or whose answer is still not JSON after the re-ask,
    is reported in ``failures`` and the other chunks go on. If a gleaning round fails, the earlier rounds'
    entities of that chunk are kept and the failure is reported as well.

    Usage:
        ```python
        client = OpenAIChatClient("http://localhost:11434/v1", model="llama3.1")
        out = LLMEntityExtractor(client, Ontology(), prompt="light").run(chunks=chunks)
        extraction, failures = out["extraction"], out["failures"]
        ```
    """

    def __init__(
        self,
        client: OpenAIChatClient,
        ontology: Ontology,
        prompt: str = defaults.LLM_EXTRACTOR_PROMPT,
        gleaning_rounds: int = defaults.LLM_EXTRACTOR_GLEANING_ROUNDS,
        concurrency: int = defaults.LLM_EXTRACTOR_CONCURRENCY,
        *,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        """Check and store the settings.

        Args:
            client: The OpenAI-compatible endpoint to ask.
            ontology: Labels and relation patterns given in the prompt; a label the LLM spells in another case is
                written as declared.
            prompt: ``rich`` (descriptions and evidence sentences) or ``light`` (names, labels, triples).
            gleaning_rounds: Extra rounds asking for what was missed; 0 asks once.
            concurrency: Chunks sent to the LLM at the same time.
            progress: Called with 1 after each chunk sent to the LLM is done (in the calling thread).

        Raises:
            ComponentConfigError: an unknown prompt, negative gleaning rounds or a concurrency below 1.
        """
        if prompt not in {style.value for style in PromptStyle}:
            valid = ", ".join(style.value for style in PromptStyle)
            raise ComponentConfigError(
                "LLMEntityExtractor",
                f"Unknown extraction prompt {prompt!r}",
                f"Set ingest.extractor.prompt to one of: {valid}.",
            )
        if gleaning_rounds < 0:
            raise ComponentConfigError(
                "LLMEntityExtractor",
                f"gleaning_rounds must be 0 or more, not {gleaning_rounds}",
                "Set ingest.extractor.gleaning_rounds to 0 (ask once) or more.",
            )
        if concurrency < 1:
            raise ComponentConfigError(
                "LLMEntityExtractor",
                f"concurrency must be 1 or more, not {concurrency}",
                "Set ingest.extractor.concurrency to 1 or more.",
            )
        self.client = client
        self.ontology = ontology
        self.prompt = PromptStyle.from_str(prompt)
        self.gleaning_rounds = gleaning_rounds
        self.concurrency = concurrency
        self.progress = progress
        declared = (*ontology.entity_labels, *ontology.untyped_labels)
        self._labels = {label.casefold(): label for label in reversed(declared)}

    @component.output_types(extraction=Extraction, failures=list[ChunkFailure])
    def run(self, chunks: list[Chunk]) -> dict[str, Any]:
        """Extract from a batch of chunks; ``failures`` lists the chunks the LLM could not answer for."""
        results: dict[str, _ChunkResult] = {}
        for chunk_id, result in self._results(chunks):
            results[chunk_id] = result
        extraction, failures = _assemble(chunks, results)
        return {"extraction": extraction, "failures": failures}

    def run_by_document(self, chunks: list[Chunk]) -> Iterator[tuple[str, Extraction, list[ChunkFailure]]]:
        """Extract like ``run``, yielding each document's extraction as soon as all its chunks are answered.

        The chunks of all documents are in flight together (``concurrency``), so a caller can store each
        document's result as it comes and lose at most the unfinished documents when the process dies.
        """
        by_document: dict[str, list[Chunk]] = {}
        for chunk in chunks:
            by_document.setdefault(chunk.document_id, []).append(chunk)
        waiting = {doc: sum(c.searchable for c in group) for doc, group in by_document.items()}
        results: dict[str, _ChunkResult] = {}
        for doc, count in waiting.items():
            if count == 0:  # nothing to send: its topic links only
                yield (doc, *_assemble(by_document[doc], results))
        owner = {c.id: c.document_id for c in chunks}
        for chunk_id, result in self._results(chunks):
            results[chunk_id] = result
            doc = owner[chunk_id]
            waiting[doc] -= 1
            if waiting[doc] == 0:
                yield (doc, *_assemble(by_document[doc], results))

    def _results(self, chunks: list[Chunk]) -> Iterator[tuple[str, _ChunkResult]]:
        """Each searchable chunk's result, in the order they finish."""
        sent = [chunk for chunk in chunks if chunk.searchable]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            futures = {pool.submit(self._extract, chunk): chunk.id for chunk in sent}
            for future in as_completed(futures):
                yield futures[future], future.result()
                if self.progress is not None:
                    self.progress(1)

    def estimate(self, chunks: list[Chunk]) -> LLMEstimate:
        """The most calls and about how many prompt tokens ``run`` would send for ``chunks``, before any call.

        A chunk whose first request the client's answer cache holds counts no call (its gleaning rounds were
        cached with it). Each gleaning round resends the conversation so far, so its prompt grows.
        """
        sent = [chunk for chunk in chunks if chunk.searchable]
        calls = tokens = cached = 0
        for chunk in sent:
            messages = extraction_messages(chunk.text, chunk.title, chunk.heading, self.ontology, self.prompt)
            if self.client.is_cached(messages, json_output=True):
                cached += 1
                continue
            prompt_chars = sum(len(m.content) for m in messages)
            rounds = 1 + self.gleaning_rounds
            calls += rounds
            # round k resends the prompt plus k-1 answers and follow-ups, each about half the prompt's size
            tokens += sum(prompt_chars + k * prompt_chars // 2 for k in range(rounds)) // CHARS_PER_TOKEN
        return LLMEstimate(items=len(sent), calls=calls, prompt_tokens=tokens, cached=cached)

    def _extract(self, chunk: Chunk) -> _ChunkResult:
        messages = extraction_messages(chunk.text, chunk.title, chunk.heading, self.ontology, self.prompt)
        try:
            answer, data = self._ask(messages)
        except LLMError as exc:
            return _ChunkResult(None, ChunkFailure(chunk.id, str(exc)))
        found = _Found(self._labels)
        found.add(data)
        for round_number in range(2, self.gleaning_rounds + 2):
            messages = gleaning_messages(messages, answer)
            try:
                answer, data = self._ask(messages)
            except LLMError as exc:
                reason = f"gleaning round {round_number} failed; the earlier rounds were kept: {exc}"
                return _ChunkResult(found.extraction(chunk), ChunkFailure(chunk.id, reason))
            if not found.add(data):
                break
        return _ChunkResult(found.extraction(chunk), None)

    def _ask(self, messages: Sequence[ChatMessage]) -> tuple[str, dict[str, Any]]:
        """Return the answer and its JSON object, re-asking once if the answer is not JSON.

        Raises:
            LLMError: the call failed, or the re-asked answer is still not a JSON object.
        """
        answer = self.client.complete(messages, json_output=True)
        try:
            return answer, parse_json_object(answer)
        except LLMError:
            answer = self.client.complete(repair_messages(messages, answer), json_output=True)
        try:
            return answer, parse_json_object(answer)
        except LLMError as exc:
            raise LLMError(f"The answer was not valid JSON, even when asked again: {exc}") from exc


def _assemble(chunks: list[Chunk], results: dict[str, _ChunkResult]) -> tuple[Extraction, list[ChunkFailure]]:
    """One extraction of ``chunks`` in their order: topic links, then what the LLM found in each."""
    entities: list[Entity] = []
    mentions: list[Mention] = []
    relations: list[Relation] = []
    about: list[Mention] = []
    unlisted: list[tuple[str, str]] = []
    failures: list[ChunkFailure] = []
    for chunk in chunks:
        topics, links = topic_links(chunk)
        entities.extend(topics)
        about.extend(links)
        result = results.get(chunk.id)
        if result is None:
            continue
        if result.extraction is not None:
            entities.extend(result.extraction.entities)
            mentions.extend(result.extraction.mentions)
            relations.extend(result.extraction.relations)
            unlisted.extend(result.extraction.unlisted)
        if result.failure is not None:
            failures.append(result.failure)
    extraction = Extraction(
        tuple(entities), tuple(mentions), tuple(relations), tuple(about), tuple(dict.fromkeys(unlisted))
    )
    return extraction, failures
