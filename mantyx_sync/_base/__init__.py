"""Foundation: imports nothing else of the package; every other wing (the emulator
too) may use it."""

__all__: list[str] = []
