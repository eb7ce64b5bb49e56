"""A protocol-faithful local MANTYX emulator, for tests and offline development.

:class:`LocalMantyx` serves the MANTYX agent-runs API over real HTTP on
127.0.0.1, driven by a scripted model (:class:`Turn`, :class:`ToolCall`,
:class:`Fail`, :class:`FailResult`, :class:`Emit`) or a deterministic default
model, with fault plans (:class:`Faults`) for the failure paths and every
request recorded (:class:`RecordedRequest`). It needs werkzeug
(``pip install 'mantyx-sync[testing]'``) only once it is started.

It is also an OAuth 2.0 authorization server (``LocalMantyx.oauth``: PKCE
sign-ins approved at once, refresh, revocation, userinfo) with scopes per
route, and it enforces rate-limit buckets when asked (``rate_limits=``), on a
clock tests can move forward (``LocalMantyx.advance_clock``).

The emulator never imports the SDK (only :meth:`LocalMantyx.client` does,
lazily), so a bug in the SDK cannot hide a bug in the emulator; it shares only
the package's foundation (``mantyx_sync._base``: its argument checks and
documented limits).

Whatever keeps a value for later (``LocalMantyx(...)``, script steps, fault
plans, ``set_model``, ``inject``, ``fail_next``...) checks it where it is
written: a wrong type is a :class:`TypeError` naming the call, the argument,
the expected type and the type received (never the value), and a value out of
range a :class:`ValueError` — never a failure later in a request thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._base.lazy import load_lazily

if TYPE_CHECKING:
    from .cassettes import Cassette, cassette
    from .clock import EmulatorClock
    from .errors import CassetteError
    from .faults import Faults
    from .model import Emit, Fail, FailResult, ModelContext, Step, ToolCall, Turn
    from .oauth import OAuthServer
    from .recorder import RecordedRequest
    from .runs import EmulatedRun
    from .server import LocalMantyx
    from .sessions import EmulatedSession
    from .steps import Overload, PlanUpdate, Supervise, ToolFiles
    from .transport import WSGITransport

# Each name is imported with its module on first use: the pytest plugin
# (``pytest_plugin``, loaded by every pytest run where the package is
# installed) imports this package without loading the emulator or requests.
_LAZY = {
    ".cassettes": "Cassette cassette",
    ".errors": "CassetteError",
    ".clock": "EmulatorClock",
    ".faults": "Faults",
    ".model": "Emit Fail FailResult ModelContext Step ToolCall Turn",
    ".oauth": "OAuthServer",
    ".recorder": "RecordedRequest",
    ".runs": "EmulatedRun",
    ".server": "LocalMantyx",
    ".sessions": "EmulatedSession",
    ".steps": "Overload PlanUpdate Supervise ToolFiles",
    ".transport": "WSGITransport",
}
_MODULE_OF = {name: module for module, names in _LAZY.items() for name in names.split()}

__all__ = [
    "Cassette",
    "CassetteError",
    "Emit",
    "EmulatedRun",
    "EmulatedSession",
    "EmulatorClock",
    "Fail",
    "FailResult",
    "Faults",
    "LocalMantyx",
    "ModelContext",
    "OAuthServer",
    "Overload",
    "PlanUpdate",
    "RecordedRequest",
    "Step",
    "Supervise",
    "ToolCall",
    "ToolFiles",
    "Turn",
    "WSGITransport",
    "cassette",
]


def __getattr__(name: str) -> Any:
    return load_lazily(name, _MODULE_OF, __name__, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
