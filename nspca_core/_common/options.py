"""Keyword options: unknown names are an error that names them and what is allowed."""

from __future__ import annotations

from .validation import InputError

__all__ = ["UnknownOptionError", "check_options"]


class UnknownOptionError(InputError, TypeError):
    """An unknown keyword option: a ``TypeError`` (as Python's own for a misspelt keyword)
    that is also an :class:`~nspca_core.InputError`."""


def check_options(options, allowed, where: str) -> None:
    """Raise :class:`UnknownOptionError` naming every option not in ``allowed``."""
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise UnknownOptionError(f"unknown option(s) {unknown} for {where}; "
                                 f"allowed: {sorted(allowed)}")
