"""Per-file plans: which chunker, extractor and resolution settings one file is ingested with, and why.

``plan_for`` is pure: the same path and configuration give the same plan, with no I/O, so the ingest flow, the
re-extraction flow and listings agree on what a file's plan is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, get_args

from pydantic import BaseModel, TypeAdapter, ValidationError

from agrag.components.data_models.applied_plan import AppliedPlan
from agrag.components.errors import ConfigError
from agrag.pipelines.config_models import ChunkerConfig, ExtractorConfig, IngestConfig, ResolutionConfig
from agrag.pipelines.plan_models import CHUNKER_KINDS, EXTRACTOR_KINDS, PlanLimits, PlanRule

_CHUNKER: TypeAdapter[ChunkerConfig] = TypeAdapter(ChunkerConfig)
_EXTRACTOR: TypeAdapter[ExtractorConfig] = TypeAdapter(ExtractorConfig)
FALLBACK_EXTRACTOR = "lexical"
_MODELS: dict[str, type[BaseModel]] = {
    model.model_fields["kind"].default: model
    for union in (ChunkerConfig, ExtractorConfig)
    for model in get_args(get_args(union)[0])
}


@dataclass(frozen=True, slots=True)
class FilePlan:
    """One file's plan: the ingest settings its chunk and extract phases run with, and the record stored with it.

    Attributes:
        ingest: The run's ``IngestConfig`` with this file's chunker, extractor and resolution settings.
        applied: What is stored with the document (rule, strategies, options, reasons).
    """

    ingest: IngestConfig
    applied: AppliedPlan

    @property
    def key(self) -> str:
        """Files with equal keys are chunked and extracted together (same chunker, extractor and resolution)."""
        return "|".join(
            (
                self.ingest.chunker.model_dump_json(),
                self.ingest.extractor.model_dump_json(),
                self.ingest.resolution.model_dump_json(),
            )
        )


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob as a regex: ``**`` spans folders, ``*`` and ``?`` stay inside one name; no ``/``: the name only."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + re.escape(body[1:]) if body[0] in "!^" else re.escape(body)) + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    prefix = "" if "/" in pattern else "(?:.*/)?"
    return re.compile(prefix + "".join(out) + r"\Z")


def glob_matches(pattern: str, source_path: str) -> bool:
    """Whether the glob ``pattern`` matches the POSIX path ``source_path`` (relative to the ingested folder).

    A pattern without ``/`` matches the file name in any folder (``*.csv``); one with ``/`` matches the whole path
    (``reports/**/*.md``: any depth below ``reports``).
    """
    return _glob_regex(pattern).match(source_path) is not None


def _allowed(name: str, kind: str, allowed: tuple[str, ...]) -> bool:
    return not allowed or name in allowed or kind in allowed


def _merge(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in changes.items():
        nested = isinstance(value, dict) and isinstance(merged.get(key), dict)
        merged[key] = _merge(merged[key], value) if nested else value
    return merged


def _option(group: str, name: str, loaded: dict[str, dict[str, Any]], kinds: tuple[str, ...]) -> dict[str, Any]:
    """The settings of option ``name`` of ``ingest/<group>`` as loaded by the config loader, else a built-in kind."""
    if name in loaded:
        return dict(loaded[name])
    if name in kinds:
        return {"kind": name}
    valid = ", ".join(sorted({*kinds, *loaded}))
    raise ConfigError(f"There is no {group} option named {name!r} for ingest.plan.rules. Valid choices: {valid}.")


def _checked(adapter: TypeAdapter[Any], data: dict[str, Any], where: str) -> Any:
    if missing := [k for k, v in data.items() if v == "???"]:
        raise ConfigError(f"{where}.{missing[0]} must be set: add {missing[0]}: ... to {where}.")
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        model = _MODELS.get(str(data.get("kind")))
        valid = sorted(set(model.model_fields) - {"kind"}) if model is not None else []
        raise ConfigError(_problems(exc, where, skip=1, valid=valid)) from None


def _problems(exc: ValidationError, where: str, skip: int = 0, valid: list[str] | None = None) -> str:
    """The errors of settings validated for a rule, each under the rule's key, with the valid keys for a typo."""
    lines = []
    for error in exc.errors():
        loc = [str(p) for p in error["loc"][skip:]]
        key = ".".join([where, *loc])
        if error["type"] == "extra_forbidden":
            lines.append(f"{key}: unknown key" + (f" (valid keys here: {', '.join(valid)})" if valid else ""))
        else:
            lines.append(f"{key}: {error['msg']} (got {error.get('input')!r})")
    return "Invalid configuration:\n  " + "\n  ".join(lines)


