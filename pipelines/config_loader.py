"""Compose ``conf/`` with Hydra once, then validate it with the pydantic models.

The only module that imports Hydra or OmegaConf. Every failure becomes a ``ConfigError`` that names the key or the
option and lists what is valid.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, get_args, get_origin

import yaml  # type: ignore[import-untyped]  # PyYAML ships no stubs; only its error class is used
from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import OverrideType
from hydra.errors import HydraException
from omegaconf import OmegaConf, open_dict
from omegaconf.errors import MissingMandatoryValue, OmegaConfBaseException
from pydantic import BaseModel, ValidationError

from agrag.components.errors import ConfigError, ConfigFileError, UnknownConfigChoiceError
from agrag.pipelines.config_models import AgragConfig
from agrag.pipelines.settings import load_agrag_settings

_OVERRIDE_KEY = re.compile(r"Could not override '([^']+)'")
# Hydra keeps one process-wide GlobalHydra: two compositions at once fail ("GlobalHydra is already initialized").
_COMPOSE_LOCK = threading.Lock()
# Composing takes about 60 ms; a server composes for every request that brings overrides. What Hydra reads is the
# overrides and the YAML files, so their text is the key; a file or override with a resolver (${oc.env:...},
# ${now:...}) can change without that text changing, so it is never kept.
_COMPOSED: OrderedDict[tuple[tuple[str, ...], bytes], dict[str, Any]] = OrderedDict()
_COMPOSED_MAX = 128
_RESOLVER = re.compile(rb"\$\{[^}]*:")
_GROUP_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}(/[A-Za-z0-9][A-Za-z0-9_-]{0,63}){0,3}")


class OverrideKind(StrEnum):
    """What an override does to its key: change it, add it (``+``), add or change it (``++``), delete it (``~``)."""

    CHANGE = "change"
    ADD = "add"
    FORCE_ADD = "force_add"
    DELETE = "delete"


_KINDS = {
    OverrideType.CHANGE: OverrideKind.CHANGE,
    OverrideType.ADD: OverrideKind.ADD,
    OverrideType.FORCE_ADD: OverrideKind.FORCE_ADD,
    OverrideType.DEL: OverrideKind.DELETE,
}


@dataclass(frozen=True)
class ParsedOverride:
    """One override as Hydra's own grammar reads it, before anything is composed or resolved.

    Attributes:
        text: The override as given.
        kind: What it does to its key.
        key: The dotted key or the config group (``recipe.limit``, ``ingest/chunker``), without prefix or package.
        package: The ``@package`` it names, if any.
        sweep: True for a sweep (``a,b``, ``choice()``, ``range()``, ``interval()``, ``glob()``).
        value: The value with Hydra's quotes and escapes undone, as OmegaConf would receive it (a string that
            holds ``${`` is an interpolation OmegaConf would resolve).
    """

    text: str
    kind: OverrideKind
    key: str
    package: str | None
    sweep: bool
    value: Any


def parse_override(text: str) -> ParsedOverride:
    """Read one override with Hydra's override grammar, composing and resolving nothing.

    Hydra evaluates the grammar's own functions (``int()``, ``choice()``...) while parsing; none reads a file or
    the environment.

    Raises:
        ConfigError: the text is not an override Hydra can read (the message is Hydra's, on one line).
    """
    try:
        parsed = OverridesParser.create().parse_override(text)
        value = parsed.value()
    except HydraException as exc:
        problem = " ".join(str(exc).split())
        raise ConfigError(f"{text!r} is not an override agrag can read ({problem}). Write KEY=VALUE.") from exc
    return ParsedOverride(
        text, _KINDS[parsed.type], parsed.key_or_group, parsed.package, parsed.is_sweep_override(), value
    )


def packaged_conf_dir() -> Path:
    """The ``conf/`` folder installed with agrag."""
    return Path(next(iter(importlib.import_module("agrag.conf").__path__))).resolve()


def search_dirs(user_dir: Path | None) -> list[Path]:
    """Folders searched for YAML, the user's first; ``./conf`` counts as the user's when it exists."""
    dirs = [packaged_conf_dir()]
    candidate = user_dir if user_dir is not None else Path("conf")
    if candidate.is_dir() and candidate.resolve() not in dirs:
        dirs.insert(0, candidate.resolve())
    return dirs


def available_options(group: str, dirs: Sequence[Path]) -> list[str]:
    """Names of the YAML files of a config group across the search folders."""
    return sorted({p.stem for d in dirs for p in (d / group).glob("*.yaml")})


def _is_group(key: str, dirs: Sequence[Path]) -> bool:
    """Whether ``key`` names a config group (a folder of YAML options such as ``recipe`` or ``ingest/chunker``)."""
    if key.startswith("hydra") or not _GROUP_NAME.fullmatch(key):  # never a path out of conf/, nor a 300-byte name
        return False
    return any((d / key).is_dir() for d in dirs)


def _check_choices(overrides: Sequence[str], dirs: Sequence[Path]) -> None:
    for override in overrides:
        key, sep, value = override.partition("=")
        if sep and _is_group(key, dirs):
            valid = available_options(key, dirs)
            if value not in valid:
                raise UnknownConfigChoiceError(key, value, valid)


def _models_of(annotation: Any) -> list[type[BaseModel]]:
    """The config models a field may hold: the model itself, or each member of a union of models."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    members = [a for arg in get_args(annotation) for a in _models_of(arg)]
    return list(dict.fromkeys(members))


def _valid_keys(loc: Sequence[str | int]) -> list[str]:
    """The keys valid under the dotted path ``loc`` (every choice's keys where a group holds one of several)."""
    models: list[type[BaseModel]] = [AgragConfig]
    for part in map(str, loc):
        if part.isdigit():  # an item of a list of models (ingest.plan.rules.0)
            continue
        fields = [m.model_fields[part] for m in models if part in m.model_fields]
        models = [model for field in fields for model in _models_of(field.annotation)]
        if not models:
            return []
    return sorted({key for model in models for key in model.model_fields})


def _is_map(loc: Sequence[str]) -> bool:
    """Whether the setting at the dotted path ``loc`` is a dict (a map the user may add entries to)."""
    models: list[type[BaseModel]] = [AgragConfig]
    for part in loc[:-1]:
        models = [
            m for model in models if part in model.model_fields for m in _models_of(model.model_fields[part].annotation)
        ]
    annotations = [model.model_fields[loc[-1]].annotation for model in models if loc[-1] in model.model_fields]
    return any(get_origin(a) is dict or a is dict for a in annotations)


def describe_validation_error(exc: ValidationError) -> str:
    """One line per problem: the dotted key, what is wrong, and the valid keys for a misspelled one."""
    lines = []
    for error in exc.errors():
        loc = [str(p) for p in error["loc"]]
        key = ".".join(loc)
        if error["type"] == "extra_forbidden":
            valid = _valid_keys(loc[:-1])
            lines.append(f"{key}: unknown key (valid keys here: {', '.join(valid)})")
        else:
            lines.append(f"{key}: {error['msg']} (got {error.get('input')!r})")
    return "Invalid configuration:\n  " + "\n  ".join(lines)


def _not_a_setting(key: str) -> str:
    """The message for an override of a key that does not exist: the nearest level that exists, and its keys."""
    parts = key.split(".")
    known = parts[:-1]
    while known and not _valid_keys(known):
        known.pop()
    valid = _valid_keys(known)
    where = ".".join(known) or "the top level"
    missing = ".".join(parts[: len(known) + 1])
    if missing != key and parts[len(known)] in valid:  # a map or a plain value, not a section of settings
        if _is_map(parts[: len(known) + 1]):
            return (
                f"{key} is not a setting: the map {missing} has no entry {parts[len(known) + 1]!r}. To add one, "
                f"write the override with a plus: +{key}=..."
            )
        return f"{key} is not a setting: {missing} is a value, not a section. Write {missing}=... instead."
    if missing != key:
        return (
            f"{key} is not a setting: {where} has no key {parts[len(known)]!r} (valid keys under {where}: "
            f"{', '.join(valid)}). Check the spelling of the override."
        )
    return f"{key} is not a setting (valid keys here: {', '.join(valid)}). Check the spelling of the override."


def _undecodable_file(dirs: Sequence[Path], exc: UnicodeDecodeError) -> ConfigError:
    """The YAML file that is not UTF-8 (Hydra's error does not name it), with the line of the first bad byte."""
    for folder in dirs:
        for path in sorted(folder.rglob("*.yaml")):
            data = path.read_bytes()
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as bad:
                line = data[: bad.start].count(b"\n") + 1
                return ConfigFileError(path, line, f"byte 0x{data[bad.start]:02x} is not UTF-8 text ({bad.reason})")
    return ConfigError(f"A YAML file of the configuration is not UTF-8 text ({exc.reason}). Save it as UTF-8.")


def compose_raw(overrides: Sequence[str] = (), user_dir: Path | None = None) -> dict[str, Any]:
    """Compose ``conf/`` with Hydra overrides into a plain dict, before validation."""
    dirs = search_dirs(user_dir)
    _check_choices(overrides, dirs)
    key = _composition_key(overrides, dirs)
    if key is not None:
        with _COMPOSE_LOCK:
            kept = _COMPOSED.get(key)
            if kept is not None:
                _COMPOSED.move_to_end(key)
                return copy.deepcopy(kept)
    data = _compose(overrides, dirs)
    if key is not None:
        with _COMPOSE_LOCK:
            _COMPOSED[key] = copy.deepcopy(data)
            if len(_COMPOSED) > _COMPOSED_MAX:
                _COMPOSED.popitem(last=False)
    return data


def _composition_key(overrides: Sequence[str], dirs: Sequence[Path]) -> tuple[tuple[str, ...], bytes] | None:
    """What a composition depends on: the overrides and the text of every YAML file, or None if it may change."""
    if any("${" in override for override in overrides):
        return None
    digest = hashlib.blake2b(digest_size=20)
    for folder in dirs:
        for path in sorted(folder.rglob("*.yaml")):
            text = path.read_bytes()
            if _RESOLVER.search(text):
                return None
            digest.update(f"{path}\0{len(text)}\0".encode())
            digest.update(text)
    return tuple(overrides), digest.digest()


def _compose(overrides: Sequence[str], dirs: Sequence[Path]) -> dict[str, Any]:
    extra = [f"hydra.searchpath=[{','.join('file://' + str(d) for d in dirs[:-1])}]"] if len(dirs) > 1 else []
    try:
        with _COMPOSE_LOCK, initialize_config_dir(version_base="1.3", config_dir=str(dirs[-1]), job_name="agrag"):
            cfg = compose("config", overrides=[*extra, *overrides], return_hydra_config=True)
        choices = dict(cfg.hydra.runtime.choices)
        with open_dict(cfg):
            del cfg["hydra"]  # Hydra's own node holds interpolations that only resolve inside a Hydra app
        data = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    except HydraException as exc:
        match = _OVERRIDE_KEY.search(str(exc))
        if match:
            raise ConfigError(_not_a_setting(match.group(1))) from exc
        raise ConfigError(f"Could not compose the configuration: {exc}") from exc
    except yaml.YAMLError as exc:  # a YAML file of the config folders does not parse
        mark = getattr(exc, "problem_mark", None)
        problem = str(getattr(exc, "problem", None) or exc).strip()
        path = mark.name if mark is not None else "a YAML file of the configuration"
        raise ConfigFileError(path, mark.line + 1 if mark is not None else None, problem) from exc
    except UnicodeDecodeError as exc:
        raise _undecodable_file(dirs, exc) from exc
    except MissingMandatoryValue as exc:
        key = exc.full_key or "a value marked ???"
        raise ConfigError(
            f"{key} must be set: add the override {key}=... (see its YAML file for what it means)."
        ) from exc
    except OmegaConfBaseException as exc:
        raise ConfigError(f"Could not compose the configuration: {exc}") from exc
    except OSError as exc:  # Hydra reads a bare word as a config file's name: one of 300 characters is ENAMETOOLONG
        raise ConfigError(
            f"Could not compose the configuration: an override names no setting and no file agrag can read "
            f"({exc.strerror}). Write overrides as KEY=VALUE, e.g. recipe.limit=5."
        ) from exc
    assert isinstance(data, dict)
    recipe = data.get("recipe")
    if isinstance(recipe, dict):
        recipe.setdefault("name", choices.get("recipe", "custom"))
    return {str(k): v for k, v in data.items()}


def compose_option(group: str, name: str, user_dir: Path | None = None) -> dict[str, Any]:
    """The settings of option ``name`` of the config group ``group`` (e.g. ``ingest/chunker``, ``fixed``).

    Composed with Hydra from the same folders as the whole configuration (the user's first); a value left ``???``
    stays the string ``"???"`` for the caller to ask for.

    Raises:
        UnknownConfigChoiceError: the group has no such option; the message lists its options.
    """
    dirs = search_dirs(user_dir)
    valid = available_options(group, dirs)
    if name not in valid:
        raise UnknownConfigChoiceError(group, name, valid)
    extra = [f"hydra.searchpath=[{','.join('file://' + str(d) for d in dirs[:-1])}]"] if len(dirs) > 1 else []
    try:
        with _COMPOSE_LOCK, initialize_config_dir(version_base="1.3", config_dir=str(dirs[-1]), job_name="agrag"):
            cfg = compose(f"{group}/{name}", overrides=extra)
        data = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=False)
    except (HydraException, OmegaConfBaseException) as exc:
        raise ConfigError(f"Could not read the option {name} of {group}: {exc}") from exc
    for part in group.split("/"):
        data = data.get(part, {}) if isinstance(data, dict) else {}
    return {str(k): v for k, v in data.items()} if isinstance(data, dict) else {}


