"""The one exception tree of agrag.

Every error a user can meet is an ``AgragError``. Each class composes a message that says what was wrong and how
to fix it, because the people who read them write YAML recipes and run the CLI, not Python.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import import_module
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


class ConfigFileError(ConfigError):
    """A YAML file of the configuration (a recipe, say) is not valid YAML or not UTF-8 text."""

    def __init__(self, path: object, line: int | None, problem: str) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        where = f"{path}, line {line}" if line is not None else f"{path}"
        super().__init__(
            f"Cannot read the configuration file {where}: {problem}. Fix the file (YAML, saved as UTF-8) or move it "
            "out of the config folder."
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


class GraphQueryRefusedError(StoreError):
    """A user- or model-written graph query was refused before it ran (a write, an internal table, unbounded work)."""


class GraphQueryTimeoutError(StoreError):
    """A user- or model-written graph query ran past its time limit and was interrupted."""

    def __init__(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms
        super().__init__(
            f"The graph query ran longer than {timeout_ms} ms and was interrupted. Ask for less (add a LIMIT, match "
            "fewer nodes, avoid cross products) or raise the timeout."
        )


class GraphQueryTooLargeError(StoreError):
    """A user- or model-written graph query's result (or its work) is larger than the caps allow; nothing was kept."""

    def __init__(self, what: str, fix: str) -> None:
        self.what = what
        super().__init__(f"The graph query was stopped: {what}. {fix}")


class CorruptedStoreError(StoreError):
    """A store of the data dir is damaged: nothing was changed; the message names the damage and the fix."""

    def __init__(self, data_dir: object, damage: str, fix: str) -> None:
        self.data_dir = data_dir
        self.damage = damage
        super().__init__(f"The data dir {data_dir} is damaged: {damage}. Nothing was changed. {fix}")


class IngestError(AgragError):
    """Ingestion could not go on."""


class IngestInterruptedError(IngestError):
    """An ingestion asked to stop stopped at a safe point (``commits``: its documents committed, of how many)."""

    def __init__(self, reason: str, commits: tuple[int, int] | None = None) -> None:
        self.reason, self.commits = reason, commits
        done = f": {commits[0]:,} of {commits[1]:,} new or changed documents committed" if commits else ""
        super().__init__(
            f"The ingestion stopped at a safe point ({reason}){done}. Everything committed so far stays; start the "
            "same ingestion again and it resumes from its phase markers, redoing only unfinished work."
        )


class DocumentsOfOtherFolderError(IngestError):
    """An ingestion would supersede documents that may have come from another folder, so it wrote nothing.

    Attributes:
        conflicts: ``(source_path, where the stored one came from)`` for each document it would supersede.
    """

    OVERRIDE = "ingest.supersede_other_folders=true"
    NAMED = 5

    def __init__(self, folder: str, conflicts: Iterable[tuple[str, str]]) -> None:
        self.folder = folder
        self.conflicts = tuple(conflicts)
        named = "; ".join(f"{path} ({where})" for path, where in self.conflicts[: self.NAMED])
        more = f"; and {len(self.conflicts) - self.NAMED} more" if len(self.conflicts) > self.NAMED else ""
        super().__init__(
            f"Refusing to ingest {folder}: {len(self.conflicts)} of its files would supersede a stored document that "
            f"may have come from another folder: {named}{more}. Nothing was written. If these files replace those "
            f"documents, ingest again with the override {self.OVERRIDE}; to keep both, ingest this folder into "
            "another data dir (AGRAG_DATA_DIR)."
        )


class EmptyIngestPathError(IngestError):
    """``agrag ingest ""``: an empty folder name, which would otherwise mean the current folder or the files root."""

    def __init__(self) -> None:
        super().__init__(
            "The folder to ingest is empty (''). Name the folder of documents, e.g. `agrag ingest examples/acme_notes`"
            " (write `.` for the current folder, or for the files root when AGRAG_FILES_ROOT is set)."
        )


class FileSelectionError(IngestError):
    """Files chosen for ingestion (paths or globs under the files root) could not be taken; nothing was queued."""


class NoFilesRootError(FileSelectionError):
    """Files were chosen by path, but no files root says which part of the disk may be read."""

    def __init__(self) -> None:
        super().__init__(
            "Ingesting files needs a files root, the only folder whose files may be read: start the server with "
            "--files-root FOLDER (or set AGRAG_FILES_ROOT). Or pass the document's text instead."
        )


class FileOutsideRootError(FileSelectionError):
    """A chosen path leads outside the files root (through '..', an absolute path or a symlink), or is hidden."""

    def __init__(self, path: str, root: object, why: str) -> None:
        self.path, self.why = path, why
        super().__init__(
            f"Refusing to ingest {path!r}: {why}. Only files inside the files root {root} can be ingested; give "
            "paths or globs relative to it, e.g. 'reports/*.md'."
        )


class NoFilesMatchedError(FileSelectionError):
    """A chosen path or glob names no readable file under the files root."""

    def __init__(self, pattern: str, root: object, suffixes: Iterable[str]) -> None:
        self.pattern = pattern
        super().__init__(
            f"{pattern!r} matches no file under the files root {root} that agrag reads ({', '.join(suffixes)}). "
            "Check the path (relative to the files root, '**' for any depth of folders) and call again."
        )


