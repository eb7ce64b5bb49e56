"""Drive an Agent API endpoint with agentscope-runtime's own client (runs in .venv-agentscope).

Usage: ``python agentapi_client.py PROCESS_URL TEXT [--session S] [--token T]``

Prints one JSON object: every event as ``[object, type, status]``, the final
response's status, error, session_id and output, and the text of the last
completed assistant message (agentscope's ``extract_text_from_event``).
"""

from __future__ import annotations

import json
import sys

from agentscope_runtime.engine.helpers.agent_api_client import (
    HTTPAgentAPIClient,
    create_simple_text_request,
    extract_text_from_event,
)
from agentscope_runtime.engine.schemas.agent_schemas import AgentResponse, Message


def main() -> None:
    url, text = sys.argv[1], sys.argv[2]
    session = sys.argv[sys.argv.index("--session") + 1] if "--session" in sys.argv else None
    token = sys.argv[sys.argv.index("--token") + 1] if "--token" in sys.argv else None
    client = HTTPAgentAPIClient(url, token=token, timeout=30)
    events = []
    final = None
    answer = None
    for event in client.stream(create_simple_text_request(text, session_id=session)):
        events.append([event.object, getattr(event, "type", None), event.status])
        if isinstance(event, Message) and event.type == "message":
            answer = extract_text_from_event(event) or answer
        if isinstance(event, AgentResponse):
            final = event
    assert final is not None
    print(
        json.dumps(
            {
                "events": events,
                "status": final.status,
                "error": final.error.model_dump() if final.error else None,
                "session_id": final.session_id,
                "output": [m.model_dump(exclude_none=True) for m in final.output or []],
                "answer": answer,
            }
        )
    )


if __name__ == "__main__":
    main()
