"""File attachments: inline bytes, files on disk and ``https`` URLs.

A file on disk is read only when it is sent, in chunks, and base64-encoded as
it is read (its bytes are never held whole). The MIME allowlist, the name-based
guess and the URL rule live here, shared by :mod:`mantyx_sync.messages`.
Values are immutable.
"""

from __future__ import annotations

import base64
import mimetypes
import os
import urllib.parse
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any, Final

import attrs

from ._base.argcheck import checked, checked_init
from ._base.limits import ATTACHMENT_MIME_TYPES
from ._base.types import JSONDict
from ._models.checks import coerce_text
from .errors import ArgumentTypeError, SpecError

__all__ = ["Attachment"]

# Read 768 KiB at a time: a multiple of 3, so each chunk's base64 joins cleanly.
_CHUNK: Final = 3 * 256 * 1024

# Names the standard table misses or spells differently from the allowlist.
_BY_SUFFIX: Final[Mapping[str, str]] = {
    ".wav": "audio/wav",
    ".m4a": "audio/mp4",
    ".mp4": "audio/mp4",
    ".mp3": "audio/mpeg",
    ".weba": "audio/webm",
    ".webm": "audio/webm",
    ".webp": "image/webp",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".json": "application/json",
    ".xml": "application/xml",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}


def allowed_mime_type(mime_type: str) -> bool:
    """Whether MANTYX accepts files of ``mime_type`` (every ``text/*`` and an allowlist)."""
    base = mime_type.split(";", 1)[0].strip().lower()
    return (base.startswith("text/") and len(base) > 5) or base in ATTACHMENT_MIME_TYPES


def _mime(mime_type: str | None, name: str | None, *, required: bool = True) -> str | None:
    """``mime_type``, else guessed from the file ``name``; checked against the allowlist."""
    mime = coerce_text(mime_type, "mime_type")
    if mime is None and name:
        suffix = PurePosixPath(name).suffix.lower()
        mime = _BY_SUFFIX.get(suffix) or mimetypes.guess_type(name, strict=False)[0]
    if mime is None and required:
        raise SpecError(f"cannot guess the MIME type of {name!r}; pass mime_type=")
    check_mime(mime, None)
    return mime


def check_mime(mime_type: str | None, path: str | None) -> None:
    if mime_type is not None and not allowed_mime_type(mime_type):
        raise SpecError(
            f"MIME type {mime_type!r} is not accepted; allowed are text/* and "
            + ", ".join(sorted(ATTACHMENT_MIME_TYPES)),
            path=path,
        )


@checked_init(ArgumentTypeError)
@attrs.frozen(kw_only=True, repr=False)
class Attachment:
    """A file for the model: inline bytes, a file on disk, or an ``https`` URL.

    Build it with :meth:`from_path`, :meth:`from_bytes` or :meth:`from_url`;
    the MIME type is guessed from the file name when not given, and checked
    against the server's allowlist (every ``text/*``, ``audio/mp4|mpeg|wav|webm``,
    ``image/jpeg|png|webp|gif``, PDF, DOCX, JSON, XML, HTML).

    :ivar filename: the name the model sees.
    :ivar mime_type: e.g. ``application/pdf`` (``None`` for a URL whose type is
        left to the server).
    :ivar size: decoded bytes of an inline file (``None`` for a URL).
    :ivar url: the ``https`` URL of a URL attachment.
    :ivar path: the file read when the attachment is sent, if built from a path.
    """

    filename: str | None
    mime_type: str | None
    size: int | None = None
    url: str | None = None
    path: Path | None = None
    data: bytes | None = None

    @classmethod
    @checked(ArgumentTypeError)
    def from_path(
        cls,
        path: str | os.PathLike[str],
        *,
        filename: str | None = None,
        mime_type: str | None = None,
    ) -> Attachment:
        """A file on disk, read (in chunks) only when the run is sent.

        :raises SpecError: the file does not exist, its type cannot be guessed
            (pass ``mime_type=``) or is not accepted.
        """
        file = Path(path)
        try:
            stat = file.stat()
        except OSError as exc:
            raise SpecError(f"cannot read attachment {str(file)!r}: {exc.strerror}") from exc
        if not file.is_file():
            raise SpecError(f"attachment {str(file)!r} is not a regular file")
        name = coerce_text(filename, "filename") or file.name
        mime = _mime(mime_type, name)
        return cls(filename=name, mime_type=mime, size=stat.st_size, path=file)

    @classmethod
    @checked(ArgumentTypeError)
    def from_bytes(
        cls, data: bytes | bytearray | memoryview, *, filename: str, mime_type: str | None = None
    ) -> Attachment:
        """An in-memory file.

        :raises SpecError: the type cannot be guessed from ``filename`` (pass
            ``mime_type=``) or is not accepted.
        """
        name = coerce_text(filename, "filename")
        mime = _mime(mime_type, name)
        raw = bytes(data)
        return cls(filename=name, mime_type=mime, size=len(raw), data=raw)

    @classmethod
    @checked(ArgumentTypeError)
    def from_url(
        cls, url: str, *, filename: str | None = None, mime_type: str | None = None
    ) -> Attachment:
        """A file the server fetches from an ``https`` URL.

        The MIME type is guessed from ``filename`` or the URL's path when not
        given; when it cannot be, the server decides.

        :raises SpecError: not an ``https`` URL, or a type that is not accepted.
        """
        check_url(url, None)
        name = coerce_text(filename, "filename")
        mime = _mime(mime_type, name or urllib.parse.urlsplit(url).path, required=False)
        return cls(filename=name, mime_type=mime, url=url)

    @property
    def inline(self) -> bool:
        """Whether the file's bytes are sent in the request (not a URL)."""
        return self.url is None

    def __repr__(self) -> str:
        # A signed URL's query carries a credential: never shown.
        where = _shown_url(self.url) if self.url is not None else str(self.path or "bytes")
        size = "?" if self.size is None else f"{self.size}B"
        return f"Attachment({self.filename!r}, {self.mime_type!r}, {size}, {where})"

    def encoded(self) -> str:
        """The file's bytes as base64 (no ``data:`` prefix); a file is read now, in chunks.

        :raises SpecError: the file can no longer be read, or grew past the size
            it had when the attachment was made.
        """
        if self.data is None and self.path is None:
            raise SpecError("a URL attachment has no bytes to encode")
        return "".join(chunk.decode("ascii") for chunk in _base64_chunks(self, exact=False))

    def to_wire(self, *, streamed: bool = False) -> JSONDict:
        """The ``attachments[]`` entry.

        :param streamed: leave an inline file's ``data`` as a :class:`FileData`
            that the transport encodes while it sends the request body, so the
            base64 text is never held whole; otherwise it is read and encoded now.
        """
        if self.url is not None:
            out: JSONDict = {"type": "input_file_url", "url": self.url}
            if self.mime_type is not None:
                out["mimeType"] = self.mime_type
            if self.filename is not None:
                out["filename"] = self.filename
            return out
        return {
            "type": "input_file",
            "mimeType": self.mime_type,
            "filename": self.filename,
            "data": FileData(self) if streamed else self.encoded(),
        }


