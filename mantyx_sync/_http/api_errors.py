"""What a non-2xx answer of the MANTYX API means, as the most specific :class:`APIStatusError`.

The status picks the class; the body and the headers fill it in. Everything
kept from the body is redacted. No HTTP library is involved.
"""

from __future__ import annotations

import contextlib
import email.utils
import http
import re
import time
from collections.abc import Mapping
from typing import Any

from .._base.bounded import decode_json
from .._base.redact import redact_text, redact_value
from ..errors import (
    APIStatusError,
    AuthError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
)
from ..rate_limits import finite_number, parse_rate_limit

__all__ = ["api_error"]


def _retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    seconds = finite_number(value)
    if seconds is not None:
        return max(0.0, seconds)
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, parsed.timestamp() - time.time())


_STATUS_ERRORS: dict[int, type[APIStatusError]] = {
    400: InvalidRequestError,
    401: AuthError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: InvalidRequestError,
    429: RateLimitError,
}


# One auth-param of a WWW-Authenticate challenge: name=token or name="quoted string".
_AUTH_PARAM = re.compile(r'([A-Za-z][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


def _bearer_params(header: str | None) -> dict[str, str]:
    """The auth-params of a ``Bearer`` challenge (RFC 6750 §3)."""
    if not header:
        return {}
    start = header.lower().find("bearer")
    if start < 0:
        return {}
    params: dict[str, str] = {}
    for match in _AUTH_PARAM.finditer(header, start + len("bearer")):
        quoted, plain = match.group(2), match.group(3)
        value = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else plain
        params.setdefault(match.group(1).lower(), value)
    return params


def _required_scopes(fields: Mapping[str, Any], challenge: Mapping[str, str]) -> list[str]:
    """The scopes a 403 asks for: the body's ``required`` (a string or a list), else the
    challenge's space-separated ``scope``."""
    required = fields.get("required")
    if isinstance(required, str) and required.strip():
        return [required.strip()]
    if isinstance(required, list):
        scopes = [s for s in required if isinstance(s, str) and s]
        if scopes:
            return scopes
    return challenge.get("scope", "").split()


def api_error(
    status: int, headers: Mapping[str, str], content: bytes, reason: str | None = None
) -> APIStatusError:
    """The most specific :class:`APIStatusError` for a non-2xx answer.

    :param headers: the response headers (a case-insensitive mapping).
    :param content: the body as received; read as JSON when it is JSON.
    :param reason: the status line's reason phrase, the message of last resort
        (default: the standard phrase for ``status``).
    """
    try:
        body = decode_json(content) if content else None
    except ValueError:
        body = None
    if reason is None:
        with contextlib.suppress(ValueError):
            reason = http.HTTPStatus(status).phrase
    # A server that echoes what it was sent (a form with a client secret, a
    # token) must not put it in the message, the hint or the body we keep.
    body = redact_value(body)
    fields: dict[str, Any] = body if isinstance(body, dict) else {}
    error_field = fields.get("error") if isinstance(fields.get("error"), str) else None
    message = fields.get("message") if isinstance(fields.get("message"), str) else None
    if isinstance(fields.get("code"), str):
        # {"error": "<message>", "code": "api_keys_plan" | "rate_limit_exceeded"}
        code: str | None = fields["code"]
        message = message or error_field
    else:
        code = error_field
    if message is None:
        message = code or (reason or "error")
    kw: dict[str, Any] = {
        "status": status,
        "code": code,
        "hint": fields.get("hint") if isinstance(fields.get("hint"), str) else None,
        "candidates": fields.get("candidates")
        if isinstance(fields.get("candidates"), list)
        else None,
        "body": body,
        "request_id": headers.get("X-Request-Id"),
        "retry_after": _retry_after_seconds(headers.get("Retry-After")),
    }
    message = redact_text(message)
    cls = _STATUS_ERRORS.get(status) or (ServerError if status >= 500 else APIStatusError)
    if cls is PermissionDeniedError:
        challenge = _bearer_params(headers.get("WWW-Authenticate"))
        if kw["code"] is None and challenge.get("error"):
            kw["code"] = code = challenge["error"]
            message = fields.get("message") if isinstance(fields.get("message"), str) else code
        scopes = _required_scopes(fields, challenge)
        if scopes and message == code:
            message = f"the credential lacks the scope(s) {', '.join(scopes)}"
        return PermissionDeniedError(redact_text(str(message)), required_scopes=scopes, **kw)
    if cls is RateLimitError:
        limit = parse_rate_limit(headers)
        if kw["retry_after"] is None and limit is not None:
            kw["retry_after"] = limit.reset_in()
        return RateLimitError(message, rate_limit=limit, **kw)
    return cls(message, **kw)
