"""Derivation with eagerly evaluated annotations (no ``from __future__ import annotations``)."""

import dataclasses
import warnings
from unittest import mock

import pytest

from mantyx_sync._tools import schema as _schema
from mantyx_sync.errors import SchemaWarning
from mantyx_sync.local_tools import define_local_tool, local_tool


@dataclasses.dataclass
class Query:
    text: str
    limit: int | None = None


def test_eager_annotations() -> None:
    @local_tool
    def search(q: Query, page: int = 1) -> str:
        return f"{q.text}:{q.limit}:{page}"

    assert search.parameters["properties"]["q"]["properties"]["limit"] == {
        "type": ["integer", "null"],
        "default": None,
    }
    assert search.invoke({"q": {"text": "x"}, "page": 2}) == "x:None:2"


def test_whole_parameters_schema_degrades_to_object_when_derivation_crashes() -> None:
    with (
        mock.patch.object(_schema.Deriver, "schema", side_effect=RuntimeError("boom")),
        pytest.warns(SchemaWarning, match="Query.*RuntimeError: boom"),
    ):
        tool = define_local_tool(name="q", parameters=Query, execute=lambda q: q)
    assert tool.parameters == {"type": "object"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tool.invoke({"text": "t"}) == Query(text="t")
