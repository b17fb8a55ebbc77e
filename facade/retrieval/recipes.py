"""``agrag.retrieval.recipes``: the recipe presets (``ENTITY``, ``CHUNK``, ``HYBRID``, ...) of ``conf/recipe/``.

``from agrag.retrieval.recipes import HYBRID`` gives the validated ``RecipeConfig`` that
``agrag.pipelines.recipes`` loads from ``conf/recipe/hybrid.yaml``; a preset is read when it is first imported.
"""

from agrag.pipelines import recipes as _recipes
from agrag.pipelines.config_models import RecipeConfig
from agrag.pipelines.recipes import PRESETS, load_recipe

__all__ = ["PRESETS", "RecipeConfig", "load_recipe"]


def __getattr__(name: str) -> RecipeConfig:
    # the presets stay lazy, as in agrag.pipelines.recipes: importing one preset composes one recipe only
    return getattr(_recipes, name)  # type: ignore[no-any-return]
