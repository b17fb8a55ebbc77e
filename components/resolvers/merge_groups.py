"""Merge groups for entity resolution: union-find over entity ids, and which entity of a group is canonical."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from agrag.components.data_models.entity import Entity, is_typed
from agrag.components.data_models.resolution import MERGED, MergeDecision, ResolutionCandidate, ResolutionRule

RATIO_RULES = frozenset({ResolutionRule.FUZZY, ResolutionRule.ACRONYM})  # scored 0-100; the other rules score 0-1


@dataclass(frozen=True, slots=True)
class Node:
    """One entity as resolution sees it: the entity, its normalized name, whether it is stored, its mentions."""

    entity: Entity
    key: str  # the normalized name
    known: bool  # already stored (and canonical)
    mentions: int

    @property
    def id(self) -> str:
        """The entity id."""
        return self.entity.id

    @property
    def name(self) -> str:
        """The entity name as written."""
        return self.entity.name

    @property
    def label(self) -> str:
        """The entity label."""
        return self.entity.label

    @property
    def typed(self) -> bool:
        """True for a real type (``Person``), false for ``Name``, ``Topic`` and the like."""
        return is_typed(self.entity.label)

    @property
    def rank(self) -> tuple[bool, bool, int, int]:
        """How good a target this entity is; the larger the better."""
        # Stored first, then typed (it says more), then most mentioned, then the longer name.
        return (self.known, self.typed, self.mentions, len(self.entity.name))

    @property
    def shown(self) -> str:
        """The name and label, for a reason in the merge log."""
        return f"'{self.entity.name}' ({self.entity.label or 'no label'})"


def ordered(a: Node, b: Node) -> tuple[Node, Node]:
    """Return ``(member, target)``: the target has the better rank; on a tie, the smaller id."""
    if a.rank != b.rank:
        return (b, a) if a.rank > b.rank else (a, b)
    return (b, a) if a.id < b.id else (a, b)


@dataclass(frozen=True, slots=True)
class Pair:
    """Two entities a rule found alike: the member would resolve to the target."""

    member: Node
    target: Node
    rule: ResolutionRule
    score: float
    reason: str = ""

    @property
    def ids(self) -> tuple[str, str]:
        """``(member id, target id)``."""
        return (self.member.id, self.target.id)

    def candidate(self) -> ResolutionCandidate:
        """The pair as a near miss of the resolution."""
        return ResolutionCandidate(
            self.member.id, self.target.id, self.member.entity.name, self.target.entity.name, self.score, self.rule
        )


def pair_order(pair: Pair) -> tuple[float, str, str]:
    """Sort key: strongest first (ratios scaled to 0-1), then by ids."""
    strength = pair.score / 100 if pair.rule in RATIO_RULES else pair.score
    return (-strength, *pair.ids)


class MergeGroups:
    """Union-find over entity ids; each root is the best-ranked entity of its group.

    Usage:
        ```python
        groups = MergeGroups(nodes)
        if (refused := groups.join(pair)) is not None:
            print(refused)  # "both sides are stored entities already"
        decisions = groups.decisions()
        ```
    """

    def __init__(self, nodes: dict[str, Node]) -> None:
        self._nodes = nodes
        self._parent = {i: i for i in nodes}
        self._members = {i: [i] for i in nodes}
        self._labels = {i: frozenset({n.entity.label.casefold()} if n.typed else ()) for i, n in nodes.items()}
        self._apart: dict[str, set[str]] = defaultdict(set)
        self._joins: list[tuple[str, str, Pair]] = []  # (the root that lost, the pair's entity it joined by, pair)

    def find(self, i: str) -> str:
        """The root of the group of entity ``i``."""
        while self._parent[i] != i:
            self._parent[i] = i = self._parent[self._parent[i]]
        return i

    def same(self, pair: Pair) -> bool:
        """True when both entities of the pair are in one group."""
        return self.find(pair.member.id) == self.find(pair.target.id)

    def keep_apart(self, pair: Pair) -> None:
        """Never join the groups of the pair's two entities."""
        self._apart[self.find(pair.member.id)].add(pair.target.id)
        self._apart[self.find(pair.target.id)].add(pair.member.id)

    def join(self, pair: Pair, *, ignore_labels: bool = False, prefer_target: bool = False) -> str | None:
        """Join the groups of the pair; return why not, or None when joined (or already one).

        ``prefer_target``: the target's group gives the root, unless only the member's root is stored (a short form
        joins its full name's group, however often the short form is mentioned).
        """
        ra, rb = self.find(pair.member.id), self.find(pair.target.id)
        if ra == rb:
            return None
        if self._nodes[ra].known and self._nodes[rb].known:
            return "both sides are stored entities already"
        if not ignore_labels and self._labels[ra] and self._labels[rb] and self._labels[ra] != self._labels[rb]:
            return "that would join entities of different labels"
        if self._apart[ra].intersection(self._members[rb]) or self._apart[rb].intersection(self._members[ra]):
            return "that would join entities kept apart"
        if prefer_target and (self._nodes[rb].known or not self._nodes[ra].known):
            loser, winner = self._nodes[ra], self._nodes[rb]
        else:
            loser, winner = ordered(self._nodes[ra], self._nodes[rb])
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

    def candidates(self, pairs: list[Pair]) -> tuple[ResolutionCandidate, ...]:
        """The near misses that did not end up in one group, each pair once, strongest first."""
        seen: set[frozenset[str]] = set()
        out = []
        for pair in sorted(pairs, key=pair_order):
            key = frozenset(pair.ids)
            if key not in seen and not self.same(pair):
                seen.add(key)
                out.append(pair.candidate())
        return tuple(out)
