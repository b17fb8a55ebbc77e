"""The routes made from the tool definitions: search, status, the evidence sessions and their tools.

Each tool becomes one route whose body is the tool's input model and whose response is the tool's output type, so
the OpenAPI page shows the same names, descriptions and limits an MCP client or the agent will see.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Path, Query, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from agrag.service.api.access import Caller
from agrag.service.api.dependencies import ApiState, CurrentCaller, State, api_state, current_caller
from agrag.service.api.errors import ERROR_RESPONSES
from agrag.service.api.sessions import SessionInfo, SessionRequest
from agrag.service.tools.registry import SESSION_TOOLS, TOOLS
from agrag.service.tools.tool import Tool, ToolContext

SessionId = Annotated[str, Path(description="The id POST /v1/sessions returned.", max_length=100)]


class ToolInfo(BaseModel):
    """A tool as ``GET /v1/tools`` lists it, for clients that build their own tool list (MCP, agents)."""

    name: str = Field(..., description="The tool's name.")
    title: str = Field(..., description="A few words for a menu.")
    description: str = Field(..., description="When to use it, what it returns, what it costs.")
    in_session: bool = Field(..., description="True: call it at /v1/sessions/{id}/{name}.")
    input_schema: dict[str, Any] = Field(..., description="The JSON schema of its arguments.")


def _endpoint(tool: Tool[Any, Any], in_session: bool, in_query: bool = False) -> Callable[..., Response]:
    """A sync endpoint (FastAPI runs it in its thread pool) with the tool's input model as its body (or query)."""

    def endpoint(state: ApiState, caller: Caller, arguments: BaseModel | None = None, session_id: str = "") -> Response:
        given: BaseModel | dict[str, Any] = arguments if arguments is not None else {}  # no body: no arguments
        if not in_session:
            return JSONResponse(tool.dump(tool.run(ToolContext(state.host, caller.scope), given)))
        with state.sessions.use(caller, session_id) as session:
            output = tool.run(ToolContext(state.host, caller.scope, session), given)
        return JSONResponse(tool.dump(output))

    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters = [
        inspect.Parameter("state", keyword, annotation=Annotated[ApiState, Depends(api_state)]),
        inspect.Parameter("caller", keyword, annotation=Annotated[Caller, Depends(current_caller)]),
    ]
    if tool.input_model.model_fields:
        body = Annotated[tool.input_model, Query() if in_query else Body()]  # type: ignore[name-defined]
        parameters.append(inspect.Parameter("arguments", keyword, annotation=body))
    if in_session:
        parameters.append(inspect.Parameter("session_id", keyword, annotation=SessionId))
    endpoint.__signature__ = inspect.Signature(parameters, return_annotation=Response)  # type: ignore[attr-defined]
    endpoint.__name__ = f"{tool.name}_endpoint"
    return endpoint


def tool_routes() -> APIRouter:
    """The routes of every tool, and of creating, reading and ending evidence sessions."""
    router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)
    for tool, method, path, tag in (
        (TOOLS["search"], "POST", "/search", "search"),
        (TOOLS["status"], "GET", "/status", "status"),
        (TOOLS["list_documents"], "GET", "/documents", "status"),
        (TOOLS["get_ontology"], "GET", "/ontology", "status"),
    ):
        router.add_api_route(
            path,
            _endpoint(tool, in_session=False, in_query=method == "GET"),
            methods=[method],
            response_model=tool.output_type,
            summary=tool.title,
            description=tool.description,
            tags=[tag],
            operation_id=tool.name,
        )

    @router.post("/sessions", status_code=201, tags=["evidence sessions"], summary="Start an evidence session")
    def create_session(state: State, caller: CurrentCaller, request: SessionRequest) -> SessionInfo:
        """Start an evidence session within the documents your token may read (narrowed to `documents`, if given).

        Ids in `fetched` are read again within that scope, so `check_citations` accepts them as read; a client
        that kept a session file restores its session honestly this way. The session is bound to your token:
        another token gets 404 for its id, as for an unknown one.
        """
        with state.host.runtime.store.reading():
            return state.sessions.create(caller, request.documents, request.fetched)

    @router.get("/sessions/{session_id}", tags=["evidence sessions"], summary="Show an evidence session")
    def read_session(state: State, caller: CurrentCaller, session_id: SessionId) -> SessionInfo:
        """The session's scope and how much evidence it has read."""
        return state.sessions.info(caller, session_id)

    @router.delete("/sessions/{session_id}", status_code=204, tags=["evidence sessions"], summary="End a session")
    def delete_session(state: State, caller: CurrentCaller, session_id: SessionId) -> Response:
        """End the session now (idle sessions end by themselves)."""
        state.sessions.delete(caller, session_id)
        return Response(status_code=204)

    for tool in SESSION_TOOLS.values():
        router.add_api_route(
            f"/sessions/{{session_id}}/{tool.name}",
            _endpoint(tool, in_session=True),
            methods=["POST"],
            response_model=tool.output_type,
            summary=tool.title,
            description=tool.description,
            tags=["evidence sessions"],
            operation_id=tool.name,
        )

    @router.get("/tools", tags=["tools"], summary="List the tools")
    def list_tools(caller: CurrentCaller) -> list[ToolInfo]:
        """Every tool with its description and the JSON schema of its arguments."""
        return [
            ToolInfo(
                name=tool.name,
                title=tool.title,
                description=tool.description,
                in_session=tool.in_session,
                input_schema=tool.input_model.model_json_schema(),
            )
            for tool in TOOLS.values()
        ]

    return router
