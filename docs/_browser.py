"""A stand-in for the person at the browser, for the OAuth page's sign-in.

``BROWSER="python docs/_browser.py %s"`` makes :func:`webbrowser.open` run this
with the sign-in URL: the local emulator approves a sign-in at once, so a
person would only follow the URL and its redirect back to the waiting
listener. That second request is made by a detached copy of this script, so
``webbrowser.open`` returns (it waits for its browser) while the listener waits.
"""

from __future__ import annotations

import subprocess
import sys

import requests


def main(argv: list[str]) -> int:
    """Follow a sign-in URL (``URL``) or, detached, its redirect (``--back URL``)."""
    if argv[:1] == ["--back"]:
        requests.get(argv[1], timeout=10)
        return 0
    approval = requests.get(argv[0], allow_redirects=False, timeout=10)
    back = approval.headers["Location"]
    subprocess.Popen([sys.executable, __file__, "--back", back], start_new_session=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