def _chunker(rule: PlanRule, ingest: IngestConfig, where: str) -> tuple[str, ChunkerConfig]:
    if rule.chunker is None:
        base = ingest.chunker.model_dump()
        name: str = ingest.chunker.kind
    else:
        name = rule.chunker
        base = _option("chunker", name, ingest.plan.options.get("chunker", {}), CHUNKER_KINDS)
    return name, _checked(_CHUNKER, _merge(base, rule.chunker_options), f"{where}.chunker_options")


def _extractor(rule: PlanRule, ingest: IngestConfig, where: str) -> tuple[str, ExtractorConfig]:
    if rule.extractor is None:
        base = ingest.extractor.model_dump()
        name: str = ingest.extractor.kind
    else:
        name = rule.extractor
        base = _option("extractor", name, ingest.plan.options.get("extractor", {}), EXTRACTOR_KINDS)
    return name, _checked(_EXTRACTOR, _merge(base, rule.extractor_options), f"{where}.extractor_options")


def _resolution(rule: PlanRule, ingest: IngestConfig, where: str) -> ResolutionConfig:
    if not rule.resolution:
        return ingest.resolution
    try:
        return ResolutionConfig.model_validate(_merge(ingest.resolution.model_dump(), rule.resolution))
    except ValidationError as exc:
        raise ConfigError(_problems(exc, f"{where}.resolution")) from None


def check_plan(ingest: IngestConfig) -> None:
    """Check every rule's settings and that the run's defaults are within the limits.

    Raises:
        ConfigError: a rule names an unknown option or a wrong setting, or the default chunker or extractor is not
            allowed by ``ingest.plan.limits`` (every file no rule matches would use it).
    """
    limits = ingest.plan.limits
    if not _allowed(ingest.chunker.kind, ingest.chunker.kind, limits.chunkers):
        raise ConfigError(
            f"The default chunker {ingest.chunker.kind} is not allowed by ingest.plan.limits.chunkers "
            f"({', '.join(limits.chunkers)}): every file no rule matches would use it. Pick an allowed ingest/chunker "
            "or add it to the limits."
        )
    if not _allowed(ingest.extractor.kind, ingest.extractor.kind, limits.extractors):
        raise ConfigError(
            f"The default extractor {ingest.extractor.kind} is not allowed by ingest.plan.limits.extractors "
            f"({', '.join(limits.extractors)}): every file no rule matches would use it. Pick an allowed "
            "ingest/extractor or add it to the limits."
        )
    for index, rule in enumerate(ingest.plan.rules):
        where = f"ingest.plan.rules.{index}"
        _chunker(rule, ingest, where)
        _extractor(rule, ingest, where)
        _resolution(rule, ingest, where)


def _limited(kind_of: str, name: str, kind: str, allowed: tuple[str, ...], default: str) -> str | None:
    if _allowed(name, kind, allowed):
        return None
    return f"{kind_of} {name} is not allowed by ingest.plan.limits.{kind_of}s ({', '.join(allowed)}); used {default}"


