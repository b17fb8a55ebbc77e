"""Errors of the tools that no store or pipeline raises: what a caller limited to some documents may not do."""

from __future__ import annotations

from collections.abc import Sequence

from agrag.components.errors import RetrievalError


class ScopedRecipeError(RetrievalError):
    """A caller limited to some documents asked for a recipe with a method or step that reads every document."""

    def __init__(self, recipe: str, refused: Sequence[str]) -> None:
        self.recipe = recipe
        self.refused = tuple(refused)
        super().__init__(
            f"Recipe {recipe!r} uses {', '.join(self.refused)}, which cannot be limited to your documents, so a token "
            "scoped to documents may not run it. Use a recipe of the entity and chunk methods without bfs or "
            "community_expand (entity, chunk or hybrid), or an evidence session."
        )


class OverrideNotAllowedError(RetrievalError):
    """A search was given overrides it cannot take (a non-recipe key, or overrides beside an inline recipe)."""
