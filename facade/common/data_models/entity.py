"""``agrag.common.data_models.entity``: re-exports ``agrag.components.data_models.entity``."""

from agrag.components.data_models.entity import Entity

__all__ = ["Entity"]
