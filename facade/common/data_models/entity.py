"""``agrag.common.data_models.entity``: ``Entity`` and ``ResolvedEntity`` (an entity resolution formed from several).

Re-exports ``agrag.components.data_models.entity`` and ``agrag.components.data_models.resolved_entity``.
"""

from agrag.components.data_models.entity import Entity
from agrag.components.data_models.resolved_entity import MergedEntity, ResolvedEntity

__all__ = ["Entity", "MergedEntity", "ResolvedEntity"]
