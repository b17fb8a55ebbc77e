"""Overrides that come from a request: which settings a request may change, and in which form.

A request is anything agrag does not take from its own user at the keyboard: the HTTP API, MCP (stdio and /mcp),
the Prefect form or deployment parameters, the agent's tool calls, and the CLI when it sends its command to a
server. Its overrides go through ``request_config`` and nowhere else; the CLI run in-process keeps all of Hydra.

What a request may give (``ALLOWED_GROUPS``, ``ALLOWED_KEYS``: an allow-list, read the code to see all of it):

- the search recipe and its keys; the chunker, extractor and ontology options of an ingestion and their keys;
  resolution, communities, per-file plans (within the plan limits), the loader's suffixes, the LLM call budget,
  the batch sizes and the finalize policy of an ingestion;
- only as ``KEY=VALUE`` with a plain value (a number, a word, a quoted string, a list or a dict of them): no
  ``+``/``++``/``~`` prefix, no ``@package``, no sweep (``a,b``, ``choice()``, ``range()``, ``interval()``,
  ``glob()``), and no ``${`` anywhere in a value, however quoted or escaped, so OmegaConf never resolves an
  interpolation (``${oc.env:...}``, ``${oc.decode:...}``) for a request;
- a file (``ingest.extractor.path``, a plan rule's ``extractor_options.path``) only as an absolute path inside
  ``AGRAG_FILES_ROOT``; without a files root a request names no file.

Any other setting (the stores, the embedder, ``evaluation``, ``ingest.parallel``, ``ingest.loader.max_file_bytes``,
the plan limits, which bound what a request's plans may ask for)
may be named only with the value the server already runs with, which is what the CLI sends to check that its
overrides agree with the server's; ``hydra`` settings never.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from agrag.components.errors import ConfigError
from agrag.components.errors_overrides import RequestOverrideError
from agrag.pipelines.config_loader import OverrideKind, ParsedOverride, parse_override
from agrag.pipelines.config_models import AgragConfig

ALLOWED_GROUPS = frozenset({"recipe", "ingest/chunker", "ingest/extractor", "ingest/ontology"})
ALLOWED_KEYS = frozenset(
    {
        *(
            f"recipe.{key}"
            for key in (
                "name",
                "description",
                "methods",
                "bfs",
                "bfs_depth",
                "bfs_passages",
                "reranker",
                "min_score",
                "limit",
                "community_expand",
                "community_top_k",
            )
        ),
        *(
            f"ingest.chunker.{key}"
            for key in ("max_chars", "section_max_chars", "table_max_rows", "overlap_sentences", "size", "overlap")
        ),
        *(f"ingest.extractor.{key}" for key in ("min_name_length", "prompt", "gleaning_rounds", "concurrency", "path")),
        *(
            f"ingest.ontology.{key}"
            for key in ("entity_labels", "relation_types", "label_descriptions", "relation_descriptions")
        ),
        *(f"ingest.resolution.fuzzy.{key}" for key in ("enabled", "merge_threshold", "candidate_threshold")),
        *(f"ingest.resolution.embedding.{key}" for key in ("enabled", "threshold")),
        *(f"ingest.resolution.llm.{key}" for key in ("enabled", "max_pairs")),
        *(
            f"ingest.communities.{key}"
            for key in (
                "enabled",
                "max_levels",
                "max_cluster_size",
                "min_size",
                "resolution",
                "seed",
                "reports",
                "report_sentences",
            )
        ),
        "ingest.plan.rules",
        "ingest.loader.suffixes",
        "ingest.max_llm_calls",
        "ingest.supersede_other_folders",
        "ingest.write_batch_chunks",
        "ingest.bulk_load_min_chunks",
        "ingest.finalize",
    }
)
PATH_KEY = "ingest.extractor.path"
ALLOWED_TEXT = (
    "A request may set recipe=NAME and recipe.KEY; ingest/chunker=NAME, ingest/extractor=NAME, ingest/ontology=NAME "
    "and their ingest.chunker.KEY, ingest.extractor.KEY and ingest.ontology.KEY; ingest.resolution.*, "
    "ingest.communities.*, ingest.plan.rules, ingest.loader.suffixes, ingest.max_llm_calls, "
    "ingest.supersede_other_folders, ingest.write_batch_chunks, ingest.bulk_load_min_chunks and ingest.finalize, "
    "each as KEY=VALUE with a plain value. The stores, the embedder, evaluation and every other setting stay as "
    "the server runs them."
)


def request_config(
    overrides: Sequence[str],
    compose: Callable[[Sequence[str]], AgragConfig],
    base: Callable[[], AgragConfig],
    files_root: Path | None,
) -> AgragConfig:
    """The configuration a request's overrides compose to, after ``check_request_overrides``.

    Args:
        overrides: The request's overrides.
        compose: Composes the configuration the request runs with from its overrides.
        base: The configuration without them (what the server runs with).
        files_root: ``AGRAG_FILES_ROOT``; a path in an override must lie inside it.

    Raises:
        RequestOverrideError: an override a request may not give, or one that changes a setting outside the
            allow-list; the message names it and says what a request may set.
        ConfigError: an allowed override that does not compose (an unknown option, a value of the wrong type).
    """
    fixed = check_request_overrides(overrides, files_root)
    config = compose(overrides)
    if fixed:
        before, after = base().model_dump(mode="json"), config.model_dump(mode="json")
        for override in fixed:
            if _at(after, override.key) != _at(before, override.key):
                raise RequestOverrideError(
                    override.text,
                    f"a request may not change {override.key}: it stays as the server runs it. Leave the override "
                    f"out, or stop the process that holds the data dir and start it again with it. {ALLOWED_TEXT}",
                )
    return config


def check_request_overrides(overrides: Sequence[str], files_root: Path | None) -> list[ParsedOverride]:
    """Refuse what a request may never give; return the overrides of settings outside the allow-list.

    Those are allowed only when they change nothing (``request_config`` compares them with the server's values).

    Raises:
        RequestOverrideError: an unreadable override, a prefix, a package, a sweep, a ``${``, a non-finite number,
            a ``hydra`` setting, or a path outside the files root.
    """
    fixed = []
    for text in overrides:
        if "${" in text:
            raise RequestOverrideError(text, _INTERPOLATION)
        override = _parsed(text)
        _check_form(override)
        for leaf in _leaves(override.value):
            _check_leaf(override, leaf)
        if override.key in ALLOWED_GROUPS:
            if not isinstance(override.value, str):
                raise RequestOverrideError(text, f"{override.key} takes the name of one option. {ALLOWED_TEXT}")
        elif override.key in ALLOWED_KEYS:
            for path in _paths(override):
                _check_path(override, path, files_root)
        elif override.key.split(".")[0].split("/")[0] == "hydra":
            raise RequestOverrideError(text, f"Hydra's own settings are never taken from a request. {ALLOWED_TEXT}")
        else:
            fixed.append(override)
    return fixed


_INTERPOLATION = (
    "it holds '${', and a request's values are plain: interpolations and resolvers such as ${oc.env:...} or "
    "${oc.decode:...} are never evaluated for a request. Write the value itself."
)


def _parsed(text: str) -> ParsedOverride:
    try:
        return parse_override(text)
    except ConfigError as exc:
        raise RequestOverrideError(text, f"{exc} {ALLOWED_TEXT}") from exc


def _check_form(override: ParsedOverride) -> None:
    """Only ``KEY=VALUE`` that changes a setting: no prefix, no package, no sweep."""
    if override.kind != OverrideKind.CHANGE:
        raise RequestOverrideError(
            override.text,
            "a request may only change a setting (KEY=VALUE), never add (+, ++) or delete (~) one; to add labels or "
            f"relation types to the ontology, use set_ontology (POST /v1/ontology). {ALLOWED_TEXT}",
        )
    if override.package is not None:
        raise RequestOverrideError(override.text, f"a request may not choose a package (@). {ALLOWED_TEXT}")
    if override.sweep:
        raise RequestOverrideError(
            override.text,
            "sweeps (a,b, choice(), range(), interval(), glob()) are not values; give one value (a list as [a, b]). "
            f"{ALLOWED_TEXT}",
        )


def _leaves(value: Any) -> Iterator[Any]:
    """Every scalar of a value, dict keys included."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _check_leaf(override: ParsedOverride, leaf: Any) -> None:
    if isinstance(leaf, str) and "${" in leaf:  # an escaped form (\${, $\{) that Hydra's grammar unescaped
        raise RequestOverrideError(override.text, _INTERPOLATION)
    if isinstance(leaf, float) and not math.isfinite(leaf):
        raise RequestOverrideError(override.text, "numbers must be finite (not nan or inf).")
    if leaf is not None and not isinstance(leaf, str | int | float | bool):
        raise RequestOverrideError(override.text, f"{type(leaf).__name__} is not a plain value. {ALLOWED_TEXT}")


def _paths(override: ParsedOverride) -> Iterator[Any]:
    """The file paths an allowed override names: ``ingest.extractor.path``, a plan rule's extractor path."""
    if override.key == PATH_KEY:
        yield override.value
    elif override.key == "ingest.plan.rules" and isinstance(override.value, list):
        for rule in override.value:
            options = rule.get("extractor_options") if isinstance(rule, dict) else None
            if isinstance(options, dict) and "path" in options:
                yield options["path"]


def _check_path(override: ParsedOverride, value: Any, files_root: Path | None) -> None:
    """A file a request names must be an absolute path inside the files root, through no hidden folder."""
    if files_root is None:
        raise RequestOverrideError(
            override.text,
            "a request may name a file only inside AGRAG_FILES_ROOT, which this server does not set. Set it, put "
            "the file under it and give its absolute path, or run the command on the server's machine.",
        )
    given, root = Path(str(value)), files_root.expanduser().resolve()
    try:
        resolved = given.resolve() if given.is_absolute() else None
    except (OSError, RuntimeError, ValueError):  # a NUL byte, a symlink loop, a name too long
        resolved = None
    inside = (
        resolved is not None
        and ".." not in given.parts
        and resolved.is_relative_to(root)
        and not any(part.startswith(".") for part in resolved.relative_to(root).parts)
    )
    if not inside:
        raise RequestOverrideError(
            override.text,
            f"a path in a request must be the absolute path of a file inside the files root {str(root)!r} "
            "(AGRAG_FILES_ROOT), through no '..' and no hidden folder.",
        )


def _at(data: Any, key: str) -> Any:
    """The value at a dotted key (or a config group's path) of a dumped configuration; None where there is none."""
    for part in key.replace("/", ".").split("."):
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data