class FileData:
    """The base64 ``data`` of an inline file, encoded chunk by chunk as
    :mod:`mantyx_sync._http.body` sends it; each send (a retried POST too) reads it again.
    """

    __slots__ = ("attachment",)

    def __init__(self, attachment: Attachment) -> None:
        self.attachment: Attachment = attachment

    def __repr__(self) -> str:
        return f"FileData({self.attachment!r})"

    @property
    def encoded_size(self) -> int:
        """The length of the base64 text: ``4 * ceil(size / 3)``."""
        return 4 * (((self.attachment.size or 0) + 2) // 3)

    def check(self) -> None:
        """Refuse (:class:`SpecError`) a file gone or resized since it was attached."""
        path, expected = self.attachment.path, self.attachment.size or 0
        if path is None:
            return
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise SpecError(f"cannot read attachment {str(path)!r}: {exc.strerror}") from exc
        if size != expected:
            raise SpecError(
                f"attachment {str(path)!r} changed size after it was attached "
                f"({expected} bytes then, {size} now); attach it again"
            )

    def chunks(self) -> Iterator[bytes]:
        """The base64 text in ASCII pieces, read and encoded as they are asked for."""
        return _base64_chunks(self.attachment, exact=True)


def _shown_url(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    suffix = "?…" if parts.query or parts.fragment else ""
    return f"{parts.scheme}://{parts.hostname or ''}{parts.path}{suffix}"


def _base64_chunks(file: Attachment, *, exact: bool) -> Iterator[bytes]:
    """Base64 of ``file``'s bytes, one 768 KiB piece of input at a time."""
    if file.data is not None:
        view = memoryview(file.data)
        for start in range(0, len(view), _CHUNK):
            yield base64.b64encode(view[start : start + _CHUNK])
        return
    assert file.path is not None
    path, expected, total = file.path, file.size or 0, 0
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                total += len(chunk)
                if total > expected:
                    raise SpecError(
                        f"attachment {str(path)!r} grew after it was attached "
                        f"({expected} bytes then); attach it again"
                    )
                yield base64.b64encode(chunk)
    except OSError as exc:
        raise SpecError(f"cannot read attachment {str(path)!r}: {exc.strerror}") from exc
    if exact and total != expected:
        raise SpecError(
            f"attachment {str(path)!r} shrank after it was attached "
            f"({expected} bytes then, {total} read); attach it again"
        )


def check_url(url: Any, path: str | None) -> None:
    if not isinstance(url, str) or urllib.parse.urlsplit(url).scheme.lower() != "https":
        shown = "a non-string" if not isinstance(url, str) else "a non-https URL"
        raise SpecError(f"must be an https:// URL, got {shown}", path=path)
    if not urllib.parse.urlsplit(url).netloc:
        raise SpecError("the URL has no host", path=path)
