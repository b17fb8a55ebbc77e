"""Errors of the Dask workers a parallel ingestion embeds on (``ingest.parallel``)."""

from __future__ import annotations

from agrag.components.errors import IngestError


class EmbeddingWorkersError(IngestError):
    """The Dask workers of a parallel ingestion could not be started or reached, or could not finish a slice.

    Nothing is lost: every slice embedded before the failure is in the phase journal, and the same ingestion
    started again reads it back.
    """

    def __init__(self, where: str, problem: str, fix: str) -> None:
        self.where = where
        self.problem = problem
        super().__init__(
            f"Embedding on {where} failed: {problem}. The slices embedded so far are kept: start the same ingestion "
            f"again and it resumes from them. {fix}"
        )
