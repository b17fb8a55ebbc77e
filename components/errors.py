"""The one exception tree of agrag.

Every error a user can meet is an ``AgragError``. Each class composes a message that says what was wrong and how
to fix it, because the people who read them write YAML recipes and run the CLI, not Python.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agrag.components.data_models.llm_estimate import LLMEstimate


class AgragError(Exception):
    """Root of every error agrag raises on purpose."""


class ConfigError(AgragError):
    """The configuration (Hydra overrides, a YAML file, an environment variable) is not valid."""


class UnknownConfigChoiceError(ConfigError):
    """A config group option (for example ``recipe=...``) names a file that does not exist."""

    def __init__(self, group: str, choice: str, valid: Iterable[str]) -> None:
        self.group = group
        self.choice = choice
        self.valid = sorted(valid)
        super().__init__(
            f"There is no {group} named {choice!r}. Valid choices: {', '.join(self.valid) or '(none)'}. "
            f"Pick one of them ({group}={self.valid[0] if self.valid else '...'}) or add conf/{group}/{choice}.yaml."
        )


class StoreError(AgragError):
    """A graph or vector store failed; the message names the store and the path or URL."""


class StoreLockedError(StoreError):
    """Another process holds the embedded store for writing."""


class NothingIngestedError(StoreError):
    """A command that reads the data dir found nothing ingested there."""

    def __init__(self, data_dir: object) -> None:
        self.data_dir = data_dir
        super().__init__(
            f"Nothing has been ingested into {data_dir} yet. Run `agrag ingest FOLDER` first "
            "(or set AGRAG_DATA_DIR to the data dir you ingested into)."
        )


class IngestError(AgragError):
    """Ingestion could not go on."""


class IngestInterruptedError(IngestError):
    """An ingestion run was asked to stop (cancelled, or the server shutting down) and stopped at a safe point."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(
            f"The ingestion stopped at a safe point ({reason}). Everything committed so far stays; start the same "
            "ingestion again and it resumes from its phase markers, redoing only unfinished work."
        )


class DocumentNotFoundError(AgragError, LookupError):
    """A document id names no stored document."""

    def __init__(self, document_id: str) -> None:
        self.document_id = document_id
        super().__init__(
            f"No document has the id {document_id!r} in this data dir. Document ids start with 'd'; the `document_id` "
            "of any search result or chunk shows one."
        )


class RunNotFoundError(AgragError, LookupError):
    """A run id names no ingestion or delete run of this data dir."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        super().__init__(
            f"No ingestion or delete run has the id {run_id!r} in this data dir. `GET /v1/ingestions` lists the runs "
            "with their ids, newest first."
        )


class MergeNotFoundError(AgragError, LookupError):
    """An undo names no active merge of the merge log."""

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(
            f"No active merge has the log id or member entity id {key!r}. Run `agrag merges list` to see the merge "
            "log (undone merges are marked)."
        )


class EmbeddingError(AgragError):
    """The embedding model could not be loaded or could not embed."""


class RetrievalError(AgragError):
    """A search could not run."""


class UnknownRecipeMethodError(RetrievalError, ConfigError):
    """A recipe names a method that does not exist."""

    def __init__(self, method: str, valid: Iterable[str], recipe: str | None = None) -> None:
        self.method = method
        self.valid = sorted(valid)
        where = f" in recipe {recipe!r}" if recipe else ""
        super().__init__(
            f"Unknown retrieval method {method!r}{where}. Valid methods: {', '.join(self.valid)}. "
            "Fix the `methods:` list of the recipe."
        )


class AllRetrievalMethodsFailedError(RetrievalError):
    """Every method of a recipe failed, so there is no result to return."""

    def __init__(self, failures: dict[str, str]) -> None:
        self.failures = dict(failures)
        detail = "; ".join(f"{method}: {reason}" for method, reason in sorted(self.failures.items()))
        super().__init__(f"Every retrieval method failed ({detail}). Check that `agrag ingest` ran on this data dir.")


class Text2CypherError(RetrievalError):
    """The text2cypher method got no query that runs from the LLM, even after one repair."""

    def __init__(self, question: str, query: str, reason: str) -> None:
        self.question = question
        self.query = query
        self.reason = reason
        super().__init__(
            f"text2cypher could not answer {question!r}: the LLM's query failed twice ({reason}). Last query: "
            f"{query[:300]!r}. Use a model that writes Cypher (AGRAG_LLM_MODEL), or a recipe without text2cypher."
        )


class EvidenceError(AgragError):
    """An evidence id or an evidence call is not valid."""


class EvaluationError(AgragError):
    """An evaluation dataset is missing or malformed."""


class LLMError(AgragError):
    """The LLM endpoint failed, timed out or answered something that is not the JSON asked for."""


class LLMNotConfiguredError(LLMError, ConfigError):
    """A step needs an LLM, but no endpoint is configured."""

    def __init__(self, step: str) -> None:
        super().__init__(
            f"{step} needs an LLM, but none is configured. Set AGRAG_LLM_BASE_URL (any OpenAI-compatible endpoint, "
            "e.g. http://localhost:11434/v1) and AGRAG_LLM_MODEL, plus AGRAG_LLM_API_KEY if the endpoint wants one; "
            "or pick an offline option."
        )


class LLMBudgetError(LLMError, ConfigError):
    """An LLM step would make more calls than ``ingest.max_llm_calls`` allows; nothing was sent."""

    def __init__(self, step: str, estimate: LLMEstimate, limit: int) -> None:
        self.estimate = estimate
        self.limit = limit
        cached = f", {estimate.cached} of them already answered in the cache" if estimate.cached else ""
        super().__init__(
            f"{step} would make up to {estimate.calls} LLM calls (about {estimate.prompt_tokens:,} prompt tokens) "
            f"for {estimate.items} chunks{cached}, over ingest.max_llm_calls={limit}. Nothing was sent. To go ahead, "
            f"raise the limit (ingest.max_llm_calls={estimate.calls}), ingest fewer files, or lower "
            "ingest.extractor.gleaning_rounds."
        )
