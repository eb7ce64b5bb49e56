"""Cron recipe: run one prompt, print the answer, exit with a status cron can act on.

    python examples/recipes/cron_job.py "Summarise yesterday's failed orders"

for example from a crontab (the answer is mailed or logged; a non-zero status
tells the scheduler something went wrong, and which kind of wrong)::

    15 6 * * *  cd /srv/app && timeout 600 python examples/recipes/cron_job.py "..." >> report.txt

With MANTYX_API_KEY and MANTYX_WORKSPACE (and MANTYX_BASE_URL, if not the
default) it talks to MANTYX; without a key, to a local MANTYX emulator it
starts itself. The answer goes to stdout; one line per problem to stderr.

Exit codes (the same as ``mantyx-sync run``):

    0    the run succeeded
    1    the run failed or was cancelled (RunError)
    2    usage, configuration or spec error, or a request the server refused
    3    the API key is wrong or may not do this
    4    MANTYX could not be reached, the stream broke, or the server failed
    130  interrupted (Ctrl-C, or SIGTERM from `timeout`): the run was cancelled
"""

from __future__ import annotations

import contextlib
import datetime
import os
import signal
import sys
from types import FrameType

import mantyx_sync

OK, RUN_FAILED, USAGE, AUTH, TRANSPORT, INTERRUPTED = 0, 1, 2, 3, 4, 130


@mantyx_sync.local_tool(read_only=True)
def today() -> str:
    """Today's date, ISO 8601 (a local tool the agent may call)."""
    return datetime.date.today().isoformat()


def fail(message: str) -> None:
    print(f"cron_job: error: {message}", file=sys.stderr)


def connect(stack: contextlib.ExitStack) -> mantyx_sync.Client:
    """A client from MANTYX_* variables, else one for a local emulator started here."""
    if os.environ.get("MANTYX_API_KEY"):
        return stack.enter_context(mantyx_sync.Client())
    from mantyx_sync.testing import LocalMantyx

    server = stack.enter_context(LocalMantyx())
    print(
        f"cron_job: MANTYX_API_KEY is not set: using a local MANTYX emulator at {server.base_url}",
        file=sys.stderr,
    )
    client: mantyx_sync.Client = stack.enter_context(server.client())
    return client


def run(prompt: str) -> int:
    with contextlib.ExitStack() as stack:
        client = connect(stack)
        agent = mantyx_sync.Agent(
            client,
            system_prompt="You write short factual reports for an operations team.",
            tools=[today],
        )
        # The with-block inside Agent.run cancels the run if we are interrupted.
        result = agent.run(prompt)
    print(result.text)
    tokens = result.tokens.total_tokens if result.tokens is not None else "?"
    print(f"cron_job: run {result.run_id} done, {tokens} tokens", file=sys.stderr)
    return OK


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # `timeout` and systemd stop jobs with SIGTERM


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].strip():
        fail('usage: cron_job.py "prompt"')
        return USAGE
    signal.signal(signal.SIGTERM, _terminate)
    try:
        return run(argv[0])
    except mantyx_sync.RunError as exc:  # RunCancelledError too
        fail(str(exc))
        return RUN_FAILED
    except (mantyx_sync.AuthError, mantyx_sync.PermissionDeniedError) as exc:
        fail(str(exc))
        return AUTH
    except (
        mantyx_sync.ConfigurationError,
        mantyx_sync.SpecError,
        mantyx_sync.InvalidRequestError,
        mantyx_sync.NotFoundError,
    ) as exc:
        fail(str(exc))
        return USAGE
    except (mantyx_sync.APIConnectionError, mantyx_sync.APIStatusError) as exc:
        fail(str(exc))
        return TRANSPORT
    except KeyboardInterrupt:
        fail("interrupted; the run was cancelled")
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
