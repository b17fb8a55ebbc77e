"""``RowFormat``: one Kùzu table's row, both ways, declared once as a column list (the formats are in ``rows.py``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

W = TypeVar("W")  # what a write takes
R = TypeVar("R")  # what a read gives

READ_ONLY = "<"  # a read returns the column; a write does not take it from the value (the statement or ``extra`` does)
WRITE_ONLY = ">"  # a write sends the column; a read does not return it


class RowFormat(Generic[W, R]):
    """How one table's rows are written (a ``$rows`` entry, from a ``W``) and read back (as an ``R``).

    The table is one line, ``"alias: column column ..."``: the variable the reading statements bind the table to
    (``c`` in ``MATCH (c:Chunk)``), then its columns in the order a read returns them. A column is a property of
    the table (``text``) or, where it holds a dot, an expression the statement has in scope (``a.name``); a column
    marked ``<`` is only read, one marked ``>`` only written. Both ways go by name, never by position: a write sends
    ``{column: value}``, a read calls ``build`` with one keyword a column. A row shorter than the columns leaves the
    last ones to ``build``'s defaults; columns after them are the statement's own (ignored here).

    Args:
        build: Makes the value from the columns read (the data model, or a function taking the same keywords).
        table: ``"alias: column column< column> ..."``, as above.
        fields: The value's attribute of a column, where its name differs.
        dump: How a written column is computed from the whole value, where it is more than the attribute.
        load: How a read column's stored value becomes the value's, where they differ (''/None, JSON, an enum).

    Usage:
        ```python
        ROW = RowFormat[Entity, Entity](Entity, "e: id name norm_name>", dump={"norm_name": norm})
        f"MATCH (e:Entity) RETURN {ROW.RETURN}"  # e.id, e.name
        ROW.params(Entity("e1", "Ada"))  # {"id": "e1", "name": "Ada", "norm_name": "ada"}
        ROW.read(["e1", "Ada"])  # Entity(id="e1", name="Ada")
        ```
    """

    def __init__(
        self,
        build: Callable[..., R],
        table: str,
        *,
        fields: Mapping[str, str] | None = None,
        dump: Mapping[str, Callable[[W], Any]] | None = None,
        load: Mapping[str, Callable[[Any], Any]] | None = None,
    ) -> None:
        alias, _, names = table.partition(":")
        self.alias = alias.strip()
        self.build = build
        self.reads = tuple(c.rstrip(READ_ONLY) for c in names.split() if not c.endswith(WRITE_ONLY))
        self.writes = tuple(c.rstrip(WRITE_ONLY) for c in names.split() if not c.endswith(READ_ONLY))
        self.fields = dict(fields or {})
        self.dump = dict(dump or {})
        self.load = dict(load or {})

    @property
    def RETURN(self) -> str:
        """The ``RETURN`` list of the columns a read returns."""
        return self.returning()

    def returning(self, *, upto: int | None = None, **expressions: str) -> str:
        """The ``RETURN`` list of the first ``upto`` columns read (all by default), some given as ``expressions``.

        ``RelationRow.returning(source_id="a_id")`` returns ``a_id`` where the column ``source_id`` stands.
        """
        return ", ".join(expressions.get(c) or self._expression(c) for c in self.reads[:upto])

    def params(self, item: W, **extra: Any) -> dict[str, Any]:
        """The ``$rows`` entry that writes ``item``, plus ``extra`` columns the value does not hold."""
        row = {c: self.dump[c](item) if c in self.dump else getattr(item, self.fields.get(c, c)) for c in self.writes}
        return {**row, **extra}

    def read(self, row: Sequence[Any]) -> R:
        """The value of one row of ``RETURN`` (or of a ``returning`` list)."""
        same: Callable[[Any], Any] = _same
        values = {self.fields.get(c, c): self.load.get(c, same)(v) for c, v in zip(self.reads, row, strict=False)}
        return self.build(**values)

    def _expression(self, column: str) -> str:
        return column if "." in column else f"{self.alias}.{column}"


def _same(value: Any) -> Any:
    return value
