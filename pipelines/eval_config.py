"""The config model of ``agrag eval`` (``conf/evaluation``): what it scores and how."""

from __future__ import annotations

from pydantic import Field, field_validator

from agrag.components.data_models.evidence import EvidenceSearchMode
from agrag.pipelines.strict_model import StrictModel


class EvalConfig(StrictModel):
    """What ``agrag eval`` runs and how it scores."""

    recipes: tuple[str, ...] = Field(
        ("all",), min_length=1, description="Recipes (conf/recipe names) to score; 'all' names every recipe."
    )
    ks: tuple[int, ...] = Field((2, 5, 10), min_length=1, description="The k of each Recall@k column.")
    result_limit: int = Field(
        30, ge=1, le=1000, description="Each recipe's limit during eval, so the passage list reaches the largest k."
    )
    llm_triples: bool = Field(
        False, description="Also score the recipes on a graph built from the dataset's precomputed LLM triples."
    )
    search_modes: tuple[EvidenceSearchMode, ...] = Field(
        tuple(EvidenceSearchMode),
        description="Modes of the search_evidence tool (the agent's first search) scored next to the recipes, each "
        "as the row 'search_evidence (mode)'; [] scores none.",
    )
    answers: bool = Field(
        False,
        description="Also run the built-in agent on every question and score its answers (exact match, F1, "
        "citations that check, gold passages cited, tool calls and tokens). Needs AGRAG_LLM_BASE_URL.",
    )
    max_questions: int | None = Field(None, ge=1, description="Score only the first N questions (a quick check).")
    bootstrap_samples: int = Field(1000, ge=100, description="Resamples of the paired bootstrap.")
    seed: int = Field(0, description="Seed of the bootstrap.")

    @field_validator("ks")
    @classmethod
    def _positive_ks(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if any(k < 1 for k in value):
            raise ValueError("every k must be at least 1")
        return tuple(sorted(set(value)))