def plan_for(source_path: str, ingest: IngestConfig) -> FilePlan:
    """The plan of the file at ``source_path`` (POSIX, relative to the ingested folder) under ``ingest``.

    The first rule of ``ingest.plan.rules`` whose glob matches decides; keys the rule leaves out keep the run's
    defaults. A chunker or extractor the limits (``ingest.plan.limits``) do not allow is replaced by the run's
    default, and the reason is recorded (``applied.reasons``). No rule matching gives the run's defaults. Pure: no
    I/O, the same arguments give the same plan. The per-file cost limits (chunks, LLM calls) need the file's chunks
    and are applied by the ingest flow after chunking.

    Args:
        source_path: The file's path relative to the folder it is ingested from, e.g. ``reports/q3.md``.
        ingest: The run's validated ingest settings (rules checked when it loaded).

    Returns:
        The derived ``IngestConfig`` the file's chunk and extract phases use, and the ``AppliedPlan`` to store.
    """
    limits: PlanLimits = ingest.plan.limits
    found = next(((i, r) for i, r in enumerate(ingest.plan.rules) if glob_matches(r.match, source_path)), None)
    if found is None:
        return FilePlan(ingest, _applied(None, ingest, (ingest.chunker.kind, ingest.extractor.kind), {}, ()))
    index, rule = found
    where = f"ingest.plan.rules.{index}"
    reasons: list[str] = []
    chunker_name, chunker = _chunker(rule, ingest, where)
    why = _limited("chunker", chunker_name, chunker.kind, limits.chunkers, ingest.chunker.kind)
    if why:
        reasons.append(why)
        chunker_name, chunker = ingest.chunker.kind, ingest.chunker
    extractor_name, extractor = _extractor(rule, ingest, where)
    why = _limited("extractor", extractor_name, extractor.kind, limits.extractors, ingest.extractor.kind)
    if why:
        reasons.append(why)
        extractor_name, extractor = ingest.extractor.kind, ingest.extractor
    derived = ingest.model_copy(
        update={"chunker": chunker, "extractor": extractor, "resolution": _resolution(rule, ingest, where)}
    )
    applied = _applied(
        index + 1, derived, (chunker_name, extractor_name), rule.resolution, tuple(reasons), match=rule.match
    )
    return FilePlan(derived, applied)


def _applied(
    rule: int | None,
    ingest: IngestConfig,
    names: tuple[str, str],
    resolution: dict[str, Any],
    reasons: tuple[str, ...],
    *,
    match: str = "",
) -> AppliedPlan:
    chunker, extractor = names
    return AppliedPlan(
        rule=rule,
        match=match,
        chunker=chunker,
        chunker_options=ingest.chunker.model_dump(mode="json"),
        extractor=extractor,
        extractor_options=ingest.extractor.model_dump(mode="json"),
        resolution=dict(resolution),
        reasons=reasons,
    )


def with_reason(plan: FilePlan, reason: str, **changes: Any) -> FilePlan:
    """``plan`` with one more reason and, optionally, other ingest settings (``extractor=...``)."""
    ingest = plan.ingest.model_copy(update=changes) if changes else plan.ingest
    applied = plan.applied
    extractor = changes.get("extractor")
    replaced = AppliedPlan(
        rule=applied.rule,
        match=applied.match,
        chunker=applied.chunker,
        chunker_options=applied.chunker_options,
        extractor=extractor.kind if extractor is not None else applied.extractor,
        extractor_options=ingest.extractor.model_dump(mode="json"),
        resolution=applied.resolution,
        reasons=(*applied.reasons, reason),
    )
    return FilePlan(ingest, replaced)


def planned_extractors(ingest: IngestConfig) -> list[ExtractorConfig]:
    """The extractors the rules choose, as the limits leave them (for checks made before a run, e.g. LLM needs)."""
    out = []
    for index, rule in enumerate(ingest.plan.rules):
        name, extractor = _extractor(rule, ingest, f"ingest.plan.rules.{index}")
        if _allowed(name, extractor.kind, ingest.plan.limits.extractors):
            out.append(extractor)
    return out
