"""``ClosedSet``: the base of agrag's enums of names, with a ``from_str`` whose error lists the valid values."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar, Self

from agrag.components.choice_errors import UnknownChoiceError, UnknownStoredValueError


class ClosedSet(StrEnum):
    """A closed set of names; a member equals (and serializes as) its plain string value.

    Subclasses name what they hold, in words, with the class keyword ``what`` (the class name by default), and may
    raise a more specific error from ``unknown``.

    Usage:
        ```python
        class Colour(ClosedSet, what="colour"):
            RED = "red"

        Colour.from_str("blue")  # UnknownChoiceError: Unknown colour 'blue'. Use one of: red.
        ```
    """

    _what_words: ClassVar[str]

    def __init_subclass__(cls, *, what: str = "", **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls._what_words = what or cls.__name__

    @classmethod
    def what(cls) -> str:
        """What the set holds, in words, for error messages."""
        return cls._what_words

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

    @classmethod
    def from_stored(cls, value: str, store: str) -> Self:
        """The member a store holds as ``value``: a value outside the set means data this agrag did not write.

        Raises:
            UnknownStoredValueError: ``value`` is not in the set (a ``StoreError``); the message lists the valid values.
        """
        try:
            return cls(value)
        except ValueError:
            raise UnknownStoredValueError(store, cls.what(), str(value), [member.value for member in cls]) from None
