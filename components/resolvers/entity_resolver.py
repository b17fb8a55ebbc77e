"""``EntityResolver``: decides which extracted entities name one thing, and logs why."""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable

from haystack import component

from agrag.components import defaults
from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.entity import Entity, normalize_name
from agrag.components.data_models.extraction import Extraction, Mention
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.resolution import KEPT_APART, MergeDecision, Resolution, ResolutionRule
from agrag.components.embedders.embedding_texts import entity_comparison_text
from agrag.components.errors import LLMError
from agrag.components.llm.openai_chat_client import ChatMessage, OpenAIChatClient, parse_json_object
from agrag.components.resolvers.mention_linking import link_short_forms
from agrag.components.resolvers.merge_groups import MergeGroups, Node, Pair, ordered, pair_order
from agrag.components.resolvers.name_matching import (
    acronym_expansions,
    blocked_pairs,
    labels_compatible,
    name_similarity,
    number_words,
    spelling_similarity,
)

Embed = Callable[[list[str]], list[list[float]]]

MAX_DESCRIPTION = 500
# The offline extractor's labels: its description is the first sentence naming the entity, so the first one wins.
_SENTENCE_LABELS = frozenset({"Name", "Acronym", "Topic"})
_LLM_SYSTEM = (
    "You decide whether two entity records of a knowledge graph name the same real-world thing. Answer with one "
    'JSON object only: {"same": true or false, "reason": "one short sentence"}.'
)


