"""The spec keywords are declared once (``SpecKeywords``, ``OverrideKeywords``) and
every surface that takes them takes exactly those, documented once (issue 21, item 3)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest

from mantyx_sync import Agent, AgentSpec, Client, Session, Sessions, SpecError
from mantyx_sync.spec import MessageOverrides, OverrideKeywords, SpecKeywords
from mantyx_sync.testing import LocalMantyx, Turn

SPEC = set(SpecKeywords.__annotations__)
OVERRIDES = set(OverrideKeywords.__annotations__)

# Every callable that takes spec keywords, and the declaration it must take.
SURFACES: list[tuple[str, Callable[..., Any], set[str]]] = [
    ("Agent", Agent.__init__, SPEC),
    ("Agent.session", Agent.session, SPEC),
    ("Sessions.create", Sessions.create, SPEC),
    ("AgentSpec.build", AgentSpec.build, SPEC),
    ("AgentSpec.replace", AgentSpec.replace, SPEC),
    ("Session.start", Session.start, OVERRIDES),
    ("Session.run", Session.run, OVERRIDES),
    ("Session.stream", Session.stream, OVERRIDES),
    ("MessageOverrides.build", MessageOverrides.build, OVERRIDES),
]

# The fields of the values the keywords become.
FIELDS = {a.name for a in attrs.fields(AgentSpec)}
MESSAGE_FIELDS = {a.name for a in attrs.fields(MessageOverrides)}


def _spec_keywords(fn: Callable[..., Any]) -> set[str]:
    """The spec keywords ``fn`` accepts, whether named one by one or as ``**Unpack[...]``."""
    taken: set[str] = set()
    for name, param in inspect.signature(fn).parameters.items():
        if param.kind is param.VAR_KEYWORD:
            annotation = str(param.annotation)
            assert annotation.startswith("Unpack["), f"**{name} is untyped: {annotation}"
            declared = {"SpecKeywords": SPEC, "OverrideKeywords": OVERRIDES}
            taken |= declared[annotation[len("Unpack[") : -1]]
        elif name in FIELDS:
            taken.add(name)
    return taken


def test_the_declaration_is_the_spec_values_fields() -> None:
    assert SPEC == FIELDS
    assert OVERRIDES == MESSAGE_FIELDS
    assert OVERRIDES < SPEC


@pytest.mark.parametrize(("label", "fn", "expected"), SURFACES, ids=[s[0] for s in SURFACES])
def test_every_surface_takes_every_spec_keyword(
    label: str, fn: Callable[..., Any], expected: set[str]
) -> None:
    assert _spec_keywords(fn) == expected, label


DOCUMENTED: list[tuple[str, Any, set[str]]] = [
    ("Agent", Agent, SPEC),
    ("Sessions.create", Sessions.create, SPEC),
    ("AgentSpec.build", AgentSpec.build, SPEC),
    ("Session.start", Session.start, OVERRIDES),
    ("SpecKeywords", SpecKeywords, SPEC),
    ("OverrideKeywords", OverrideKeywords, OVERRIDES),
]


@pytest.mark.parametrize(
    ("label", "target", "keywords"), DOCUMENTED, ids=[d[0] for d in DOCUMENTED]
)
def test_help_shows_each_keyword_once(label: str, target: Any, keywords: set[str]) -> None:
    doc = inspect.getdoc(target) or ""
    for keyword in sorted(keywords):
        assert doc.count(f":param {keyword}:") == 1, f"{label}: {keyword}"


@pytest.fixture(scope="module")
def server() -> Iterator[LocalMantyx]:
    with LocalMantyx(model=[Turn("hello")]) as local:
        yield local


@pytest.fixture
def client(server: LocalMantyx) -> Iterator[Client]:
    with server.client() as local:
        yield local


def test_an_unknown_keyword_names_itself_and_the_choices(
    server: LocalMantyx, client: Client
) -> None:
    # A call a type checker cannot see (**a dict) still fails before anything is sent.
    sent = len(server.requests)
    with pytest.raises(SpecError) as info:
        Agent(client, system_prompt="s", **{"modle_id": "m"})
    assert "modle_id" in str(info.value) and "model_id" in str(info.value)
    spec = AgentSpec.build(system_prompt="s")
    with pytest.raises(SpecError, match="modle_id"):
        client.sessions.create(spec, **{"modle_id": "m"})
    assert len(server.requests) == sent


def test_a_message_cannot_change_what_only_the_session_holds(
    server: LocalMantyx, client: Client
) -> None:
    with client.sessions.create(system_prompt="s") as session:
        sent = len(server.requests)
        with pytest.raises(SpecError) as info:
            session.start("hi", **{"model_id": "m"})
        assert "model_id" in str(info.value) and "reasoning_level" in str(info.value)
        assert len(server.requests) == sent


def test_agent_session_overrides_replace_the_agents_spec(
    server: LocalMantyx, client: Client
) -> None:
    agent = Agent(client, system_prompt="s", model_id="platform:cm6abc123", plan=True)
    with agent.session(model_id="provider:cm6def456", supervisor=True) as session:
        stored = server.sessions[session.id].spec
    assert (stored["modelId"], stored["supervisor"], stored["plan"]) == (
        "provider:cm6def456",
        True,
        True,
    )


# A wrong value for each spec keyword, of the right type so the keyword's own rule
# refuses it, and where the message must point.
WRONG: dict[str, tuple[Any, str]] = {
    "system_prompt": ("", "system_prompt: must be a non-empty string"),
    "agent_id": ("", "agent_id: must be a non-empty string"),
    "model_id": ("", "model_id: must be a non-empty string"),
    "name": ("", "name: must be a non-empty string"),
    "fallback_model_id": ("", "fallback_model_id: must be a non-empty string"),
    "budgets": ({"maxToolTurns": 0}, "budgets['maxToolTurns']: must be at least 1"),
    "tools": ([{"kind": "local"}], "tools[0]: is a dict, not a tool"),
    "reasoning_level": ("extreme", "reasoning_level: must be one of"),
    "output_schema": ({"type": "array"}, "output_schema.schema.type: the root must"),
    "loop_detection": (
        {"consecutiveThreshold": 1},
        "loop_detection.consecutive_threshold: must be between 2 and 100",
    ),
    "tool_budgets": ({"recall": -1}, "tool_budgets['recall'].max_calls: must be between"),
    "metadata": ({"bad key!": "v"}, "metadata: key 'bad key!' must be"),
    "supervisor": ({"reasoningTrigger": {"chars": 0}}, "supervisor.reasoning_trigger.chars:"),
    "plan": ({"planOnly": "yes"}, "plan.plan_only:"),
}


def test_every_spec_keyword_has_a_wrong_value_below() -> None:
    assert set(WRONG) == SPEC


@pytest.mark.parametrize("keyword", sorted(SPEC))
def test_a_wrong_value_is_named_by_its_python_keyword(
    server: LocalMantyx, client: Client, keyword: str
) -> None:
    value, expected = WRONG[keyword]
    sent = len(server.requests)
    with pytest.raises(SpecError) as info:
        Agent(client, **{keyword: value})
    message = str(info.value)
    assert message.startswith(expected), message
    assert info.value.path is not None and message.startswith(info.value.path)
    # No wire spelling (``modelId``, ``maxCalls``) outside a key the caller wrote.
    assert not re.search(r"[a-z][A-Z]", re.sub(r"\[[^]]*\]", "", info.value.path))
    assert len(server.requests) == sent


@pytest.mark.parametrize("keyword", sorted(OVERRIDES))
def test_a_wrong_message_override_is_named_by_its_python_keyword(
    server: LocalMantyx, client: Client, keyword: str
) -> None:
    value, expected = WRONG[keyword]
    with client.sessions.create(system_prompt="s") as session:
        sent = len(server.requests)
        with pytest.raises(SpecError, match=f"^{re.escape(expected)}"):
            session.start("hi", **{keyword: value})
        assert len(server.requests) == sent


def test_the_rules_between_keywords_name_them_in_python() -> None:
    with pytest.raises(SpecError, match=r"^fallback_model_id: must differ from model_id$"):
        AgentSpec.build(model_id="m", fallback_model_id="m")
    with pytest.raises(SpecError, match=r"^system_prompt: required unless agent_id is set"):
        AgentSpec.build(model_id="m").check_session()
    with pytest.raises(SpecError, match=r"expected: consecutive_threshold, hard_cutoff_threshold"):
        AgentSpec.build(loop_detection={"consecutive": 3})
