"""Errors of growing the ontology (``set_ontology``, ``agrag ontology add``): what was refused and how to fix it.

They are ``ConfigError``s: the ontology is configuration, so the CLI exits with 2 and the HTTP API answers 400.
"""

from __future__ import annotations

from collections.abc import Iterable

from agrag.components.errors import ConfigError

NAME_RULE = "letters, digits and underscores, starting with a letter"


class OntologyError(ConfigError):
    """An addition to the ontology was refused; nothing of the call was stored."""


class InvalidOntologyNameError(OntologyError):
    """A label or relation type is empty, too long or holds characters other than letters, digits and ``_``."""

    def __init__(self, kind: str, name: str, max_chars: int) -> None:
        self.kind = kind
        self.name = name
        fixed = "".join(c if c.isascii() and c.isalnum() else "_" for c in name).strip("_")[:max_chars]
        suggestion = f" such as {fixed!r}" if fixed and fixed[0].isalpha() else ""
        super().__init__(
            f"The {kind} {name!r} is not a valid name: use {NAME_RULE}, at most {max_chars} characters. "
            f"Pick a name{suggestion} and call set_ontology again."
        )


class ReservedOntologyNameError(OntologyError):
    """A label or relation type is the name of one of agrag's own graph tables (in any case)."""

    def __init__(self, kind: str, name: str, reserved: Iterable[str]) -> None:
        self.kind = kind
        self.name = name
        super().__init__(
            f"The {kind} {name!r} is the name of one of agrag's own graph tables ({', '.join(sorted(reserved))}; "
            f"compared without case), so it would be confused with them in queries. Pick another name, e.g. "
            f"{name}Item or Source{name}."
        )


class UndeclaredEndpointError(OntologyError):
    """A relation pattern names a source or target label the ontology does not declare."""

    def __init__(self, pattern: str, label: str, declared: Iterable[str]) -> None:
        self.pattern = pattern
        self.label = label
        known = ", ".join(sorted(declared)) or "(none)"
        super().__init__(
            f"The relation pattern {pattern} uses the label {label!r}, which the ontology does not declare (declared: "
            f'{known}). Add the label in the same call (labels: [{{"label": "{label}"}}], or --label {label}), '
            "or use '*' for any label."
        )


class OntologySpecError(OntologyError):
    """A label or relation given on the command line is not in the form ``agrag ontology add`` reads."""

    def __init__(self, option: str, value: str, form: str) -> None:
        self.option = option
        self.value = value
        super().__init__(f"{option} {value!r} is not {form}. Write it like that, e.g. {_EXAMPLES[option]}.")


_EXAMPLES = {
    "--label": '--label Vendor or --label Vendor:"A company that sells us parts"',
    "--relation": "--relation SUPPLIES:Organization:Component or --relation SUPPLIES:*:Component",
}
