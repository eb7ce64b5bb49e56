"""mantyx_sync: the synchronous Python SDK for MANTYX agent runs."""

from __future__ import annotations

import logging

from ._version import __version__
from .errors import *  # noqa: F403 - re-exported, listed in errors.__all__
from .tools import A2ATool, ClientResolvedTool, McpTool, MantyxTool, PluginTool, ToolConnection

logging.getLogger("mantyx_sync").addHandler(logging.NullHandler())
