"""Constants shared by the seam tests in tests/core (imported by module name)."""

BASE = "https://mantyx.test"
ROOT = f"{BASE}/api/v1/workspaces/acme"
KEY = "mantyx_unit_secret_key_123"
