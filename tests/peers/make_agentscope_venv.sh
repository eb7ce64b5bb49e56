#!/bin/sh
# Build tests/peers/.venv-agentscope with agentscope-runtime, for the Agent API tests
# (tests/serve/test_agent_api_*.py). It cannot share the test venv: it pins a2a-sdk<1
# and pulls in a large tree (agentscope, fastapi, redis, celery, kubernetes...).
# agentscope<2: the runtime's agentscope adapter is written for agentscope 1.x (ToolUseBlock).
# mcp<2: agentscope 1.x imports streamablehttp_client, which mcp 2.x no longer has.
# greenlet, tqdm: imported by agentscope 1.x but not declared by it.
# The tests skip when this venv is absent.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
python3 -m venv "$here/.venv-agentscope"
"$here/.venv-agentscope/bin/pip" install --quiet "agentscope-runtime==1.1.6.post2" "agentscope>=1.0.14,<2" "mcp<2" greenlet tqdm
