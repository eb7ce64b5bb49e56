"""compile_validator: messages, compile-once caching, and uncompilable schemas."""

from __future__ import annotations

import logging
import threading
import uuid
from typing import Any
from unittest import mock

import fastjsonschema
import pytest

from mantyx_sync._tools import validator as _validator
from mantyx_sync._tools.validator import compile_validator


def fresh_schema(**properties: Any) -> dict[str, Any]:
    # A unique title keeps each test's schema out of the process-wide cache.
    return {
        "type": "object",
        "title": uuid.uuid4().hex,
        "properties": properties,
        "required": sorted(properties),
        "additionalProperties": False,
    }


def test_valid_and_invalid_messages() -> None:
    validate = compile_validator(fresh_schema(path={"type": "string"}, mode={"enum": ["r", "w"]}))
    assert validate({"path": "/tmp/x", "mode": "r"}) is None
    assert validate({"path": 3, "mode": "r"}) == "invalid arguments: data.path must be string"
    assert validate({"path": "p"}) == "invalid arguments: data must contain ['mode'] properties"
    assert validate({"path": "p", "mode": "x"}) == (
        "invalid arguments: data.mode must be one of ['r', 'w']"
    )
    assert validate({"path": "p", "mode": "r", "extra": 1}).startswith(  # type: ignore[union-attr]
        "invalid arguments: data must not contain {'extra'} properties"
    )
    assert validate(None) == "invalid arguments: data must be object"


def test_validation_does_not_fill_defaults_into_the_args() -> None:
    schema = fresh_schema(n={"type": "integer"})
    schema["properties"]["m"] = {"type": "integer", "default": 5}
    args = {"n": 1}
    assert compile_validator(schema)(args) is None
    assert args == {"n": 1}


def test_long_messages_are_shortened() -> None:
    long_enum = [f"value_{i:04d}" for i in range(300)]
    validate = compile_validator(fresh_schema(v={"enum": long_enum}))
    message = validate({"v": "nope"})
    assert message is not None and message.startswith("invalid arguments: data.v must be one of")
    assert len(message) <= 500 and message.endswith("...")


def test_compiles_once_per_distinct_schema() -> None:
    schema = fresh_schema(a={"type": "integer"})
    reordered = dict(reversed(list(schema.items())))
    with mock.patch.object(fastjsonschema, "compile", wraps=fastjsonschema.compile) as compile_spy:
        first = compile_validator(schema)
        second = compile_validator(reordered)
        third = compile_validator(fresh_schema(a={"type": "integer"}))
    assert first is second
    assert third is not first
    assert compile_spy.call_count == 2


def test_concurrent_first_use_compiles_once() -> None:
    schema = fresh_schema(a={"type": "string"})
    threads_n = 8
    barrier = threading.Barrier(threads_n, timeout=5)
    results: list[Any] = []
    lock = threading.Lock()

    def worker() -> None:
        barrier.wait()
        v = compile_validator(schema)
        with lock:
            results.append(v)

    with mock.patch.object(fastjsonschema, "compile", wraps=fastjsonschema.compile) as compile_spy:
        threads = [threading.Thread(target=worker) for _ in range(threads_n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=5)
    assert not any(t.is_alive() for t in threads)
    assert len(results) == threads_n and all(r is results[0] for r in results)
    assert compile_spy.call_count == 1


def test_uncompilable_schema_accepts_everything_and_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    schema = fresh_schema(a={"type": "no-such-type"})
    with caplog.at_level(logging.WARNING, logger="mantyx_sync._tools.validator"):
        validate = compile_validator(schema)
        compile_validator(schema)
    assert validate({"a": 1}) is None
    assert validate("anything") is None
    warnings = [r for r in caplog.records if "cannot compile" in r.getMessage()]
    assert len(warnings) == 1


def test_cache_is_bounded() -> None:
    bound = _validator._compile.cache_info().maxsize
    assert bound is not None
    first = fresh_schema(a={"type": "integer"})
    compiled = compile_validator(first)
    assert compile_validator(first) is compiled
    for _ in range(bound):
        compile_validator(fresh_schema(a={"type": "integer"}))
    assert compile_validator(first) is not compiled  # evicted, compiled again
