"""The CLI tests run the installed console script against the ``mantyx_server`` emulator."""
