"""What a replayed request is checked against: the first difference, worded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import CassetteError

__all__ = ["diff", "mismatch"]


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 300 else text[:297] + "..."


def diff(recorded: Any, live: Any, where: str = "") -> tuple[str, Any, Any] | None:
    """The first ``(field, recorded, live)`` that differs, ``None`` when equal."""
    if isinstance(recorded, dict) and isinstance(live, dict):
        for key in sorted(set(recorded) | set(live), key=str):
            missing = object()
            found = diff(recorded.get(key, missing), live.get(key, missing), f"{where}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(recorded, list) and isinstance(live, list) and len(recorded) == len(live):
        for i, (a, b) in enumerate(zip(recorded, live, strict=False)):
            found = diff(a, b, f"{where}[{i}]")
            if found is not None:
                return found
        return None
    if recorded == live and type(recorded) is type(live):
        return None
    return where.removeprefix(".") or "the body", recorded, live


def _tool_name(tool_use_id: str, interactions: list[dict[str, Any]]) -> str:
    """The name of the tool the recorded stream called as ``tool_use_id``."""
    for interaction in interactions:
        for event in interaction.get("response", {}).get("events", ()):
            data = event["frame"].get("data")
            stack = [data]
            while stack:
                item = stack.pop()
                if isinstance(item, dict):
                    if tool_use_id in (item.get("toolUseId"), item.get("id")):
                        name = item.get("toolName") or item.get("name")
                        if isinstance(name, str):
                            return name
                    stack.extend(item.values())
                elif isinstance(item, list):
                    stack.extend(item)
    return "?"


def mismatch(
    live: dict[str, Any],
    problem: tuple[str, Any, Any],
    interactions: list[dict[str, Any]],
    path: Path,
) -> CassetteError:
    """The error for ``live`` differing from its recording at ``problem``."""
    field, recorded, sent = problem
    absent = "(absent)"
    shown = [
        absent if not isinstance(v, (str, int, float, bool, list, dict, type(None))) else _show(v)
        for v in (recorded, sent)
    ]
    body = live["body"]
    tool_use_id = body.get("toolUseId") if isinstance(body, dict) else None
    if live["path"].endswith("/tool-results") and isinstance(tool_use_id, str):
        tool = _tool_name(tool_use_id, interactions)
        return CassetteError(
            f"the result of tool {tool!r} (toolUseId {tool_use_id}) differs from the "
            f"recording in {path}: {field} was {shown[0]}, now {shown[1]}. Pass "
            "match_tool_results=False to accept results that change between runs",
            tool_use_id=tool_use_id,
        )
    return CassetteError(
        f"{live['method']} {live['path']} differs from the recording in {path}: "
        f"{field} was {shown[0]}, now {shown[1]}. Record it again with record_mode='all' "
        "(pytest: --mantyx-record-mode=all) if the change is intended"
    )
