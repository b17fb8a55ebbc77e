"""``agrag.common.data_models.chunk``: re-exports ``agrag.components.data_models.chunk``."""

from agrag.components.data_models.chunk import Chunk

__all__ = ["Chunk"]