def _add_plan_options(data: dict[str, Any], user_dir: Path | None) -> None:
    """Read the settings of every chunker and extractor option ``ingest.plan`` names into ``ingest.plan.options``.

    Limits naming an option that does not exist are refused here too (a misspelled limit would allow nothing).
    """
    plan = data.get("ingest", {}).get("plan") if isinstance(data.get("ingest"), dict) else None
    if not isinstance(plan, dict):
        return
    rules = plan.get("rules") or []
    limits = plan.get("limits") or {}
    options: dict[str, dict[str, Any]] = {}
    for group in ("chunker", "extractor"):
        valid = available_options(f"ingest/{group}", search_dirs(user_dir))
        for name in limits.get(f"{group}s") or () if isinstance(limits, dict) else ():
            if name not in valid:
                raise ConfigError(
                    f"ingest.plan.limits.{group}s names {name!r}, which is no option of ingest/{group}. Valid "
                    f"choices: {', '.join(valid)}."
                )
        names = {str(r[group]) for r in rules if isinstance(r, dict) and isinstance(r.get(group), str)}
        options[group] = {name: compose_option(f"ingest/{group}", name, user_dir) for name in sorted(names)}
    plan["options"] = options


def load_config(overrides: Sequence[str] = (), user_dir: Path | None = None) -> AgragConfig:
    """Compose and validate the configuration.

    Args:
        overrides: Hydra overrides, for example ``["recipe=hybrid", "recipe.limit=5"]``.
        user_dir: A folder of the user's own YAML; by default ``AGRAG_CONFIG_DIR``, else ``./conf`` if it exists.

    Raises:
        ConfigError: an unknown option, a misspelled key, or a value of the wrong type; the message says which.
        UnknownRecipeMethodError: a recipe names a method that does not exist.
    """
    if user_dir is None:
        user_dir = load_agrag_settings().config_dir
        if user_dir is not None and not user_dir.is_dir():
            raise ConfigError(f"AGRAG_CONFIG_DIR={user_dir} is not a folder. Create it or unset the variable.")
    data = compose_raw(overrides, user_dir)
    _add_plan_options(data, user_dir)
    try:
        return AgragConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(exc)) from exc
