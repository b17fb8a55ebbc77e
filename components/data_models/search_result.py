"""``SearchResult``: one ranked item of a search, with the method that found it."""

from __future__ import annotations

from dataclasses import dataclass

from agrag.components.choice_errors import UnknownChoiceError
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community
from agrag.components.data_models.cypher_row import CypherRow
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.fact import Fact
from agrag.components.data_models.immutable import Immutable
from agrag.components.data_models.query_leg import QueryLeg
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.retrieval_method import RetrievalMethod, SearchStep

SearchItem = Entity | Chunk | Relation | Fact | Community | CypherRow
# What can find a result: a recipe's method, a step after fusion, or one leg of evidence discover's own fusion.
SearchMethod = RetrievalMethod | SearchStep | QueryLeg
_SEARCH_METHODS: tuple[type[RetrievalMethod] | type[SearchStep] | type[QueryLeg], ...] = (
    RetrievalMethod,
    SearchStep,
    QueryLeg,
)


def search_method_from_str(value: str) -> SearchMethod:
    """The method or step named ``value`` (as ``SearchResult.method`` serializes).

    Raises:
        UnknownChoiceError: ``value`` names no method, step or leg; the message lists them all.
    """
    for kind in _SEARCH_METHODS:
        try:
            return kind(value)
        except ValueError:
            continue
    raise UnknownChoiceError("search method", value, [m.value for kind in _SEARCH_METHODS for m in kind])


def item_key(item: SearchItem) -> tuple[str, str]:
    """Return the identity of an item across methods: its type and its id.

    Every entity keys as ``Entity`` (a ``ResolvedEntity`` too), so one entity found by a method that knows what was
    merged into it and by one that does not is still one item, fused and ranked as before.
    """
    return ("Entity" if isinstance(item, Entity) else type(item).__name__), item.id


@dataclass(frozen=True, slots=True)
class SearchResult(Immutable):
    """One item of a ranked result list.

    Attributes:
        item: The entity (a ``ResolvedEntity`` when resolution merged others into it), chunk, relation, fact
            (with the passages that state it), community (with its report) or text2cypher row found.
        score: The score of the step that ranked it last (a similarity, then an RRF score after fusion).
        method: The method that found it (after fusion: the one that ranked it best): a ``RetrievalMethod``, a
            ``SearchStep`` or, in evidence discover, a ``QueryLeg``. A closed set: a recipe runs only the methods
            agrag names, and fusion ranks by them. Each is a ``StrEnum``, so it prints and serializes as its value.
        methods: Every method that found it, best first.
        parent: For a child chunk, the section chunk it was cut from, so the whole passage can be shown.
    """

    item: SearchItem
    score: float
    method: SearchMethod
    methods: tuple[SearchMethod, ...] = ()
    parent: Chunk | None = None

    @property
    def key(self) -> tuple[str, str]:
        """Identity of the item (type name, id)."""
        return item_key(self.item)
