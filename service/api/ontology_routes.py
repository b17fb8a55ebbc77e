"""``POST /v1/ontology``: grow the ontology in force (unscoped tokens only, like the ingestion routes).

``GET /v1/ontology`` is the ``get_ontology`` tool's route (see ``tool_routes``).
"""

from __future__ import annotations

from fastapi import APIRouter

from agrag.components.data_models.ontology_additions import OntologyChange
from agrag.service.api.dependencies import AdminCaller, State
from agrag.service.api.errors import ERROR_RESPONSES
from agrag.service.tools.set_ontology_tool import SET_ONTOLOGY, SetOntologyInput
from agrag.service.tools.tool import ToolContext


def ontology_routes() -> APIRouter:
    """The route that adds labels and relation patterns to the data dir's ontology."""
    router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)

    @router.post(
        "/ontology",
        tags=["ingestion"],
        summary=SET_ONTOLOGY.title,
        description=SET_ONTOLOGY.description,
        operation_id=SET_ONTOLOGY.name,
    )
    def set_ontology(state: State, caller: AdminCaller, request: SetOntologyInput) -> OntologyChange:
        change: OntologyChange = SET_ONTOLOGY.run(ToolContext(state.host, caller.scope), request)
        return change

    return router
