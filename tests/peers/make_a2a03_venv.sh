#!/bin/sh
# Build tests/peers/.venv-a2a03 with the a2a-sdk 0.3 line, for tests/a2a/test_a2a_sdk03.py.
# The 0.3 and 1.x SDKs cannot share an environment; the test skips when this venv is absent.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
python3 -m venv "$here/.venv-a2a03"
"$here/.venv-a2a03/bin/pip" install --quiet "a2a-sdk[http-server]>=0.3,<0.4" uvicorn