@component
class EntityResolver:
    """Decides which entities are one: exact ids, label folding, fuzzy names, acronyms, embeddings and the LLM.

    Nothing is rewritten: the output extraction keeps every entity under its own id (exact duplicates merged), and
    each ``merged`` decision says which entity a member now resolves to, so the store can point it there and an
    undo only removes the pointer. The steps:

    1. Same id (same normalized name and typed label): one entity, not logged.
    2. ``label``: one name with untyped entities (``Name``, ``Topic``...) and exactly one typed label folds into the
       typed entity. Two or more typed labels are homonyms: a ``kept_apart`` decision per typed pair.
    3. ``fuzzy`` / ``acronym``: names that share a word (or an acronym and the only name with those initials) are
       scored with rapidfuzz (the best of ``token_sort_ratio`` and ``ratio``). Labels must agree or one be untyped,
       numbers in the names must match exactly; at ``fuzzy_merge_threshold`` they merge, from
       ``fuzzy_candidate_threshold`` they are near misses.
    4. ``short_form``: a new surname, first name, title, possessive, initials or model-code form joins the full
       name it fits when its documents agree on one (see ``mention_linking``); an ambiguous one ("Hale" with
       "Marcus Hale" and "Victor Hale" in scope and neither in its document) is kept apart, with the reason.
    5. ``embedding``: a near miss whose ``entity_comparison_text`` embeddings reach ``embedding_threshold``.
    6. ``llm``: the strongest remaining near misses and the homonyms, at most ``llm_max_pairs``, get a yes/no.

    Merges are transitive; every member points at the final entity of its group: a stored (``known``) one if there
    is one, else typed before untyped, then the most mentioned, then the longest name. Two stored entities never
    merge; what would join them, like every unmerged near miss, becomes a candidate.

    Usage:
        ```python
        resolver = EntityResolver(embed=embedder.embed_batch)
        resolution = resolver.run(extraction=extraction, known=stored_entities)["resolution"]
        ```
    """

    def __init__(
        self,
        *,
        fuzzy_enabled: bool = defaults.FUZZY_ENABLED,
        fuzzy_merge_threshold: float = defaults.FUZZY_MERGE_THRESHOLD,
        fuzzy_candidate_threshold: float = defaults.FUZZY_CANDIDATE_THRESHOLD,
        short_forms_enabled: bool = defaults.SHORT_FORMS_ENABLED,
        embed: Embed | None = None,
        embedding_threshold: float = defaults.EMBEDDING_RESOLUTION_THRESHOLD,
        llm: OpenAIChatClient | None = None,
        llm_max_pairs: int = defaults.LLM_RESOLUTION_MAX_PAIRS,
    ) -> None:
        if not 0 <= fuzzy_candidate_threshold <= fuzzy_merge_threshold <= 100:
            raise ComponentConfigError(
                "EntityResolver",
                f"fuzzy resolution needs 0 <= candidate_threshold ({fuzzy_candidate_threshold}) <= merge_threshold "
                f"({fuzzy_merge_threshold}) <= 100",
                "Fix ingest.resolution.fuzzy (or a plan rule's resolution).",
            )
        if not 0 <= embedding_threshold <= 1:
            raise ComponentConfigError(
                "EntityResolver",
                f"resolution.embedding.threshold must be a cosine in [0, 1], got {embedding_threshold}",
                "Set ingest.resolution.embedding.threshold between 0 and 1 (0.9 merges only close matches).",
            )
        if llm_max_pairs < 0:
            raise ComponentConfigError(
                "EntityResolver",
                f"resolution.llm.max_pairs must be 0 or more, got {llm_max_pairs}",
                "Set ingest.resolution.llm.max_pairs to 0 or more.",
            )
        self.fuzzy_enabled = fuzzy_enabled
        self.fuzzy_merge_threshold = fuzzy_merge_threshold
        self.fuzzy_candidate_threshold = fuzzy_candidate_threshold
        self.short_forms_enabled = short_forms_enabled
        self.embed = embed
        self.embedding_threshold = embedding_threshold
        self.llm = llm
        self.llm_max_pairs = llm_max_pairs

    @component.output_types(resolution=Resolution)
    def run(
        self, extraction: Extraction, known: list[Entity] | None = None, stored: list[str] | None = None
    ) -> dict[str, Resolution]:
        """Resolve one extraction batch against itself and the stored entities.

        Args:
            extraction: The batch, as extracted.
            known: Canonical entities already stored, which new entities may resolve into.
            stored: Ids of the batch's entities that are stored already, merged or not: the short-form step leaves
                them as they are (a merge an earlier run made, or undid, stands).

        Returns:
            ``{"resolution": Resolution(...)}``: the batch with exact duplicates merged, the merge log (``merged``
            and ``kept_apart`` decisions) and the near misses left unmerged, strongest first.

        Raises:
            LLMError: the LLM endpoint failed (an answer that is not the JSON asked for leaves the pair unmerged).
        """
        merged = _exact_merge(extraction)
        nodes = _nodes(merged, known or [])
        groups = MergeGroups(nodes)
        homonyms, candidates = _fold_labels(nodes, groups)
        passages: dict[str, set[str]] = {}
        for mention in merged.mentions:
            passages.setdefault(mention.entity_id, set()).add(mention.chunk_id)
        near = self._fuzzy(list(nodes.values()), groups, candidates, passages) if self.fuzzy_enabled else []
        short_apart = []
        if self.short_forms_enabled:
            named = dict(passages)
            for link in merged.about:
                named[link.entity_id] = named.get(link.entity_id, set()) | {link.chunk_id}
            short_apart = link_short_forms(nodes, groups, named, candidates, set(stored or ()))
        near = [pair for pair in near if not groups.same(pair)]
        if self.embed is not None and near:
            near = self._embedding(self.embed, near, groups, candidates)
        kept_apart = self._llm(near, homonyms, groups, candidates)
        decisions = (*groups.decisions(), *short_apart, *kept_apart)
        return {"resolution": Resolution(merged, decisions, groups.candidates(candidates))}

    def _fuzzy(
        self, nodes: list[Node], groups: MergeGroups, candidates: list[Pair], passages: dict[str, set[str]]
    ) -> list[Pair]:
        """Merge close spellings and acronyms; return the near misses."""
        merges, near = _acronyms(nodes, candidates, passages), []
        for a, b in blocked_pairs(nodes):
            score = name_similarity(a.key, b.key)
            if score < self.fuzzy_candidate_threshold:
                continue
            member, target = ordered(a, b)
            spelled = spelling_similarity(a.key, b.key)
            how = "spelled alike" if spelled >= score else "the same words in another order"
            reason = f"{member.shown} and {target.shown} are {how} (ratio {score:.1f})"
            pair = Pair(member, target, ResolutionRule.FUZZY, score, reason)
            if not labels_compatible(a.label, b.label) or number_words(a.key) != number_words(b.key):
                candidates.append(pair)  # different typed labels or different numbers never merge by spelling
            elif spelled >= self.fuzzy_merge_threshold:
                merges.append(pair)
            else:
                near.append(pair)
        for pair in sorted(merges, key=pair_order):
            if groups.join(pair) is not None:
                candidates.append(pair)
        return near

    def _embedding(self, embed: Embed, near: list[Pair], groups: MergeGroups, candidates: list[Pair]) -> list[Pair]:
        """Merge the near misses whose embeddings agree; return the others."""
        by_id = {node.id: node for pair in near for node in (pair.member, pair.target)}
        ids = sorted(by_id)
        vectors = dict(zip(ids, embed([entity_comparison_text(by_id[i].entity) for i in ids]), strict=True))
        scored = sorted(near, key=lambda p: (-_cosine(vectors[p.member.id], vectors[p.target.id]), *p.ids))
        remaining = []
        for pair in scored:
            cosine = _cosine(vectors[pair.member.id], vectors[pair.target.id])
            if cosine < self.embedding_threshold:
                remaining.append(pair)
                continue
            reason = f"{pair.reason} and their descriptions embed alike (cosine {cosine:.3f})"
            if groups.join(Pair(pair.member, pair.target, ResolutionRule.EMBEDDING, cosine, reason)) is not None:
                candidates.append(pair)
        return sorted(remaining, key=pair_order)

    def _llm(
        self, near: list[Pair], homonyms: list[Pair], groups: MergeGroups, candidates: list[Pair]
    ) -> list[MergeDecision]:
        """Ask the LLM about the strongest pairs; return the homonyms' ``kept_apart`` decisions."""
        asked: list[Pair] = []
        answers: dict[tuple[str, str], tuple[bool | None, str]] = {}
        if self.llm is not None:
            asked = sorted([*homonyms, *near], key=pair_order)[: self.llm_max_pairs]
            answers = {pair.ids: _ask(self.llm, pair) for pair in asked}
        for pair in homonyms:
            if answers.get(pair.ids, (None, ""))[0] is not True:
                groups.keep_apart(pair)
        notes: dict[tuple[str, str], str] = {}
        for pair in asked:
            same, why = answers[pair.ids]
            if same is None:
                notes[pair.ids] = f"; the LLM's answer could not be read ({why})"
            elif not same:
                notes[pair.ids] = f"; the LLM says no: {why}"
            else:
                shown = f"{pair.member.shown} and {pair.target.shown}"
                merge = Pair(
                    pair.member, pair.target, ResolutionRule.LLM, 1.0, f"the LLM says {shown} are the same: {why}"
                )
                if refused := groups.join(merge, ignore_labels=pair.rule == ResolutionRule.HOMONYM):
                    notes[pair.ids] = f"; the LLM says they are the same ({why}), but {refused}"
        candidates.extend(pair for pair in near if not groups.same(pair))
        unasked = f"; not asked (the LLM budget of {self.llm_max_pairs} pairs was spent)" if self.llm else ""
        return [
            MergeDecision(*pair.ids, KEPT_APART, pair.rule, pair.score, pair.reason + notes.get(pair.ids, unasked))
            for pair in homonyms
            if not groups.same(pair)
        ]