class TooManyFilesError(FileSelectionError):
    """The chosen paths and globs match more files than one call may ingest."""

    def __init__(self, count: int, limit: int) -> None:
        self.count = count
        self.limit = limit
        super().__init__(
            f"The paths match {count} files, more than the {limit} one call may ingest (AGRAG_MAX_FILES_PER_CALL). "
            f"Narrow the globs, split the files over several calls of at most {limit} each, or ingest their folder."
        )


class DocumentNotFoundError(AgragError, LookupError):
    """A document id names no stored document."""

    def __init__(self, document_id: str) -> None:
        self.document_id = document_id
        super().__init__(
            f"No document has the id {document_id!r} in this data dir. Document ids start with 'd'; the `document_id` "
            "of any search result or chunk shows one."
        )


class UnknownDocumentIdError(DocumentNotFoundError):
    """A search filter or an evidence scope names document ids that no stored document has."""

    def __init__(self, document_ids: Iterable[str]) -> None:
        self.document_ids = tuple(document_ids)
        self.document_id = self.document_ids[0] if self.document_ids else ""
        named = ", ".join(repr(i) for i in self.document_ids[:5])
        more = f" and {len(self.document_ids) - 5} more" if len(self.document_ids) > 5 else ""
        noun = "id" if len(self.document_ids) == 1 else "ids"
        AgragError.__init__(
            self,
            f"No stored document has the {noun} {named}{more}, so nothing can be found in it. List the documents and "
            "their ids with `agrag documents` (HTTP: GET /v1/documents); the `document_id` of any search result shows "
            "one too.",
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
        refused = all(reason.startswith("FilterNotHonouredError") for reason in self.failures.values())
        fix = (
            "Drop the filter or pick another recipe." if refused else "Check that `agrag ingest` ran on this data dir."
        )
        super().__init__(f"Every retrieval method failed ({detail}). {fix}")


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


class FilterNotHonouredError(RetrievalError):
    """A search method or step cannot keep to a filter of the search, so it did not run (it never runs unfiltered).

    ``agrag.components.retrievers.filter_support`` declares which methods and steps honour which filters.
    """

    def __init__(self, part: str, search_filter: str, reason: str, honouring: Iterable[str] = ()) -> None:
        self.part = part
        self.search_filter = search_filter
        self.reason = reason
        self.honouring = tuple(honouring)
        instead = f" ({', '.join(self.honouring)} keep to it)" if self.honouring else ""
        super().__init__(
            f"{part} cannot keep to the {search_filter} filter ({reason}), so it did not run. Search without "
            f"{search_filter}, or use a recipe without {part}{instead}."
        )


class QueryTextError(RetrievalError):
    """A query holds characters that are not text: bytes that were not UTF-8 (a shell argument in another encoding)."""

    def __init__(self, query: str, position: int) -> None:
        self.position = position
        try:  # bytes of a shell argument come as surrogate escapes: show them as the bytes they were
            raw = query.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a lone surrogate from JSON
            raw = query.encode("utf-8", "backslashreplace")
        shown = raw.decode("utf-8", "backslashreplace")
        super().__init__(
            f"The query '{shown[:200]}' holds bytes that are not UTF-8 text (at character {position}). Type it "
            "again in a UTF-8 terminal, or convert it (e.g. with iconv) before passing it."
        )


class EvidenceError(AgragError):
    """An evidence id or an evidence call is not valid."""


class AnswerFileError(EvidenceError):
    """The draft answer to check or render could not be read: a missing path, a folder, or not UTF-8 text."""

    def __init__(self, path: object, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(
            f"Cannot read the answer {path}: {problem}. Give a UTF-8 text file with the draft answer, or - to read "
            "it from standard input."
        )


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


class AgentLLMNotConfiguredError(LLMNotConfiguredError):
    """``agrag ask`` needs an LLM with tool calling, and no endpoint is configured; it never falls back silently."""

    def __init__(self) -> None:
        LLMError.__init__(
            self,
            "agrag ask needs an LLM that can call tools, but none is configured. Set AGRAG_LLM_BASE_URL to any "
            "OpenAI-compatible endpoint and AGRAG_LLM_MODEL to a model that supports tool calling, e.g. with Ollama: "
            "`ollama pull qwen2.5:7b`, then `AGRAG_LLM_BASE_URL=http://localhost:11434/v1 AGRAG_LLM_MODEL=qwen2.5:7b "
            'agrag ask "Who owns the Orion Planner?"` (add AGRAG_LLM_API_KEY if the endpoint wants one).',
        )


class AgentLLMError(LLMError):
    """The LLM failed during an agent run (HTTP errors, timeouts or malformed tool calls) after its retries."""


class LLMBudgetError(LLMError, ConfigError):
    """An LLM step would make more calls than ``ingest.max_llm_calls`` allows; nothing was sent."""

    def __init__(self, step: str, estimate: LLMEstimate, limit: int) -> None:
        self.estimate, self.limit = estimate, limit
        cached = f", {estimate.cached} of them already answered in the cache" if estimate.cached else ""
        super().__init__(
            f"{step} would make up to {estimate.calls} LLM calls (about {estimate.prompt_tokens:,} prompt tokens) "
            f"for {estimate.items} chunks{cached}, over ingest.max_llm_calls={limit}. Nothing was sent. To go ahead, "
            f"raise the limit (ingest.max_llm_calls={estimate.calls}), ingest fewer files, or lower "
            "ingest.extractor.gleaning_rounds."
        )


def __getattr__(name: str) -> type[ConfigError]:  # ComponentConfigError's module imports this one: load it on use
    if name == "ComponentConfigError":
        return import_module("agrag.components.component_errors").ComponentConfigError  # type: ignore[no-any-return]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
