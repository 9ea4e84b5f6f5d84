"""The command line's own error: bad input found while reading options or files (exit code 1,
the message printed as is, no traceback)."""


class _BadInput(Exception):
    pass
