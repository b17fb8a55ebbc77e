"""Server-side evidence sessions: scoped by the token, bound to it, ended when idle, bounded in number."""

import pytest

from agrag.components.errors import EvidenceError, UnknownDocumentIdError
from agrag.pipelines.runtime import Runtime
from agrag.service.api.access import Caller
from agrag.service.api.errors import ConflictError
from agrag.service.api.sessions import SessionNotFoundError, SessionStore
from tests.service.api.conftest import SCOPE

ADMIN = Caller("admin", "fp-admin")
TEAM = Caller("team", "fp-team", SCOPE)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_scope_is_the_tokens_documents_narrowed_to_those_asked(served_runtime: Runtime) -> None:
    sessions = SessionStore(served_runtime.evidence_session)
    assert sessions.create(ADMIN, None).scope is None
    assert sessions.create(ADMIN, [SCOPE[1], SCOPE[0]]).scope == tuple(sorted(SCOPE))
    with pytest.raises(UnknownDocumentIdError, match="'d1'"):  # an id the caller names must be a document's
        sessions.create(ADMIN, ["d1", SCOPE[0]])
    assert sessions.create(TEAM, None).scope == tuple(sorted(SCOPE))
    assert sessions.create(TEAM, [SCOPE[0], "dother"]).scope == (SCOPE[0],)
    assert sessions.create(TEAM, ["dother"]).scope == ()


def test_earlier_ids_are_read_again_within_the_scope(served_runtime: Runtime) -> None:
    sessions = SessionStore(served_runtime.evidence_session)
    found = served_runtime.evidence_session().discover("Who wrote the Orion Planner?", limit=10)
    ids = [hit.id for hit in found.hits]
    inside = [i for i in ids if i.split(".")[0] in SCOPE]
    outside = [i for i in ids if i.split(".")[0] not in SCOPE]
    assert outside
    info = sessions.create(TEAM, None, [*inside, *outside])
    assert info.fetched == len(inside) and info.not_restored == tuple(outside)
    with sessions.use(TEAM, info.id) as session:
        assert set(session.fetched) == set(inside)
    with pytest.raises(EvidenceError):
        sessions.create(ADMIN, None, ["not-an-id"])


def test_a_session_is_its_creators_only(served_runtime: Runtime) -> None:
    sessions = SessionStore(served_runtime.evidence_session)
    info = sessions.create(ADMIN, None)
    for call in (
        lambda: sessions.info(TEAM, info.id),
        lambda: sessions.delete(TEAM, info.id),
        lambda: sessions.use(TEAM, info.id).__enter__(),
    ):
        with pytest.raises(SessionNotFoundError):
            call()
    assert sessions.info(ADMIN, info.id).id == info.id
    sessions.delete(ADMIN, info.id)
    with pytest.raises(SessionNotFoundError):
        sessions.info(ADMIN, info.id)


def test_idle_sessions_end_and_each_token_holds_a_bounded_number(served_runtime: Runtime) -> None:
    clock = Clock()
    sessions = SessionStore(served_runtime.evidence_session, idle_minutes=10, per_caller=2, clock=clock)
    first, second = sessions.create(ADMIN, None), sessions.create(ADMIN, None)
    with pytest.raises(ConflictError, match="holds 2 evidence sessions"):
        sessions.create(ADMIN, None)
    sessions.create(TEAM, None)  # another token's sessions do not count
    clock.now += 9 * 60
    with sessions.use(ADMIN, first.id):
        pass  # used: its idle time starts again
    clock.now += 2 * 60
    assert sessions.info(ADMIN, first.id).id == first.id
    with pytest.raises(SessionNotFoundError, match="10 minutes unused"):
        sessions.info(ADMIN, second.id)
    assert len(sessions) == 1
    sessions.create(ADMIN, None)
