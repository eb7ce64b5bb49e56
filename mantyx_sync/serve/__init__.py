"""Serve a MANTYX agent to other systems, from any WSGI server or framework.

* :func:`a2a_app`: the agent over A2A 0.3 and 1.0 (JSON-RPC, SSE streaming);
* :func:`agent_api_app`: the agent over agentscope-runtime's Agent API protocol;
* :func:`bearer_token`: an ``authenticate`` hook for them.

The apps are plain WSGI callables: mount them in Flask, Django, gunicorn or
werkzeug; nothing listens by itself. ``python -m mantyx_sync.serve`` runs one
on 127.0.0.1 for a quick trial (not for production).
"""

from __future__ import annotations

from ._auth import bearer_token
from .a2a import A2AApp, a2a_app
from .agent_api import AgentApiApp, agent_api_app

__all__ = ["A2AApp", "AgentApiApp", "a2a_app", "agent_api_app", "bearer_token"]
