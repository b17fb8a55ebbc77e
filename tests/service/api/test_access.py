"""Tokens: parsed from the settings in both forms, refused with a message naming the variable, compared safely."""

from pathlib import Path

import pytest

from agrag.components.errors import ConfigError
from agrag.pipelines.settings import AgragSettings
from agrag.service.api.access import AccessPolicy, ApiToken, is_loopback, load_tokens, parse_tokens
from agrag.service.api.errors import AuthenticationError

T1 = "first-token-0123456789"
T2 = "second-token-0123456789"


def test_plain_tokens_by_comma_or_by_line() -> None:
    tokens = parse_tokens(f" {T1} , {T2} ", "AGRAG_API_TOKENS")
    assert [(t.name, t.secret, t.documents) for t in tokens] == [("token-1", T1, None), ("token-2", T2, None)]
    assert [t.secret for t in parse_tokens(f"# ours\n{T1}\n\n{T2}\n", "file")] == [T1, T2]
    assert parse_tokens("  ", "AGRAG_API_TOKENS") == []


def test_json_tokens_with_names_and_documents() -> None:
    text = f'[{{"name": "team", "token": "{T1}", "documents": ["d2", "d1", "d1"]}}, "{T2}"]'
    team, other = parse_tokens(text, "AGRAG_API_TOKENS")
    assert (team.name, team.documents) == ("team", ("d1", "d2"))
    assert (other.name, other.documents) == ("token-2", None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("short-token", "has 11 characters; a token needs at least 16"),
        (f'[{{"token": "{T1}", "documents": []}}]', "non-empty list of document ids"),
        (f'[{{"token": "{T1}", "docs": ["d1"]}}]', "unknown keys ['docs']"),
        (f'[{{"token": "{T1}"', "not valid JSON"),
        (f"{T1},{T1}", "the same token twice"),
        (f'[{{"name": "a", "token": "{T1}"}}, {{"name": "a", "token": "{T2}"}}]', "more than one token 'a'"),
        ('{"token": "x"}', ""),  # not a list: read as one plain token, and too short
    ],
)
def test_bad_tokens_are_refused_naming_the_variable_but_never_the_token(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_tokens(text, "AGRAG_API_TOKENS")
    assert expected in str(raised.value) and "AGRAG_API_TOKENS" in str(raised.value)
    assert T1 not in str(raised.value) and "short-token" not in str(raised.value)


def test_tokens_from_the_variable_and_the_file_together(tmp_path: Path) -> None:
    (tmp_path / "tokens").write_text(f'[{{"name": "team", "token": "{T2}", "documents": ["d1"]}}]')
    settings = AgragSettings(api_tokens=T1, api_token_file=tmp_path / "tokens")  # type: ignore[arg-type]
    assert [t.name for t in load_tokens(settings)] == ["token-1", "team"]
    missing = AgragSettings(api_token_file=tmp_path / "nope")
    with pytest.raises(ConfigError, match=r"AGRAG_API_TOKEN_FILE=.*cannot be read"):
        load_tokens(missing)
    twice = AgragSettings(api_tokens=T2, api_token_file=tmp_path / "tokens")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="the same token twice"):
        load_tokens(twice)


def test_authentication() -> None:
    policy = AccessPolicy([ApiToken("admin", T1), ApiToken("team", T2, ("d1",))], owner_token="owner-0123456789abc")
    assert policy.authenticate(f"Bearer {T1}").unscoped
    team = policy.authenticate(f"bearer  {T2}")
    assert (team.name, team.documents, team.unscoped) == ("team", ("d1",), False)
    assert team.fingerprint != policy.authenticate(f"Bearer {T1}").fingerprint and T2 not in team.fingerprint
    assert policy.authenticate("Bearer owner-0123456789abc").name == "owner"
    for header in (None, "", f"Basic {T1}", "Bearer", f"Bearer {T1}x"):
        with pytest.raises(AuthenticationError) as raised:
            policy.authenticate(header)
        assert T1 not in str(raised.value)
    assert T1 not in repr(policy) and T1 not in repr(ApiToken("admin", T1))


def test_an_open_server_is_loopback_only() -> None:
    open_policy = AccessPolicy([], owner_token="owner-0123456789abc")
    assert open_policy.open and open_policy.authenticate(None).unscoped
    with pytest.raises(AuthenticationError):
        open_policy.authenticate(f"Bearer {T1}")  # a token that is sent must be right, even here
    for host in ("127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"):
        assert is_loopback(host)
        open_policy.check_host(host)
    for host in ("0.0.0.0", "::", "192.168.1.4", "example.org"):
        assert not is_loopback(host)
        with pytest.raises(ConfigError, match="set AGRAG_API_TOKENS"):
            open_policy.check_host(host)
    AccessPolicy([ApiToken("admin", T1)]).check_host("0.0.0.0")
