"""parse_docstring: Google, NumPy and reST styles."""

from __future__ import annotations

from mantyx_sync._tools.docstring import Docstring, parse_docstring

GOOGLE = """Copy a file.

    Both paths are local.

    Args:
        src (str): where to read from.
        dst: where to write,
            created when missing.
        *extra: ignored.

    Returns:
        int: bytes copied.

    Raises:
        OSError: when the disk is full.
    """

NUMPY = """
    Copy a file.

    Parameters
    ----------
    src : str
        where to read from.
    dst, backup : str
        where to write,
        created when missing.
    flag : bool

    Returns
    -------
    int
        bytes copied.

    Notes
    -----
    Nothing else.
    """

REST = """Copy a file.

    Both paths are local.

    :param str src: where to read from.
    :param dst: where to write,
        created when missing.
    :type dst: str
    :raises OSError: when the disk is full.
    :returns: bytes copied.
    :rtype: int
    """


def test_google_style() -> None:
    doc = parse_docstring(GOOGLE)
    assert doc == Docstring(
        summary="Copy a file.\n\nBoth paths are local.",
        params={
            "src": "where to read from.",
            "dst": "where to write, created when missing.",
            "extra": "ignored.",
        },
    )  # the Returns section is neither summary nor a parameter


def test_google_section_aliases() -> None:
    for header in ("Arguments:", "Parameters:", "Keyword Args:"):
        doc = parse_docstring(f"Do it.\n\n{header}\n    a: the a.\n")
        assert doc.params == {"a": "the a."}, header
        assert doc.summary == "Do it."


def test_numpy_style() -> None:
    doc = parse_docstring(NUMPY)
    assert doc.summary == "Copy a file."
    assert doc.params == {
        "src": "where to read from.",
        "dst": "where to write, created when missing.",
        "backup": "where to write, created when missing.",
    }
    assert "bytes copied." not in (doc.summary, *doc.params.values())


def test_rest_style() -> None:
    doc = parse_docstring(REST)
    assert doc.summary == "Copy a file.\n\nBoth paths are local."
    assert doc.params == {
        "src": "where to read from.",
        "dst": "where to write, created when missing.",
    }
    assert "bytes copied." not in (doc.summary, *doc.params.values())


def test_summary_only_and_empty() -> None:
    assert parse_docstring("  Just a summary.  ") == Docstring(summary="Just a summary.")
    assert parse_docstring(None) == Docstring(summary="")
    assert parse_docstring("") == Docstring(summary="")


def test_text_that_merely_ends_with_a_colon_is_not_a_section() -> None:
    doc = parse_docstring("Do this:\n\n  - one\n  - two\n\nArgs:\n    x: the x.\n")
    assert doc.summary == "Do this:\n\n  - one\n  - two"
    assert doc.params == {"x": "the x."}


def test_google_section_after_params_ends_the_params() -> None:
    doc = parse_docstring("S.\n\nArgs:\n    a: first.\nExample:\n    b: not a param.\n")
    assert doc.params == {"a": "first."}
