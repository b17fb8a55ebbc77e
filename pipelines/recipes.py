"""Recipe presets, read from ``conf/recipe/`` so their values live in one place.

``from agrag.pipelines.recipes import HYBRID`` gives the validated ``RecipeConfig`` of ``conf/recipe/hybrid.yaml``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from agrag.pipelines.config_loader import load_config
from agrag.pipelines.config_models import RecipeConfig

PRESETS = (
    "ENTITY",
    "CHUNK",
    "HYBRID",
    "HYBRID_RERANKED",
    "GRAPH_EXPAND",
    "THEMATIC",
    "TEXT2CYPHER",
    "MULTI_HOP",
    "BRIDGE",
    "FACT",
)


@cache
def load_recipe(name: str, user_dir: Path | None = None) -> RecipeConfig:
    """Load and validate the recipe ``conf/recipe/<name>.yaml``."""
    return load_config([f"recipe={name}"], user_dir).recipe


def __getattr__(name: str) -> RecipeConfig:
    if name in PRESETS:
        return load_recipe(name.lower())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
