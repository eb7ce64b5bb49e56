"""How the emulator is built: werkzeug's routing, requests and responses, no import cycle,
and no werkzeug until it is needed."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import requests

from mantyx_sync.testing import LocalMantyx

TESTING = Path(__file__).resolve().parents[2] / "mantyx_sync" / "testing"

# What a hand-written WSGI layer reads and writes; werkzeug's Request and Response do it.
ENVIRON_KEYS = {"PATH_INFO", "QUERY_STRING", "REQUEST_METHOD", "CONTENT_LENGTH", "CONTENT_TYPE"}
ENVIRON_KEYS |= {"wsgi.input", "wsgi.input_terminated", "wsgi.url_scheme", "SERVER_NAME"}


def _modules() -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(TESTING.glob("*.py"))}


def test_the_emulator_parses_no_request_by_hand() -> None:
    found = []
    modules = _modules()
    # The HTTP layer beneath werkzeug's Request: it hands each request its body, read ahead.
    del modules["_serving"]
    for name, tree in modules.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if node.value in ENVIRON_KEYS or node.value.startswith("HTTP_"):
                    found.append(f"{name}.py:{node.lineno} reads environ[{node.value!r}]")
            elif isinstance(node, ast.ImportFrom) and node.module in ("urllib.parse", "http"):
                names = {a.name for a in node.names} & {"parse_qsl", "parse_qs", "HTTPStatus"}
                found += [f"{name}.py:{node.lineno} imports {n}" for n in sorted(names)]
            elif isinstance(node, ast.Import) and any(a.name == "http" for a in node.names):
                found.append(f"{name}.py:{node.lineno} imports http")
            elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "start_response":
                found.append(f"{name}.py:{node.lineno} calls start_response itself")
    assert found == []


def test_the_emulator_routes_with_a_werkzeug_map() -> None:
    from werkzeug.routing import Map

    # The module that defines the app, reached through the public emulator.
    app_module = sys.modules[type(LocalMantyx().app).__module__]
    maps = [value for value in vars(app_module).values() if isinstance(value, Map)]
    assert len(maps) == 1
    paths = {rule.rule for rule in maps[0].iter_rules()}
    assert "/api/v1/workspaces/<ws>/agent-runs/<run_id>/stream" in paths
    assert "/api/oauth/token" in paths


def test_the_emulator_modules_import_no_cycle() -> None:
    # Every import counts, ``TYPE_CHECKING`` ones too: a cycle there is still a knot.
    graph: dict[str, set[str]] = {}
    for name, tree in _modules().items():
        graph[name] = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
        }
    done: set[str] = set()

    def visit(node: str, trail: tuple[str, ...]) -> None:
        assert node not in trail, "import cycle: " + " -> ".join((*trail, node))
        if node in done:
            return
        for dep in sorted(graph.get(node, ())):
            visit(dep, (*trail, node))
        done.add(node)

    for module in graph:
        visit(module, ())


def test_a_wrong_method_is_405_naming_the_allowed_ones(api: Any) -> None:
    response = api.delete("/models")
    assert response.status_code == 405
    assert response.json()["error"] == "method_not_allowed"
    assert "DELETE" in response.json()["message"]
    assert "GET" in response.headers["Allow"]
    token = requests.get(f"{api.server.base_url}/api/oauth/token", timeout=5)
    assert token.status_code == 405
    assert token.headers["Allow"] == "POST"


def test_a_trailing_slash_reaches_the_same_route(api: Any) -> None:
    assert api.get("/models/").json() == api.get("/models").json()


def test_the_emulator_needs_werkzeug_only_to_serve() -> None:
    code = (
        "import sys, json\n"
        "from mantyx_sync.testing import LocalMantyx\n"
        "LocalMantyx().stop()\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'werkzeug')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(done.stdout) == []
