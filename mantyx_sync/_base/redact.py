"""The one place that masks secrets before they reach a log, repr or message."""

from __future__ import annotations

import logging
import re
import urllib.parse
from typing import Any

__all__ = [
    "LastResort",
    "RedactingFormatter",
    "display_url",
    "mask",
    "redact_text",
    "redact_value",
    "redact_whole",
    "register_secret",
]

# MANTYX keys and tokens look like mantyx_… / mantyx_at_…; bearer tokens in free text too.
# (not "mantyx_sync", our own logger and package name)
_TOKEN_RE = re.compile(
    r"(mantyx_(?:at_)?)(?!sync\b)[A-Za-z0-9._\-]+|(Bearer\s+)[A-Za-z0-9._\-~+/=]+"
)

_known_secrets: set[str] = set()
# Too short to mask inside any text (it would hit ordinary words): masked only
# where a whole value is one of them (redact_whole).
_short_secrets: set[str] = set()
_SHORT = 6


def register_secret(value: str | None) -> None:
    """Remember ``value`` so :func:`redact_text` masks it wherever it appears
    (one shorter than 6 characters, only as a whole value: :func:`redact_whole`)."""
    if value:
        (_known_secrets if len(value) >= _SHORT else _short_secrets).add(value)


def mask(value: str | None) -> str:
    """A fixed-width stand-in that shows a secret exists without leaking any of it."""
    return "***" if value else ""


def _mask_known(text: str) -> str:
    for secret in tuple(_known_secrets):  # another thread may register one meanwhile
        if secret in text:
            text = text.replace(secret, "***")
    return text


def redact_text(text: str) -> str:
    """Mask registered secrets and anything shaped like a MANTYX key or bearer token."""
    return _TOKEN_RE.sub(lambda m: (m.group(1) or m.group(2)) + "***", _mask_known(text))


def redact_whole(value: str, *, shapes: bool = True) -> str:
    """:func:`redact_text` (without the key and token shapes unless ``shapes``:
    a name like ``mantyx_docs`` is no key), and a value that is a registered
    secret of any length masked whole."""
    if value in _short_secrets:
        return "***"
    return redact_text(value) if shapes else _mask_known(value)


def redact_value(value: Any) -> Any:
    """A copy of decoded JSON ``value`` with every string (and key) through :func:`redact_text`."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, list):
        return [redact_value(item) for item in value]
    if isinstance(value, dict):
        return {redact_text(str(k)): redact_value(v) for k, v in value.items()}
    return value


def display_url(url: str) -> str:
    """``url`` without userinfo, query or fragment: fit for messages and logs."""
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "<invalid url>"
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class RedactingFormatter(logging.Formatter):
    """A formatter that runs every formatted record through :func:`redact_text`."""

    def format(self, record: logging.LogRecord) -> str:
        return redact_text(super().format(record))


class LastResort(logging.Handler):
    """Python's last resort (records at WARNING and above, to stderr) for one
    logger, which the package's ``NullHandler`` would otherwise silence.

    It writes only while the application has configured no handler of its own
    on the record's way up (as :data:`logging.lastResort`), so a configured
    application sees each record once, and the text is redacted.
    """

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.setFormatter(RedactingFormatter("%(name)s: %(levelname)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        last = logging.lastResort
        logger: logging.Logger | None = logging.getLogger(record.name)
        while logger is not None:
            for handler in logger.handlers:
                if handler is not self and not isinstance(handler, logging.NullHandler):
                    return
            logger = logger.parent if logger.propagate else None
        if last is not None and record.levelno >= last.level:
            text = self.format(record)
            last.handle(logging.makeLogRecord({"msg": text, "levelno": record.levelno}))
