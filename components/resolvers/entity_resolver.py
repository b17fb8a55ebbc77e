"""``EntityResolver``: decides which extracted entities name one thing, and logs why."""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from haystack import component
from rapidfuzz import fuzz

from agrag.components.data_models.entity import Entity, is_typed, normalize_name
from agrag.components.data_models.extraction import Extraction, Mention
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.resolution import KEPT_APART, MERGED, MergeDecision, Resolution, ResolutionCandidate
from agrag.components.errors import ConfigError, LLMError
from agrag.components.llm.openai_chat_client import ChatMessage, OpenAIChatClient, parse_json_object

Embed = Callable[[list[str]], list[list[float]]]

MAX_DESCRIPTION = 500
# The offline extractor's labels: its description is the first sentence naming the entity, so the first one wins.
_SENTENCE_LABELS = frozenset({"Name", "Acronym", "Topic"})
_MIN_BLOCK_TOKEN = 3  # shorter words ("of", "ai") would compare unrelated names
_MAX_BLOCK = 50  # a word shared by more entities than this ("system") says nothing about sameness
_STOPWORDS = frozenset({"a", "an", "and", "for", "in", "of", "on", "the", "to"})
_RATIO_RULES = frozenset({"fuzzy", "acronym"})  # scored 0-100; the other rules score 0-1
_LLM_SYSTEM = (
    "You decide whether two entity records of a knowledge graph name the same real-world thing. Answer with one "
    'JSON object only: {"same": true or false, "reason": "one short sentence"}.'
)


@dataclass(frozen=True, slots=True)
class _Node:
    entity: Entity
    key: str  # the normalized name
    known: bool  # already stored (and canonical)
    mentions: int

    @property
    def id(self) -> str:
        return self.entity.id

    @property
    def typed(self) -> bool:
        return is_typed(self.entity.label)

    @property
    def rank(self) -> tuple[bool, bool, int, int]:
        # The better target: stored, then typed (it says more), then most mentioned, then the longer name.
        return (self.known, self.typed, self.mentions, len(self.entity.name))

    @property
    def shown(self) -> str:
        return f"'{self.entity.name}' ({self.entity.label or 'no label'})"

    def text(self) -> str:
        head = f"{self.entity.name} ({self.entity.label})" if self.entity.label else self.entity.name
        return f"{head}: {self.entity.description}" if self.entity.description else head


def _ordered(a: _Node, b: _Node) -> tuple[_Node, _Node]:
    """Return ``(member, target)``: the target has the better rank; on a tie, the smaller id."""
    if a.rank != b.rank:
        return (b, a) if a.rank > b.rank else (a, b)
    return (b, a) if a.id < b.id else (a, b)


@dataclass(frozen=True, slots=True)
class _Pair:
    member: _Node
    target: _Node
    rule: str
    score: float
    reason: str = ""

    @property
    def ids(self) -> tuple[str, str]:
        return (self.member.id, self.target.id)

    def candidate(self) -> ResolutionCandidate:
        return ResolutionCandidate(
            self.member.id, self.target.id, self.member.entity.name, self.target.entity.name, self.score, self.rule
        )


def _order(pair: _Pair) -> tuple[float, str, str]:
    """Strongest first (ratios scaled to 0-1), then by ids."""
    strength = pair.score / 100 if pair.rule in _RATIO_RULES else pair.score
    return (-strength, *pair.ids)


