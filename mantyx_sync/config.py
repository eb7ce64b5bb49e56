"""Client configuration: one frozen value, built from arguments or the environment."""

from __future__ import annotations

import ipaddress
import logging
import os
import threading
from collections.abc import Mapping
from urllib.parse import urlsplit

import attrs

from ._base.redact import register_secret
from ._base.sse import MAX_FRAME_BYTES
from ._version import __version__
from .errors import ConfigurationError

__all__ = ["ClientConfig"]

log: logging.Logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://app.mantyx.io"
_API_PREFIX = "/api/v1/workspaces/"


# Origins already warned about for plain http://: each is said once per process.
_WARNED: set[str] = set()
_WARNED_LOCK = threading.Lock()


def is_loopback(url: str) -> bool:
    """Whether ``url``'s host is this machine (``localhost``, ``127.0.0.0/8``, ``::1``)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _warn_if_plain(base_url: str) -> None:
    """Once per origin: a plain ``http://`` URL to another machine sends the
    credential (and every prompt) readable to anyone on the way."""
    if not base_url.startswith("http://") or is_loopback(base_url):
        return
    origin = base_url.lower()
    with _WARNED_LOCK:
        if origin in _WARNED:
            return
        _WARNED.add(origin)
    log.warning(
        "base_url %s is plain http:// to another machine: the API key or token and "
        "every request travel unencrypted; use https://",
        base_url,
    )


def _positive(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if value <= 0:
        raise ConfigurationError(f"{attribute.name} must be > 0 seconds, got {value!r}")


def _optional_positive(
    instance: object, attribute: attrs.Attribute[float | None], value: float | None
) -> None:
    if value is not None and value <= 0:
        raise ConfigurationError(f"{attribute.name} must be > 0 or None, got {value!r}")


def _non_negative_int(instance: object, attribute: attrs.Attribute[int], value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConfigurationError(f"{attribute.name} must be an int >= 0, got {value!r}")


def _positive_int(instance: object, attribute: attrs.Attribute[int], value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigurationError(f"{attribute.name} must be an int >= 1, got {value!r}")


@attrs.frozen(kw_only=True)
class ClientConfig:
    """Everything a :class:`~mantyx_sync.Client` needs, fixed at construction.

    :param api_key: workspace API key (``mantyx_…``) or OAuth access token
        (``mantyx_at_…``); never shown in reprs or logs. ``None`` when the
        client's requests take their token from a token source instead.
    :param workspace: the workspace slug in every route.
    :param base_url: scheme and host of the MANTYX API.
    :param connect_timeout: seconds to establish a connection.
    :param read_timeout: seconds to wait for bytes on a JSON request.
    :param stream_idle_timeout: seconds a run's event stream may go without an
        event (keep-alive comments do not count) before it is treated as dead
        and resumed.
    :param max_retries: retries of a safe request after the first attempt.
    :param stream_reconnects: consecutive failed attempts to reopen a stream
        before :class:`~mantyx_sync.StreamError` is raised; a connection that
        stays quiet past ``stream_idle_timeout`` counts as one, unless the run
        waits on one of our own tools.
    :param max_workers: threads in each run's tool pool (default 32).
    :param tool_timeout: default seconds a local tool may run before it is
        answered with an error; ``None`` means no limit.
    :param cancel_timeout: seconds the best-effort cancel on Ctrl-C may take.
    :param max_event_bytes: the largest one event-stream frame may be (default
        32 MB); a bigger one fails the stream with
        :class:`~mantyx_sync.StreamError`.
    """

    api_key: str | None = attrs.field(repr=False)
    workspace: str
    base_url: str = DEFAULT_BASE_URL
    connect_timeout: float = attrs.field(default=10.0, validator=_positive)
    read_timeout: float = attrs.field(default=60.0, validator=_positive)
    stream_idle_timeout: float = attrs.field(default=120.0, validator=_positive)
    max_retries: int = attrs.field(default=4, validator=_non_negative_int)
    stream_reconnects: int = attrs.field(default=8, validator=_non_negative_int)
    max_workers: int = attrs.field(default=32, validator=_positive_int)
    tool_timeout: float | None = attrs.field(default=None, validator=_optional_positive)
    cancel_timeout: float = attrs.field(default=5.0, validator=_positive)
    max_event_bytes: int = attrs.field(default=MAX_FRAME_BYTES, validator=_positive_int)
    user_agent: str = f"mantyx-sync/{__version__}"

    def __attrs_post_init__(self) -> None:
        if self.api_key is not None and not self.api_key:
            raise ConfigurationError("api_key is empty: pass api_key= or set MANTYX_API_KEY")
        if not self.workspace or "/" in self.workspace:
            raise ConfigurationError(
                f"workspace must be a slug like 'acme', got {self.workspace!r}"
            )
        if not self.base_url.startswith(("http://", "https://")):
            raise ConfigurationError(
                f"base_url must start with http:// or https://, got {self.base_url!r}"
            )
        try:
            parts = urlsplit(self.base_url)
            valid = bool(parts.hostname) and parts.port != 0  # .port raises when out of range
        except ValueError:
            valid = False
        if not valid:
            raise ConfigurationError(
                f"base_url is not a valid URL (scheme://host[:port]): {self.base_url!r}"
            )
        register_secret(self.api_key)
        _warn_if_plain(self.base_url)

    @classmethod
    def from_env(
        cls,
        api_key: str | None = None,
        *,
        workspace: str | None = None,
        base_url: str | None = None,
        environ: Mapping[str, str] | None = None,
        key_required: bool = True,
        **options: object,
    ) -> ClientConfig:
        """Build a config, falling back to ``MANTYX_API_KEY``, ``MANTYX_WORKSPACE``
        and ``MANTYX_BASE_URL`` for the arguments left as ``None``.

        :param key_required: ``False`` when the credential comes from a token
            source: then ``MANTYX_API_KEY`` is not read and ``api_key`` stays ``None``.

        :raises ConfigurationError: naming the variable to set when the key or
            the workspace is missing, or an option is out of range.
        """
        env = os.environ if environ is None else environ
        key = (api_key or env.get("MANTYX_API_KEY")) if key_required else None
        if key_required and not key:
            raise ConfigurationError(
                "no API key: pass api_key= (or token_source=) or set the MANTYX_API_KEY"
                " environment variable"
            )
        slug = workspace or env.get("MANTYX_WORKSPACE")
        if not slug:
            raise ConfigurationError(
                "no workspace: pass workspace= or set the MANTYX_WORKSPACE environment variable"
            )
        url = (base_url or env.get("MANTYX_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        try:
            return cls(api_key=key, workspace=slug, base_url=url, **options)  # type: ignore[arg-type]
        except TypeError as exc:
            raise ConfigurationError(f"unknown client option: {exc}") from None

    @property
    def api_root(self) -> str:
        """``<base_url>/api/v1/workspaces/<workspace>``: every route hangs off it."""
        return f"{self.base_url}{_API_PREFIX}{self.workspace}"
