"""``SearchResult``: one ranked item of a search, with the method that found it."""

from __future__ import annotations

from dataclasses import dataclass

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community
from agrag.components.data_models.cypher_row import CypherRow
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.immutable import Immutable
from agrag.components.data_models.relation import Relation

SearchItem = Entity | Chunk | Relation | Community | CypherRow


def item_key(item: SearchItem) -> tuple[str, str]:
    """Return the identity of an item across methods: its type and its id."""
    return type(item).__name__, item.id


@dataclass(frozen=True, slots=True)
class SearchResult(Immutable):
    """One item of a ranked result list.

    Attributes:
        item: The entity, chunk, relation, community (with its report) or text2cypher row found.
        score: The score of the step that ranked it last (a similarity, then an RRF score after fusion).
        method: The method that found it (after fusion: the one that ranked it best): a ``RetrievalMethod`` or
            ``SearchStep`` value (a ``str``, so a user's own component can name itself).
        methods: Every method that found it, best first.
        parent: For a child chunk, the section chunk it was cut from, so the whole passage can be shown.
    """

    item: SearchItem
    score: float
    method: str
    methods: tuple[str, ...] = ()
    parent: Chunk | None = None

    @property
    def key(self) -> tuple[str, str]:
        """Identity of the item (type name, id)."""
        return item_key(self.item)
