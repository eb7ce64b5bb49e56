"""Turning ``--tool module:function``, ``--mcp CMD`` and ``--mcp-url URL`` into tools."""

from __future__ import annotations

import importlib
import os
import re
import shlex
import sys
from collections.abc import Sequence
from typing import Any

from ..mcp import define_local_mcp
from ._exit import UsageError

__all__ = ["import_target", "load_tools"]

_SPEC = re.compile(r"^(?P<module>[\w.]+):(?P<attr>[\w.]+)$")


def import_target(spec: str, option: str, example: str) -> Any:
    """What ``module:attr`` names, found as ``python -m`` would (the current directory too).

    :raises UsageError: naming ``option``; ``example`` shows the form ``spec`` must take.
    """
    match = _SPEC.match(spec)
    if match is None:
        raise UsageError(f"{option} {spec!r}: expected {example}")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        target: Any = importlib.import_module(match["module"])
    except ImportError as exc:
        raise UsageError(f"{option} {spec!r}: cannot import {match['module']!r} ({exc})") from exc
    for part in match["attr"].split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise UsageError(
                f"{option} {spec!r}: module {match['module']!r} has no {match['attr']!r}"
            ) from None
    return target


def _import_function(spec: str) -> Any:
    target = import_target(spec, "--tool", "module:function, e.g. mytools:lookup")
    if not callable(target):
        raise UsageError(f"--tool {spec!r}: {spec.partition(':')[2]!r} is not a function")
    return target


def _mcp_name(index: int) -> str:
    return "mcp" if index == 0 else f"mcp{index + 1}"


def load_tools(tools: Sequence[str], mcp: Sequence[str], mcp_urls: Sequence[str]) -> list[Any]:
    """Everything the command line asked for, ready to pass as ``tools=``.

    Plain typed functions are accepted as they are (the spec builds their
    schemas). Each ``--mcp`` command line is split like a shell would; MCP
    servers are named ``mcp``, ``mcp2``… and their tools prefixed with it.

    :raises UsageError: a tool cannot be imported or a command is empty.
    """
    loaded: list[Any] = [_import_function(spec) for spec in tools]
    for index, command in enumerate(mcp):
        argv = shlex.split(command)
        if not argv:
            raise UsageError("--mcp needs a command, e.g. --mcp 'npx -y @scope/server'")
        loaded.append(define_local_mcp(_mcp_name(index), command=argv[0], args=argv[1:]))
    for index, url in enumerate(mcp_urls, start=len(mcp)):
        loaded.append(define_local_mcp(_mcp_name(index), url=url))
    return loaded
