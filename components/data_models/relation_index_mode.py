"""``RelationIndexMode``: when a graph store builds the ``RelationIndex`` its walks rank relations with."""

from __future__ import annotations

from agrag.components.data_models.closed_set import ClosedSet


class RelationIndexMode(ClosedSet, what="relation index mode"):
    """When the index is built.

    ``background``: on a thread of the store's once writes pause (walks read the store until it is ready);
    ``inline``: in the first walk after each write; ``off``: never.
    """

    BACKGROUND = "background"
    INLINE = "inline"
    OFF = "off"