class _Components:
    """Union-find over entity ids; each root is the best-ranked entity of its component."""

    def __init__(self, nodes: dict[str, _Node]) -> None:
        self._nodes = nodes
        self._parent = {i: i for i in nodes}
        self._members = {i: [i] for i in nodes}
        self._labels = {i: frozenset({n.entity.label.casefold()} if n.typed else ()) for i, n in nodes.items()}
        self._apart: dict[str, set[str]] = defaultdict(set)
        self._joins: list[tuple[str, str, _Pair]] = []  # (the root that lost, the pair's entity it joined by, pair)

    def find(self, i: str) -> str:
        while self._parent[i] != i:
            self._parent[i] = i = self._parent[self._parent[i]]
        return i

    def same(self, pair: _Pair) -> bool:
        return self.find(pair.member.id) == self.find(pair.target.id)

    def keep_apart(self, pair: _Pair) -> None:
        self._apart[self.find(pair.member.id)].add(pair.target.id)
        self._apart[self.find(pair.target.id)].add(pair.member.id)

    def join(self, pair: _Pair, *, ignore_labels: bool = False) -> str | None:
        """Join the components of the pair; return why not, or None when joined (or already one)."""
        ra, rb = self.find(pair.member.id), self.find(pair.target.id)
        if ra == rb:
            return None
        if self._nodes[ra].known and self._nodes[rb].known:
            return "both sides are stored entities already"
        if not ignore_labels and self._labels[ra] and self._labels[rb] and self._labels[ra] != self._labels[rb]:
            return "that would join entities of different labels"
        if self._apart[ra].intersection(self._members[rb]) or self._apart[rb].intersection(self._members[ra]):
            return "that would join entities kept apart"
        loser, winner = _ordered(self._nodes[ra], self._nodes[rb])
        self._parent[loser.id] = winner.id
        self._members[winner.id] += self._members.pop(loser.id)
        self._labels[winner.id] |= self._labels[loser.id]
        self._apart[winner.id] |= self._apart.pop(loser.id, set())
        via = pair.member.id if loser.id == ra else pair.target.id
        self._joins.append((loser.id, via, pair))
        return None

    def decisions(self) -> list[MergeDecision]:
        """One merge per entity that is no root any more, pointing at its final root."""
        decisions = []
        for loser, via, pair in self._joins:
            reason = pair.reason
            if loser != via:
                reason += f"; '{self._nodes[loser].entity.name}' joins with '{self._nodes[via].entity.name}'"
            decisions.append(MergeDecision(loser, self.find(loser), MERGED, pair.rule, pair.score, reason))
        return decisions


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
    4. ``embedding``: a near miss whose ``"name (label): description"`` embeddings reach ``embedding_threshold``.
    5. ``llm``: the strongest remaining near misses and the homonyms, at most ``llm_max_pairs``, get a yes/no.

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
        fuzzy_enabled: bool = True,
        fuzzy_merge_threshold: float = 94.0,
        fuzzy_candidate_threshold: float = 85.0,
        embed: Embed | None = None,
        embedding_threshold: float = 0.9,
        llm: OpenAIChatClient | None = None,
        llm_max_pairs: int = 50,
    ) -> None:
        if not 0 <= fuzzy_candidate_threshold <= fuzzy_merge_threshold <= 100:
            raise ConfigError(
                f"Fuzzy resolution needs 0 <= candidate_threshold ({fuzzy_candidate_threshold}) <= merge_threshold "
                f"({fuzzy_merge_threshold}) <= 100. Fix resolution.fuzzy."
            )
        if not 0 <= embedding_threshold <= 1:
            raise ConfigError(f"resolution.embedding.threshold must be a cosine in [0, 1], got {embedding_threshold}.")
        if llm_max_pairs < 0:
            raise ConfigError(f"resolution.llm.max_pairs must be 0 or more, got {llm_max_pairs}.")
        self.fuzzy_enabled = fuzzy_enabled
        self.fuzzy_merge_threshold = fuzzy_merge_threshold
        self.fuzzy_candidate_threshold = fuzzy_candidate_threshold
        self.embed = embed
        self.embedding_threshold = embedding_threshold
        self.llm = llm
        self.llm_max_pairs = llm_max_pairs

    @component.output_types(resolution=Resolution)
    def run(self, extraction: Extraction, known: list[Entity] | None = None) -> dict[str, Resolution]:
        """Resolve one extraction batch against itself and the stored entities.

        Args:
            extraction: The batch, as extracted.
            known: Canonical entities already stored, which new entities may resolve into.

        Returns:
            ``{"resolution": Resolution(...)}``: the batch with exact duplicates merged, the merge log (``merged``
            and ``kept_apart`` decisions) and the near misses left unmerged, strongest first.

        Raises:
            LLMError: the LLM endpoint failed (an answer that is not the JSON asked for leaves the pair unmerged).
        """
        merged = _exact_merge(extraction)
        nodes = _nodes(merged, known or [])
        components = _Components(nodes)
        homonyms, candidates = _fold_labels(nodes, components)
        near = self._fuzzy(list(nodes.values()), components, candidates) if self.fuzzy_enabled else []
        near = [pair for pair in near if not components.same(pair)]
        if self.embed is not None and near:
            near = self._embedding(self.embed, near, components, candidates)
        kept_apart = self._llm(near, homonyms, components, candidates)
        return {
            "resolution": Resolution(
                merged, (*components.decisions(), *kept_apart), _final_candidates(candidates, components)
            )
        }

    def _fuzzy(self, nodes: list[_Node], components: _Components, candidates: list[_Pair]) -> list[_Pair]:
        """Merge close spellings and acronyms; return the near misses."""
        merges, near = _acronyms(nodes, candidates), []
        for a, b in _blocked_pairs(nodes):
            score = max(fuzz.token_sort_ratio(a.key, b.key), fuzz.ratio(a.key, b.key))
            if score < self.fuzzy_candidate_threshold:
                continue
            member, target = _ordered(a, b)
            reason = f"{member.shown} and {target.shown} are spelled alike (ratio {score:.1f})"
            pair = _Pair(member, target, "fuzzy", score, reason)
            if not _compatible(a, b) or _numbers(a.key) != _numbers(b.key):
                candidates.append(pair)  # different typed labels or different numbers never merge by spelling
            elif score >= self.fuzzy_merge_threshold:
                merges.append(pair)
            else:
                near.append(pair)
        for pair in sorted(merges, key=_order):
            if components.join(pair) is not None:
                candidates.append(pair)
        return near

    def _embedding(
        self, embed: Embed, near: list[_Pair], components: _Components, candidates: list[_Pair]
    ) -> list[_Pair]:
        """Merge the near misses whose embeddings agree; return the others."""
        by_id = {node.id: node for pair in near for node in (pair.member, pair.target)}
        ids = sorted(by_id)
        vectors = dict(zip(ids, embed([by_id[i].text() for i in ids]), strict=True))
        scored = sorted(near, key=lambda p: (-_cosine(vectors[p.member.id], vectors[p.target.id]), *p.ids))
        remaining = []
        for pair in scored:
            cosine = _cosine(vectors[pair.member.id], vectors[pair.target.id])
            if cosine < self.embedding_threshold:
                remaining.append(pair)
                continue
            reason = f"{pair.reason} and their descriptions embed alike (cosine {cosine:.3f})"
            if components.join(_Pair(pair.member, pair.target, "embedding", cosine, reason)) is not None:
                candidates.append(pair)
        return sorted(remaining, key=_order)

    def _llm(
        self, near: list[_Pair], homonyms: list[_Pair], components: _Components, candidates: list[_Pair]
    ) -> list[MergeDecision]:
        """Ask the LLM about the strongest pairs; return the homonyms' ``kept_apart`` decisions."""
        asked: list[_Pair] = []
        answers: dict[tuple[str, str], tuple[bool | None, str]] = {}
        if self.llm is not None:
            asked = sorted([*homonyms, *near], key=_order)[: self.llm_max_pairs]
            answers = {pair.ids: _ask(self.llm, pair) for pair in asked}
        for pair in homonyms:
            if answers.get(pair.ids, (None, ""))[0] is not True:
                components.keep_apart(pair)
        notes: dict[tuple[str, str], str] = {}
        for pair in asked:
            same, why = answers[pair.ids]
            if same is None:
                notes[pair.ids] = f"; the LLM's answer could not be read ({why})"
            elif not same:
                notes[pair.ids] = f"; the LLM says no: {why}"
            else:
                shown = f"{pair.member.shown} and {pair.target.shown}"
                merge = _Pair(pair.member, pair.target, "llm", 1.0, f"the LLM says {shown} are the same: {why}")
                if refused := components.join(merge, ignore_labels=pair.rule == "homonym"):
                    notes[pair.ids] = f"; the LLM says they are the same ({why}), but {refused}"
        candidates.extend(pair for pair in near if not components.same(pair))
        unasked = f"; not asked (the LLM budget of {self.llm_max_pairs} pairs was spent)" if self.llm else ""
        return [
            MergeDecision(*pair.ids, KEPT_APART, pair.rule, pair.score, pair.reason + notes.get(pair.ids, unasked))
            for pair in homonyms
            if not components.same(pair)
        ]


