"""Command line: ``python -m nspca_core fit|certify DATA ...``, ``nspca app``, ``nspca --version``.

Exit codes: 0 ok, 1 bad input (the message on stderr), 2 internal error.

Modules: :mod:`.options` (the arguments and their checks), :mod:`.reading`
(DATA and the components to certify), :mod:`.commands` (``fit``, ``certify``
and :func:`main`), :mod:`.output` (the files written) and :mod:`.serve` (``app``: the
Streamlit app of the package ``nspca_app``, and the version).
"""

from .commands import TOPIC_WORDS, main
from .options import (EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_OK, MAX_NET_SAMPLES, WEIGHTINGS, _BadInput,
                      _check_net_size)
from .output import _save_image_grid

__all__ = ["main", "EXIT_OK", "EXIT_BAD_INPUT", "EXIT_INTERNAL", "MAX_NET_SAMPLES", "WEIGHTINGS",
           "TOPIC_WORDS"]
