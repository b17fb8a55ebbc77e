"""``StrictModel``: the base of every config model (unknown keys are errors, numbers refuse booleans)."""

from __future__ import annotations

from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, model_validator


def takes_number(annotation: Any) -> bool:
    """Whether a field of this type holds numbers (``int``, ``float``, optionally or in a tuple), and never a bool."""
    if annotation is bool:
        return False
    if annotation in (int, float):
        return True
    return any(takes_number(arg) for arg in get_args(annotation) if arg is not Ellipsis)


def refuse_bool_numbers(model: type[BaseModel], data: Any) -> Any:
    """Refuse ``true``/``false`` where a number belongs: pydantic would read ``limit: true`` as ``limit: 1``."""
    if not isinstance(data, dict):
        return data
    for name, value in data.items():
        field = model.model_fields.get(name) if isinstance(name, str) else None
        items = value if isinstance(value, list | tuple) else (value,)
        if field is not None and takes_number(field.annotation) and any(isinstance(v, bool) for v in items):
            raise ValueError(f"{name} takes a number, not true or false (write a number, e.g. {field.default!r})")
    return data


class StrictModel(BaseModel):
    """Base of every config model: unknown keys are errors, values cannot change after loading.

    A number field refuses ``true``/``false``, which pydantic would otherwise read as 1 and 0.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _no_bool_numbers(cls, data: Any) -> Any:
        return refuse_bool_numbers(cls, data)
