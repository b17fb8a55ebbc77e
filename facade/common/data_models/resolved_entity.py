"""``agrag.common.data_models.resolved_entity``: re-exports ``agrag.components.data_models.resolved_entity``."""

from agrag.components.data_models.resolved_entity import MergedEntity, ResolvedEntity

__all__ = ["MergedEntity", "ResolvedEntity"]
