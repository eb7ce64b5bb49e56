"""The same script with the official SDK (``pip install mantyx-sdk``, import ``mantyx``)."""

import os

from mantyx import MantyxClient, define_local_tool

noop = define_local_tool(
    name="noop",
    description="Do nothing.",
    parameters={"type": "object", "properties": {}, "additionalProperties": False},
    execute=lambda args: "ok",
)
client = MantyxClient(
    api_key=os.environ["MANTYX_API_KEY"],
    workspace_slug=os.environ["MANTYX_WORKSPACE"],
    base_url=os.environ["MANTYX_BASE_URL"],
)
result = client.run_agent(system_prompt="You are a benchmark agent.", prompt="go", tools=[noop])
assert result.text == "done", result.text
client.close()