def _ask(llm: OpenAIChatClient, pair: _Pair) -> tuple[bool | None, str]:
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


def _nodes(extraction: Extraction, known: Iterable[Entity]) -> dict[str, _Node]:
    mentions: Counter[str] = Counter()
    for mention in extraction.mentions:
        mentions[mention.entity_id] += mention.count
    nodes: dict[str, _Node] = {}
    for entity in known:
        nodes.setdefault(entity.id, _Node(entity, normalize_name(entity.name), True, mentions[entity.id]))
    for entity in extraction.entities:
        nodes.setdefault(entity.id, _Node(entity, normalize_name(entity.name), False, mentions[entity.id]))
    return dict(sorted(nodes.items()))


def _fold_labels(nodes: dict[str, _Node], components: _Components) -> tuple[list[_Pair], list[_Pair]]:
    """Fold untyped entities into the only typed one of their name; return the homonym pairs and candidates."""
    groups: dict[str, list[_Node]] = defaultdict(list)
    for node in nodes.values():
        if node.key:
            groups[node.key].append(node)
    homonyms, candidates = [], []
    for key in sorted(groups):
        typed = [node for node in groups[key] if node.typed]
        untyped = [node for node in groups[key] if not node.typed]
        for a, b in itertools.chain(itertools.product(untyped, typed), itertools.combinations(typed, 2)):
            if a.known and b.known:
                continue  # both stored: decided when the second was stored
            member, target = _ordered(a, b)
            if len(typed) == 1:
                pair = _Pair(member, target, "label", 1.0, _fold_reason(member, target))
                if components.join(pair) is not None:
                    candidates.append(pair)
            elif a.typed:
                la, lb = sorted((a.entity.label, b.entity.label))
                reason = f"same name '{target.entity.name}' but different labels {la} and {lb}: kept as two entities"
                homonyms.append(_Pair(member, target, "homonym", 1.0, reason))
            else:
                candidates.append(_Pair(member, target, "label", 1.0))  # which of the typed ones is it?
    return homonyms, candidates


