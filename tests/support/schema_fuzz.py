"""Hypothesis strategies from a JSON schema (an OpenAPI document's or an MCP tool's), with hostile values mixed in.

A small generator of our own rather than schemathesis or hypothesis-jsonschema: the schemas here are pydantic's
(``$ref``, ``anyOf``, ``enum``, ``const``, bounds, ``pattern``, ``prefixItems``), one generator serves the OpenAPI
routes and the MCP tools alike, and the point is what it mixes in, which those tools do not know: override strings
with OmegaConf interpolations naming the server's variables, ids of the real corpus (so calls get past the 404s),
and integers at the edges of 32 and 64 bits.

Two kinds of value come out of ``SchemaFuzz.value``:

* **fair**: inside every bound of the schema (type, lengths, item counts, ranges, pattern), so the call reaches the
  code behind the validation; strings are ordinary text, values of the field's pool (ids, paths: ``hints``),
  override strings, or hostile strings cut to the allowed length; integers anywhere in range, with the range's ends
  and the boundaries of 32 and 64 bits that fall inside it (an offset has no maximum: 10**20 is fair).
* **broken** (``broken=True``): like fair, but one value in six breaks its schema: another type, a string of any
  length, an integer out of range, NaN, one item too many, an unknown key, a required key left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st

from tests.support.hostile_values import (
    BOUNDARY_FLOATS,
    BOUNDARY_INTS,
    CONTROL,
    HOSTILE_STRINGS,
    ItemAt,
    overrides,
    pick,
)

T = TypeVar("T")
Hints = Callable[[str], Sequence[str]]
"""The fair strings of a field by its name (document ids for ``document_id``...), empty for none."""

MAX_DEPTH = 8
MAX_LIST = 4
WRONG_TYPES: tuple[Any, ...] = (None, True, 0, -1, 10**20, 1.5, "", "x", "${oc.env:HOME}", [], [None], {}, {"a": 1})

_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from("abc xyz.-_/[]"),
    min_size=1,
    max_size=40,
)
_JSON_SCALARS = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | _TEXT


def _no_hints(name: str) -> Sequence[str]:
    return ()


class SchemaFuzz:
    """Strategies for the values of the schemas in one document (``$ref`` resolves against ``root``).

    Usage:
        ```python
        fuzz = SchemaFuzz(openapi, hints=lambda name: document_ids if name == "document_id" else ())
        body = fuzz.value({"$ref": "#/components/schemas/SearchInput"})
        ```
    """

    def __init__(self, root: Mapping[str, Any], hints: Hints = _no_hints) -> None:
        self.root = root
        self.hints = hints

    def value(self, schema: Mapping[str, Any], name: str = "", *, broken: bool = False) -> st.SearchStrategy[Any]:
        """Values for ``schema`` (of the field ``name``, which picks its hints); see the module docstring."""
        return self._value(schema, name, broken, 0)

    def resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        """``schema`` with its ``$ref`` followed (``#/components/schemas/X``, ``#/$defs/X``)."""
        while "$ref" in schema:
            node: Any = self.root
            for part in str(schema["$ref"]).lstrip("#/").split("/"):
                node = node[part]
            schema = node
        return schema

    def _value(self, schema: Mapping[str, Any], name: str, broken: bool, depth: int) -> st.SearchStrategy[Any]:
        schema = self.resolve(schema)
        fair = self._fair(schema, name, broken, depth)
        if not broken:
            return fair
        return weighted((5, fair), (1, _breaking(schema)))

    def _fair(self, schema: Mapping[str, Any], name: str, broken: bool, depth: int) -> st.SearchStrategy[Any]:
        if depth > MAX_DEPTH:
            return st.none()
        if "const" in schema or "enum" in schema:
            return st.sampled_from(list(schema.get("enum", [schema.get("const")])))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                # A null branch (an optional field) is drawn a time in four: the others are where the code is.
                return weighted(
                    *[(1 if s == {"type": "null"} else 3, self._value(s, name, broken, depth + 1)) for s in schema[key]]
                )
        if "allOf" in schema:
            return self._value(schema["allOf"][0], name, broken, depth + 1)
        kind = schema.get("type")
        if isinstance(kind, list):
            return st.one_of(*[self._fair({**schema, "type": k}, name, broken, depth) for k in kind])
        builders: dict[str, Callable[[], st.SearchStrategy[Any]]] = {
            "string": lambda: self._string(schema, name),
            "integer": lambda: _integer(schema),
            "number": lambda: _number(schema),
            "boolean": st.booleans,
            "null": st.none,
            "array": lambda: self._array(schema, name, broken, depth),
            "object": lambda: self._object(schema, broken, depth),
        }
        return builders[kind]() if isinstance(kind, str) and kind in builders else _JSON_SCALARS

    def _string(self, schema: Mapping[str, Any], name: str) -> st.SearchStrategy[str]:
        low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
        if "pattern" in schema:
            return st.from_regex(str(schema["pattern"]), fullmatch=True)
        top = int(high) if high is not None else None
        choices = [
            (2, st.text(min_size=low, max_size=max(low, min(top or 60, 60)))),
            (2, pick(HOSTILE_STRINGS)),
            (1, _hostile_mix(_TEXT)),
        ]
        pool = list(self.hints(name))
        if pool:
            choices += [(4, pick(pool)), (1, _hostile_mix(pick(pool)))]
        if name.startswith("override"):
            choices += [(6, overrides())]
        return weighted(*choices).map(lambda text: _fit(text, low, top))

    def _array(self, schema: Mapping[str, Any], name: str, broken: bool, depth: int) -> st.SearchStrategy[list[Any]]:
        if "prefixItems" in schema:
            parts = [self._value(s, name, broken, depth + 1) for s in schema["prefixItems"]]
            return st.tuples(*parts).map(list)
        item_name = name[:-1] if name.endswith("s") else name  # "document_ids" -> "document_id"
        items = self._value(schema.get("items", {}), item_name, broken, depth + 1)
        low = int(schema.get("minItems", 0))
        high = min(MAX_LIST, int(schema["maxItems"]) if "maxItems" in schema else MAX_LIST)
        if item_name.startswith("override") and low == 0:
            # One or two overrides: a request's overrides fail at the first bad one, so short lists reach further.
            return weighted((1, st.just([])), (3, st.lists(items, min_size=1, max_size=2)))
        return st.lists(items, min_size=low, max_size=max(low, high))

    def _object(self, schema: Mapping[str, Any], broken: bool, depth: int) -> st.SearchStrategy[dict[str, Any]]:
        properties: Mapping[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", ()))
        fields = {k: self._value(v, k, broken, depth + 1) for k, v in properties.items()}
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping) and not properties:
            values = self._value(extra, "", broken, depth + 1)
            return st.dictionaries(pick(HOSTILE_STRINGS[:30]) | _TEXT, values, max_size=3)
        return st.fixed_dictionaries(
            {k: v for k, v in fields.items() if k in required},
            optional={k: v for k, v in fields.items() if k not in required},
        )


def weighted(*choices: tuple[int, st.SearchStrategy[T]]) -> st.SearchStrategy[T]:
    """One of ``choices``, each drawn with its weight (``st.one_of`` merges equal branches: repeating one does not
    weigh it)."""
    table = ItemAt([strategy for weight, strategy in choices for _ in range(weight)])
    return st.integers(0, len(table.values) - 1).flatmap(table)


def _fit(text: str, low: int, high: int | None) -> str:
    """``text`` padded to ``low`` characters and cut to ``high``."""
    text = text + "x" * max(0, low - len(text))
    return text if high is None else text[:high]


def _breaking(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """A value that breaks ``schema``: another type, or past one of its bounds."""
    breaking: list[st.SearchStrategy[Any]] = [pick(WRONG_TYPES)]
    kind = schema.get("type")
    if kind == "string":
        breaking.append(pick(HOSTILE_STRINGS))
    elif kind in ("integer", "number"):
        breaking.append(pick([*BOUNDARY_INTS, *BOUNDARY_FLOATS]))
    elif kind == "array" and "maxItems" in schema and int(schema["maxItems"]) <= 1000:
        breaking.append(st.just(["x"] * (int(schema["maxItems"]) + 1)))
    elif kind == "object":
        unknown = pick(("unknown", "__proto__", "$ref", "x" * 200))
        breaking.append(st.dictionaries(unknown, _JSON_SCALARS, min_size=1, max_size=2))
    return st.one_of(*breaking)


def _hostile_mix(fair: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """A fair string with a hostile one before, inside or after it."""
    hostile = pick((*HOSTILE_STRINGS[:60], *CONTROL))
    return st.tuples(fair, hostile, st.integers(0, 2)).map(
        lambda t: (t[1] + t[0], t[0][: len(t[0]) // 2] + t[1] + t[0][len(t[0]) // 2 :], t[0] + t[1])[t[2]]
    )


def _integer(schema: Mapping[str, Any]) -> st.SearchStrategy[int]:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    low_i = int(low) if low is not None else None
    high_i = int(high) if high is not None else None
    inside = [b for b in BOUNDARY_INTS if (low_i is None or b >= low_i) and (high_i is None or b <= high_i)]
    ends = [b for b in (low_i, high_i) if b is not None]
    return st.one_of(
        st.integers(low_i if low_i is not None else -1000, high_i if high_i is not None else 10**6),
        st.sampled_from(inside or ends),
        st.sampled_from(ends or inside),
    )


def _number(schema: Mapping[str, Any]) -> st.SearchStrategy[float]:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    low_f = float(low) if low is not None else -1e308
    high_f = float(high) if high is not None else 1e308
    return st.floats(
        min_value=low_f,
        max_value=high_f,
        allow_nan=False,
        allow_infinity=False,
        exclude_min="exclusiveMinimum" in schema,
        exclude_max="exclusiveMaximum" in schema,
    )


def as_query_values(value: Any) -> list[str]:
    """How a JSON value goes into a query string: a list as repeated parameters, scalars as their text."""
    if value is None:
        return []
    if isinstance(value, list):
        return [v for item in value for v in as_query_values(item)] or [""]
    if isinstance(value, bool):
        return ["true" if value else "false"]
    return [str(value)]
