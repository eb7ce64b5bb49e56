"""A plain script: one turn with one local tool, with mantyx_sync (cold-start row 7).

Reads the emulator's address from MANTYX_BASE_URL / MANTYX_API_KEY / MANTYX_WORKSPACE.
"""

import os

from mantyx_sync import Agent, Client, define_local_tool

noop = define_local_tool(
    name="noop",
    description="Do nothing.",
    parameters={"type": "object", "properties": {}, "additionalProperties": False},
    execute=lambda args: "ok",
)
client = Client(
    os.environ["MANTYX_API_KEY"],
    workspace=os.environ["MANTYX_WORKSPACE"],
    base_url=os.environ["MANTYX_BASE_URL"],
)
result = Agent(client, system_prompt="You are a benchmark agent.", tools=[noop]).run("go")
assert result.text == "done", result.text
client.close()
