"""``ClosedSet``: the base of agrag's enums of names, with a ``from_str`` whose error lists the valid values."""

from __future__ import annotations

from enum import StrEnum
from typing import Self

from agrag.components.choice_errors import UnknownChoiceError


class ClosedSet(StrEnum):
    """A closed set of names; a member equals (and serializes as) its plain string value.

    Subclasses name what they hold in ``what`` and may raise a more specific error from ``unknown``.

    Usage:
        ```python
        class Colour(ClosedSet):
            RED = "red"

        Colour.from_str("blue")  # UnknownChoiceError: Unknown colour 'blue'. Use one of: red.
        ```
    """

    @classmethod
    def what(cls) -> str:
        """What the set holds, in words, for error messages (the class name by default)."""
        return cls.__name__

    @classmethod
    def unknown(cls, value: str) -> UnknownChoiceError:
        """The error for ``value``, which is not in the set."""
        return UnknownChoiceError(cls.what(), value, [member.value for member in cls])

    @classmethod
    def from_str(cls, value: str) -> Self:
        """The member whose value is ``value``.

        Raises:
            UnknownChoiceError: ``value`` is not in the set; the message lists the valid values.
        """
        try:
            return cls(value)
        except ValueError:
            raise cls.unknown(str(value)) from None