def _fold_reason(member: _Node, target: _Node) -> str:
    name, label = target.entity.name, target.entity.label
    if target.typed:
        return f"same name '{name}'; the untyped {member.shown} folds into the only typed entity ({label})"
    return f"same name '{name}'; the only typed entity ({member.entity.label}) folds into the stored {target.shown}"


def _blocked_pairs(nodes: list[_Node]) -> list[tuple[_Node, _Node]]:
    """Pairs of differently named entities that share a word (not both stored), in id order."""
    blocks: dict[str, list[_Node]] = defaultdict(list)
    for node in nodes:
        for token in sorted(set(node.key.split())):
            if len(token) >= _MIN_BLOCK_TOKEN:
                blocks[token].append(node)
    pairs: dict[tuple[str, str], tuple[_Node, _Node]] = {}
    for block in blocks.values():
        if len(block) <= _MAX_BLOCK:
            for a, b in itertools.combinations(block, 2):
                if a.key != b.key and not (a.known and b.known):
                    pairs[(a.id, b.id)] = (a, b)
    return [pairs[ids] for ids in sorted(pairs)]


def _acronyms(nodes: list[_Node], candidates: list[_Pair]) -> list[_Pair]:
    """Pairs of an acronym and a name with its initials: the merges, when the name is the only one."""
    expansions: dict[str, list[_Node]] = defaultdict(list)
    for node in nodes:
        for initials in _initials(node.key):
            expansions[initials].append(node)
    merges: list[_Pair] = []
    for node in nodes:
        if not _looks_like_acronym(node):
            continue
        found = [other for other in expansions.get(node.key, []) if other.id != node.id]
        for other in found:
            if node.known and other.known:
                continue
            member, target = _ordered(node, other)
            reason = f"'{node.entity.name}' is the initials of '{other.entity.name}'"
            pair = _Pair(member, target, "acronym", 100.0, reason)
            (merges if len(found) == 1 and _compatible(node, other) else candidates).append(pair)
    return merges


def _initials(key: str) -> set[str]:
    tokens = key.split()
    if len(tokens) < 2:
        return set()
    variants = {"".join(t[0] for t in tokens), "".join(t[0] for t in tokens if t not in _STOPWORDS)}
    return {v for v in variants if len(v) >= 2}


def _looks_like_acronym(node: _Node) -> bool:
    name = node.entity.name
    short = 2 <= len(node.key) <= 10 and " " not in node.key
    return short and (node.entity.label == "Acronym" or sum(c.isupper() for c in name) >= 2)


def _compatible(a: _Node, b: _Node) -> bool:
    """Equal labels, or at least one untyped."""
    return not a.typed or not b.typed or a.entity.label.casefold() == b.entity.label.casefold()


def _numbers(key: str) -> list[str]:
    """The words with digits: "Line 4" and "Line 5" are two lines however alike they are spelled."""
    return sorted(token for token in key.split() if any(c.isdigit() for c in token))


def _cosine(u: list[float], v: list[float]) -> float:
    norm = math.sqrt(sum(x * x for x in u)) * math.sqrt(sum(y * y for y in v))
    return sum(x * y for x, y in zip(u, v, strict=True)) / norm if norm else 0.0


def _final_candidates(pairs: list[_Pair], components: _Components) -> tuple[ResolutionCandidate, ...]:
    """The near misses that did not end up in one group, each pair once, strongest first."""
    seen: set[frozenset[str]] = set()
    out = []
    for pair in sorted(pairs, key=_order):
        key = frozenset(pair.ids)
        if key not in seen and not components.same(pair):
            seen.add(key)
            out.append(pair.candidate())
    return tuple(out)
