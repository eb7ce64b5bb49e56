"""The package version, kept apart so setup.cfg can read it without importing deps."""

__all__ = ["__version__"]

__version__ = "0.1.0"