def _ask(llm: OpenAIChatClient, pair: Pair) -> tuple[bool | None, str]:
    """The LLM's yes/no on one pair, and its reason; ``None`` when the answer is not the JSON asked for."""
    records = "\n".join(
        f"{side}: name: {node.entity.name}; type: {node.entity.label or 'unknown'}; "
        f"description: {node.entity.description or '(none)'}"
        for side, node in (("A", pair.member), ("B", pair.target))
    )
    question = f"Do these two records name the same thing?\n{records}\nAnswer with JSON only."
    answer = llm.complete([ChatMessage("system", _LLM_SYSTEM), ChatMessage("user", question)], json_output=True)
    try:
        data = parse_json_object(answer)
    except LLMError as exc:
        return None, str(exc)
    same = data.get("same")
    if not isinstance(same, bool):
        return None, f'no true/false "same" in {answer[:200]!r}'
    return same, str(data.get("reason") or "no reason given").strip()


def _exact_merge(extraction: Extraction) -> Extraction:
    """Merge entities of one id, add up mentions per chunk, union relation support, dedupe ``about``."""
    names: dict[str, Counter[str]] = defaultdict(Counter)
    labels: dict[str, Counter[str]] = defaultdict(Counter)
    descriptions: dict[str, list[str]] = defaultdict(list)
    for entity in extraction.entities:
        names[entity.id][entity.name] += 1
        labels[entity.id][entity.label] += 1
        descriptions[entity.id].append(entity.description)
    entities = []
    for eid, spellings in names.items():
        label = labels[eid].most_common(1)[0][0]
        texts = [text for text in descriptions[eid] if text] or [""]
        # An LLM writes a description per chunk, and the longest says most; a sentence extractor's first is best.
        description = texts[0] if label in _SENTENCE_LABELS else max(texts, key=len)[:MAX_DESCRIPTION]
        entities.append(Entity(eid, spellings.most_common(1)[0][0], label, description))
    mention_counts: Counter[tuple[str, str]] = Counter()
    for mention in extraction.mentions:
        mention_counts[(mention.chunk_id, mention.entity_id)] += mention.count
    first: dict[str, Relation] = {}
    support: dict[str, set[str]] = defaultdict(set)
    for rel in extraction.relations:
        first.setdefault(rel.id, rel)
        support[rel.id].update(rel.chunk_ids)
    return Extraction(
        tuple(entities),
        tuple(Mention(c, e, n) for (c, e), n in mention_counts.items()),
        tuple(
            Relation(r.id, r.source_id, r.target_id, r.type, tuple(sorted(support[r.id])), r.description)
            for r in first.values()
        ),
        tuple(dict.fromkeys(Mention(m.chunk_id, m.entity_id, 1) for m in extraction.about)),
    )


