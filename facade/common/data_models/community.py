"""``agrag.common.data_models.community``: re-exports ``agrag.components.data_models.community``."""

from agrag.components.data_models.community import Community, CommunityReport, Finding

__all__ = ["Community", "CommunityReport", "Finding"]
