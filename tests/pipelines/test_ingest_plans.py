"""``plan_for`` and the validation of ``ingest.plan`` from real Hydra composition."""

from __future__ import annotations

import pytest

from agrag.components.data_models.applied_plan import AppliedPlan
from agrag.components.errors import ConfigError, UnknownConfigChoiceError
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.ingest_plans import glob_matches, plan_for
from agrag.pipelines.plan_models import FinalizePolicy

RULES = (
    'ingest.plan.rules=[{match: "*.csv", chunker: fixed, chunker_options: {size: 300}}, '
    '{match: "reports/**/*.md", extractor: llm, resolution: {fuzzy: {enabled: false}}}]'
)


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.csv", "a.csv", True),
        ("*.csv", "deep/down/a.csv", True),
        ("*.csv", "a.csv.md", False),
        ("reports/**/*.md", "reports/a.md", True),
        ("reports/**/*.md", "reports/q3/x/a.md", True),
        ("reports/**/*.md", "old/reports/a.md", False),
        ("reports/*.md", "reports/q3/a.md", False),
        ("data/?.csv", "data/a.csv", True),
    ],
)
def test_globs_match_posix_paths(pattern: str, path: str, expected: bool) -> None:
    assert glob_matches(pattern, path) is expected


def test_the_first_matching_rule_decides_and_limits_replace_a_choice() -> None:
    ingest = load_config([RULES, "ingest.plan.limits.extractors=[lexical]"]).ingest
    csv = plan_for("data/sites.csv", ingest)
    assert (csv.applied.rule, csv.applied.chunker, csv.ingest.chunker.kind) == (1, "fixed", "fixed")
    assert csv.applied.chunker_options["size"] == 300 and csv.applied.reasons == ()
    report = plan_for("reports/q3/a.md", ingest)
    assert report.ingest.extractor.kind == "lexical" and not report.ingest.resolution.fuzzy.enabled
    assert report.applied.reasons == (
        "extractor llm is not allowed by ingest.plan.limits.extractors (lexical); used lexical",
    )
    plain = plan_for("notes/a.md", ingest)
    assert plain.applied.rule is None and plain.ingest == ingest
    assert AppliedPlan.from_json(report.applied.to_json()) == report.applied


@pytest.mark.parametrize(
    ("override", "error", "words"),
    [
        ('ingest.plan.rules=[{match: "*.csv", chunker: fixd}]', UnknownConfigChoiceError, "fixed, sentence"),
        (
            'ingest.plan.rules=[{match: "*.csv", chunker: fixed, chunker_options: {sise: 3}}]',
            ConfigError,
            "ingest.plan.rules.0.chunker_options.sise: unknown key (valid keys here: overlap, size",
        ),
        ('ingest.plan.rules=[{match: "*.csv", chunkr: fixed}]', ConfigError, "valid keys here: chunker,"),
        ("ingest.plan.limits.extractors=[llm]", ConfigError, "default extractor lexical is not allowed"),
        ("ingest.plan.limits.chunkers=[fixd]", ConfigError, "Valid choices: fixed, sentence, structural"),
        ('ingest.plan.rules=[{match: "*.csv", extractor: triples}]', ConfigError, "extractor_options.path must be"),
        ("ingest.finalize=later", ConfigError, "'on_write' or 'manual'"),
        ("ingest.plan.limits.max_chunks_per_file=true", ConfigError, "max_chunks_per_file"),
    ],
)
def test_a_wrong_plan_is_refused_with_what_is_valid(override: str, error: type[Exception], words: str) -> None:
    with pytest.raises(error) as caught:
        load_config([override])
    assert words in str(caught.value)


def test_finalize_defaults_to_on_write() -> None:
    assert load_config().ingest.finalize is FinalizePolicy.ON_WRITE
    assert load_config(["ingest.finalize=manual"]).ingest.finalize is FinalizePolicy.MANUAL
