"""``Fact``: a relation as passages state it (``Victor Hale -[owns]-> Osprey Ceramics``), with those passages."""

from __future__ import annotations

from dataclasses import dataclass

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.immutable import Immutable


@dataclass(frozen=True, slots=True)
class Fact(Immutable):
    """One relation of the graph as a statement of the text: subject, predicate, object, and where it is said.

    Its id is the relation's, so a fact is found again by the graph walk under the same id. The predicate is free
    text: ``RELATED_TO`` (two names in one sentence), or a phrase such as ``owns`` or ``studied at``; the direction is
    the relation's, from ``source`` to ``target``.

    Attributes:
        id: The relation's id.
        source_id: The entity record it starts from, as extracted (a merge does not change it).
        source: That entity's name.
        type: The predicate.
        target_id: The entity record it points to.
        target: That entity's name.
        description: The sentence that states it, as extraction kept it.
        chunk_ids: The current passages that state it (within the search's documents, if it was limited to some).
        passages: Those passages, in the order of ``chunk_ids``, so a result can be read and cited by itself; empty
            where only the ids were read.

    Usage:
        ```python
        for result in results:
            if isinstance(result.item, Fact):
                print(result.item.statement, [c.id for c in result.item.passages])
        ```
    """

    id: str
    source_id: str
    source: str
    type: str
    target_id: str
    target: str
    description: str = ""
    chunk_ids: tuple[str, ...] = ()
    passages: tuple[Chunk, ...] = ()

    @property
    def statement(self) -> str:
        """``source -[type]-> target``: the fact in one line, in its direction."""
        return f"{self.source} -[{self.type}]-> {self.target}"