def _nodes(extraction: Extraction, known: Iterable[Entity]) -> dict[str, Node]:
    mentions: Counter[str] = Counter()
    for mention in extraction.mentions:
        mentions[mention.entity_id] += mention.count
    nodes: dict[str, Node] = {}
    for entity in known:
        nodes.setdefault(entity.id, Node(entity, normalize_name(entity.name), True, mentions[entity.id]))
    for entity in extraction.entities:
        nodes.setdefault(entity.id, Node(entity, normalize_name(entity.name), False, mentions[entity.id]))
    return dict(sorted(nodes.items()))


def _fold_labels(nodes: dict[str, Node], groups: MergeGroups) -> tuple[list[Pair], list[Pair]]:
    """Fold untyped entities into the only typed one of their name; return the homonym pairs and candidates."""
    by_name: dict[str, list[Node]] = defaultdict(list)
    for node in nodes.values():
        if node.key:
            by_name[node.key].append(node)
    homonyms, candidates = [], []
    for key in sorted(by_name):
        typed = [node for node in by_name[key] if node.typed]
        untyped = [node for node in by_name[key] if not node.typed]
        for a, b in itertools.chain(itertools.product(untyped, typed), itertools.combinations(typed, 2)):
            if a.known and b.known:
                continue  # both stored: decided when the second was stored
            member, target = ordered(a, b)
            if len(typed) == 1:
                pair = Pair(member, target, ResolutionRule.LABEL, 1.0, _fold_reason(member, target))
                if groups.join(pair) is not None:
                    candidates.append(pair)
            elif a.typed:
                la, lb = sorted((a.entity.label, b.entity.label))
                reason = f"same name '{target.entity.name}' but different labels {la} and {lb}: kept as two entities"
                homonyms.append(Pair(member, target, ResolutionRule.HOMONYM, 1.0, reason))
            else:
                candidates.append(Pair(member, target, ResolutionRule.LABEL, 1.0))  # which of the typed ones is it?
    return homonyms, candidates


def _fold_reason(member: Node, target: Node) -> str:
    name, label = target.entity.name, target.entity.label
    if target.typed:
        return f"same name '{name}'; the untyped {member.shown} folds into the only typed entity ({label})"
    return f"same name '{name}'; the only typed entity ({member.entity.label}) folds into the stored {target.shown}"


def _acronyms(nodes: list[Node], candidates: list[Pair], passages: dict[str, set[str]]) -> list[Pair]:
    """Pairs of an acronym and a name with its initials.

    They merge when the name is the only one with those initials and one passage names both (where an acronym is
    defined: "Controller Area Network (CAN)"); initials alone are a near miss ("DVD" and "Da Vinci's Demons").
    """
    merges: list[Pair] = []
    for node, found in acronym_expansions(nodes):
        for other in found:
            if node.known and other.known:
                continue
            member, target = ordered(node, other)
            together = bool(passages.get(node.id, set()) & passages.get(other.id, set()))
            reason = f"'{node.entity.name}' is the initials of '{other.entity.name}', and one passage names both"
            pair = Pair(member, target, ResolutionRule.ACRONYM, 100.0, reason)
            if len(found) == 1 and together and labels_compatible(node.label, other.label):
                merges.append(pair)
            else:
                candidates.append(pair)
    return merges


def _cosine(u: list[float], v: list[float]) -> float:
    norm = math.sqrt(sum(x * x for x in u)) * math.sqrt(sum(y * y for y in v))
    return sum(x * y for x, y in zip(u, v, strict=True)) / norm if norm else 0.0
