"""``kind: "local"`` tools: functions that run in this process.

Build one with :func:`define_local_tool` (explicit JSON Schema or a model
class) or the :func:`local_tool` decorator (schema from the signature and
docstring). The engine validates each call's arguments with
:meth:`LocalTool.validate_args` and, when they pass, runs
:meth:`LocalTool.invoke` on a pool thread.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Union, overload

import attrs

from ._base.argcheck import checked, checked_init
from ._base.limits import TOOL_NAME_RE
from ._base.types import ParamSpec, TypeVar
from ._tools.object_schema import object_schema, parameters_schema
from ._tools.validator import compile_validator
from .errors import ArgumentTypeError, SpecError

__all__ = ["LocalTool", "define_local_tool", "local_tool"]

SchemaSource = Union[Mapping[str, Any], type[Any]]  # noqa: UP007 - a runtime alias (3.10)
"""What a tool's ``parameters`` / ``output_schema`` is given as: an object JSON
Schema dict, or a class to derive it from (attrs, dataclass, ``TypedDict``,
pydantic model)."""

P = ParamSpec("P", default=...)
R = TypeVar("R", covariant=True, default=Any)


def _check_name(_: Any, __: attrs.Attribute[str], value: object) -> None:
    if not isinstance(value, str) or not TOOL_NAME_RE.match(value):
        shown = repr(value) if isinstance(value, str) else f"a {type(value).__name__}"
        raise (SpecError if isinstance(value, str) else ArgumentTypeError)(
            f"local tool name {shown} is invalid: it must be 1-64 ASCII letters, digits or "
            "underscores (^[a-zA-Z0-9_]{1,64}$)"
        )


def _check_execute(instance: LocalTool, _: attrs.Attribute[Any], value: Any) -> None:
    if not callable(value):
        raise ArgumentTypeError(
            f"local tool {instance.name!r}: execute must be a callable (a function taking "
            f"the arguments), got {type(value).__name__}"
        )
    if inspect.isasyncgenfunction(value):
        raise SpecError(
            f"local tool {instance.name!r}: execute is an async generator, but a call has "
            "one answer: make it an `async def` that returns the items (e.g. as a list)"
        )


def _check_timeout(instance: LocalTool, _: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        kind: type[SpecError] = ArgumentTypeError
    elif math.isfinite(value) and value > 0:
        return
    else:
        kind = SpecError
    raise kind(
        f"local tool {instance.name!r}: timeout must be a number of seconds > 0 "
        f"(or None for the client default), got {value!r}"
    )


def _output_schema(value: Any) -> dict[str, Any] | None:
    return None if value is None else object_schema(value, what="output_schema")


class _HandlerOf:
    """``tool.__wrapped__``: the handler, so :func:`inspect.signature` and friends
    see the original function. The class itself has none, so ``inspect.getsource``
    (and IPython's ``LocalTool??``) reads the class rather than following it."""

    def __get__(self, tool: Any, owner: Any = None) -> Any:
        if tool is None:
            raise AttributeError("__wrapped__")
        return tool.execute


@checked_init(ArgumentTypeError, defer=("name", "execute", "timeout"))
@attrs.frozen(kw_only=True)
class LocalTool(Generic[P, R]):
    """A tool that runs in this process (kind ``"local"``).

    Immutable and thread-safe: :meth:`validate_args` and :meth:`invoke` may run on
    several pool threads at once (the handler itself must be thread-safe too).
    A tool made by :func:`local_tool` stays callable like the original function,
    and a type checker sees its signature: ``LocalTool[P, R]`` is called with
    the parameters ``P`` and returns ``R`` (a bare ``LocalTool`` is
    ``LocalTool[..., Any]``).

    Usage::

        @local_tool
        def add(a: int, b: int) -> int:
            '''Add two integers.'''
            return a + b

        add(1, 2)              # 3: still a plain function
        add.to_wire()          # {"kind": "local", "name": "add", ...}

    :ivar name: the model-facing name, ``^[a-zA-Z0-9_]{1,64}$``.
    :ivar description: what the tool does; the model reads it to decide when to call.
    :ivar parameters: the wire JSON Schema (an object schema) of the arguments.
    :ivar execute: the handler; an ``async def`` handler is run to completion in an
        event loop of its own on the worker thread that answers the call.
    :ivar output_schema: JSON Schema of a structured return value, if declared.
    :ivar long_running: ask MANTYX to tell the model not to call again while pending.
    :ivar read_only: the tool has no side effects (``readOnly``): MANTYX may have
        several of its calls outstanding in one turn; each is answered exactly once.
    :ivar retain: MANTYX keeps the (text) result and replays it on later session
        turns (``retain``; about 8 KB kept).
    :ivar timeout: seconds the handler may run; None means the client-wide default.

    .. versionadded:: 0.1
    """

    kind: ClassVar[str] = "local"
    name: str = attrs.field(validator=_check_name)
    description: str | None = None
    # Dicts cannot be hashed; leaving them out of the hash keeps it consistent with eq.
    parameters: dict[str, Any] = attrs.field(
        factory=lambda: {"type": "object", "properties": {}}, converter=object_schema, hash=False
    )
    execute: Callable[P, R] = attrs.field(validator=_check_execute)
    output_schema: dict[str, Any] | None = attrs.field(
        default=None, converter=_output_schema, hash=False
    )
    long_running: bool = False
    read_only: bool = False
    retain: bool = False
    timeout: float | None = attrs.field(default=None, validator=_check_timeout)
    _invoke: Callable[[Mapping[str, Any]], Any] | None = attrs.field(
        default=None, repr=False, eq=False, alias="invoke"
    )
    _validator: Callable[[Any], str | None] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        # Compiling at definition time surfaces schema problems (logged) early.
        object.__setattr__(self, "_validator", compile_validator(self.parameters))

    def to_wire(self) -> dict[str, Any]:
        """The ``tools[]`` entry: ``kind``, ``name``, and the optional fields when set."""
        out: dict[str, Any] = {"kind": self.kind, "name": self.name}
        if self.description is not None:
            out["description"] = self.description
        out["parameters"] = object_schema(self.parameters)
        if self.output_schema is not None:
            out["outputSchema"] = object_schema(self.output_schema, what="output_schema")
        if self.long_running:
            out["longRunning"] = True
        if self.read_only:
            out["readOnly"] = True
        if self.retain:
            out["retain"] = True
        return out

    def validate_args(self, args: Any) -> str | None:
        """Check tool-call arguments against :attr:`parameters`.

        :param args: the ``args`` of a ``local_tool_call``.
        :returns: None when valid, else a short message to send to the model as the
            tool error (e.g. ``"invalid arguments: data.path must be string"``).
        """
        return self._validator(args)

    def invoke(self, args: Mapping[str, Any]) -> Any:
        """Run the handler with validated ``args``; its exceptions propagate unchanged.

        An ``async def`` handler (or one that returns a coroutine) is run to
        completion here, in an event loop of its own on the calling thread.

        :param args: the validated arguments.
        :returns: the handler's return value, not encoded.
        :raises ToolError: the arguments could not be converted to the declared types.
        """
        execute: Callable[..., Any] = self.execute  # given the args dict: see define_local_tool
        value = execute(dict(args)) if self._invoke is None else self._invoke(args)
        if inspect.iscoroutine(value):
            # asyncio costs a plain script ~15 ms to import: loaded by the first async handler.
            import asyncio

            return asyncio.run(value)
        return value

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Call :attr:`execute` directly, as if the tool were the original function."""
        return self.execute(*args, **kwargs)

    if TYPE_CHECKING:

        @property
        def __wrapped__(self) -> Callable[P, R]:
            """The handler, so :func:`inspect.signature` and friends see the original function."""
            return self.execute

    else:
        __wrapped__ = _HandlerOf()


@checked(ArgumentTypeError, defer=("name", "execute", "timeout"))
def define_local_tool(
    *,
    name: str,
    description: str | None = None,
    parameters: SchemaSource | None = None,
    execute: Callable[[Any], R],
    output_schema: SchemaSource | None = None,
    long_running: bool = False,
    read_only: bool = False,
    retain: bool = False,
    timeout: float | None = None,
) -> LocalTool[[Any], R]:
    """Define a local tool from an explicit schema (or model class) and a handler.

    ``execute`` receives one argument: the args dict when ``parameters`` is
    None or a JSON Schema dict; an instance when it is an attrs class,
    dataclass, ``TypedDict`` or pydantic model class.

    Usage::

        read_file = define_local_tool(
            name="read_file",
            description="Read a UTF-8 file.",
            parameters={"type": "object", "properties": {"path": {"type": "string"}},
                        "required": ["path"]},
            execute=lambda args: open(args["path"]).read(),
        )

    :param name: the model-facing name, ``^[a-zA-Z0-9_]{1,64}$``.
    :param description: what the tool does.
    :param parameters: None, an object JSON Schema dict, or a model class.
    :param execute: the handler (``async def`` too; not an async generator).
    :param output_schema: an object JSON Schema dict or a model class for the return value.
    :param long_running: add MANTYX's "do not call again while pending" hint.
    :param read_only: no side effects: several calls may be outstanding at once
        (sent as ``readOnly``).
    :param retain: keep the result for later session turns (sent as ``retain``).
    :param timeout: seconds the handler may run (> 0); None for the client default.
    :returns: the :class:`LocalTool`.
    :raises SpecError: a bad name, schema or timeout, or a handler that is not callable
        or is an async generator.
    """
    schema, structure = parameters_schema(parameters)

    def invoke(args: Mapping[str, Any]) -> Any:
        return execute(structure(args))

    return LocalTool(
        name=name,
        description=description,
        parameters=schema,
        execute=execute,
        output_schema=output_schema,
        long_running=long_running,
        read_only=read_only,
        retain=retain,
        timeout=timeout,
        invoke=invoke,
    )


@overload
def local_tool(fn: Callable[P, R], /) -> LocalTool[P, R]: ...


@overload
def local_tool(
    fn: None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    output_schema: SchemaSource | None = None,
    long_running: bool = False,
    read_only: bool = False,
    retain: bool = False,
    timeout: float | None = None,
) -> Callable[[Callable[P, R]], LocalTool[P, R]]: ...


@checked(ArgumentTypeError)
def local_tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    output_schema: SchemaSource | None = None,
    long_running: bool = False,
    read_only: bool = False,
    retain: bool = False,
    timeout: float | None = None,
) -> LocalTool[..., Any] | Callable[[Callable[..., Any]], LocalTool[..., Any]]:
    """Turn a function into a :class:`LocalTool`; use as ``@local_tool`` or ``@local_tool(...)``.

    The name defaults to the function's name, the description to its docstring
    summary, and the parameter schema is derived from its annotations, defaults
    and docstring (Google, NumPy or reST ``:param:``). Arguments are converted to
    the annotated types (attrs classes, dataclasses, enums, tuples, sets...)
    before the call; the decorated object remains callable as before. An
    ``async def`` function works too: each call runs it to completion in an
    event loop of its own (an async generator is refused: a call has one answer).
    A type checker keeps the function's signature: ``add(1, "2")`` is flagged
    as it would be without the decorator.

    Usage::

        @local_tool(timeout=30)
        def search(query: str, limit: int = 10) -> str:
            '''Search the wiki.

            :param query: words to look for.
            :param limit: at most this many hits.
            '''

    :param fn: the function (when used without parentheses).
    :param name: the tool name, instead of ``fn.__name__``.
    :param description: the description, instead of the docstring summary.
    :param output_schema: an object JSON Schema dict or a model class for the return value.
    :param long_running: add MANTYX's "do not call again while pending" hint.
    :param read_only: no side effects: several calls may be outstanding at once
        (sent as ``readOnly``).
    :param retain: keep the result for later session turns (sent as ``retain``).
    :param timeout: seconds the handler may run (> 0); None for the client default.
    :returns: the tool, or a decorator that makes one.
    :raises SpecError: the function cannot be a tool (bad name, ``*args``, ...).
    """

    def decorate(target: Any) -> LocalTool[..., Any]:
        if isinstance(target, LocalTool):
            raise SpecError(f"{target.name!r} is already a LocalTool; use it directly")
        if not callable(target) or isinstance(target, type):
            raise SpecError(f"@local_tool needs a function, got {type(target).__name__}")
        # Deriving a schema from a signature is only needed here, not for a tool
        # given as JSON Schema: imported on first use.
        from ._tools.signature import function_schema

        spec = function_schema(target, name=name, description=description)
        return LocalTool(
            name=spec.name,
            description=spec.description,
            parameters=spec.parameters,
            execute=target,
            output_schema=output_schema,
            long_running=long_running,
            read_only=read_only,
            retain=retain,
            timeout=timeout,
            invoke=spec.bind,
        )

    if fn is None:
        return decorate
    return decorate(fn)


def as_local_tool(obj: Any) -> LocalTool[..., Any]:
    """A :class:`LocalTool` as is, or one made from a function or bound method."""
    if isinstance(obj, LocalTool):
        return obj
    if callable(obj) and not isinstance(obj, type) and hasattr(obj, "__name__"):
        tool: LocalTool[..., Any] = local_tool(obj)
        return tool
    raise SpecError(
        f"expected a LocalTool or a function, got {type(obj).__name__}; wrap it with "
        "define_local_tool(...) or @local_tool"
    )
