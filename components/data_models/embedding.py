"""``Embedding``: a dense vector passed between components as one value."""

from __future__ import annotations

from dataclasses import dataclass

from agrag.components.data_models.immutable import Immutable


@dataclass(frozen=True, slots=True)
class Embedding(Immutable):
    """A dense vector, frozen so a pipeline can hand it to several retrievers without copying it element by element.

    Attributes:
        values: The vector's components.
    """

    values: tuple[float, ...]

    def __len__(self) -> int:
        return len(self.values)
