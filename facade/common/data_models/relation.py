"""``agrag.common.data_models.relation``: re-exports ``agrag.components.data_models.relation``."""

from agrag.components.data_models.relation import Relation

__all__ = ["Relation"]
