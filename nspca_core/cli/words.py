"""The library's messages said with the command line's options (issue 37 item 5).

The library's errors (``InputError``) and its readers' notes (``Note``) carry their message in parts
(:mod:`nspca_core._common.said`): ``plain`` (what is wrong or what was done, naming no argument),
``remedy`` (the argument to give and the values to choose from), ``source`` (the file),
``argument``/``value`` (for a note: the choice applied) and ``predicate`` (what a message about one
argument says of it).  :func:`for_shell` composes the command line's sentence from those parts with
the options of :data:`FLAGS`; it never reads nor rewrites the text.  A message without parts, or
about an argument the command line has no option for, is printed as the library wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .._common.said import either

__all__ = ["Flag", "FLAGS", "for_shell"]

#: most values listed in a remedy ("choose --variable a, b or c"); beyond, the option and its metavar
_LISTED = 6


@dataclass(frozen=True)
class Flag:
    """A command-line option for the library's argument of the same meaning.

    ``name``: as typed (``"--nan-policy"``); ``metavar``: what to type after it when the remedy is to
    pass a value (``"HEIGHTxWIDTH"``; empty for a switch such as ``--download``); ``values``: the
    library's value -> as typed, where they differ (``header`` True -> ``yes``)."""

    name: str
    metavar: str = ""
    values: dict = field(default_factory=dict)

    def typed(self, value) -> str:
        """``value`` as typed after the option: a size ``(32, 32)`` as ``32x32``."""
        if isinstance(value, tuple) and all(isinstance(v, int) for v in value):
            return "x".join(map(str, value))
        if isinstance(value, bool) or value is None:  # (True == 1: a dict lookup would mix them up)
            return str(next((t for v, t in self.values.items() if v is value), value))
        return str(self.values.get(value, value))

    def set_to(self, value) -> str:
        """``--nan-policy drop-rows``: the option with a value given."""
        return f"{self.name} {self.typed(value)}"


#: the library's argument -> the command-line option that sets it (see ``options._parser``)
FLAGS = {
    "k": Flag("--k"), "d": Flag("--d"), "eps": Flag("--eps"),
    "seed": Flag("--random-state"), "random_state": Flag("--random-state"),
    "n_components": Flag("--components"), "method": Flag("--method"), "strategy": Flag("--strategy"),
    "source": Flag("DATA"),
    "variable": Flag("--variable", "NAME"),
    "nan_policy": Flag("--nan-policy", "POLICY"),
    "resize": Flag("--resize", "HEIGHTxWIDTH"),
    "header": Flag("--header", "yes|no", {None: "auto", True: "yes", False: "no"}),
    "orientation": Flag("--orientation", "ORIENTATION"),
    "max_bytes": Flag("--max-bytes", "BYTES"),
    "label_column": Flag("--label-column", "NAME"),
    "layer": Flag("--layer", "NAME"),
    "use_raw": Flag("--use-raw"),
    "platform": Flag("--platform", "GPL"),
    "sheet": Flag("--sheet", "NAME"),
    "sample_info": Flag("--sample-info", "FILE"),
    "sample_id_column": Flag("--sample-id-column", "NAME"),
    "vocab": Flag("--vocab", "FILE"),
    "weighting": Flag("--weighting", "WEIGHTING", {"counts": "raw"}),
    "text_column": Flag("--text-column", "COLUMN"),
    "stop_words": Flag("--stop-words", "WORDS", {None: "none"}),
    "min_df": Flag("--min-df", "N"),
    "download": Flag("--download"),
}


def _remedy(remedy) -> str | None:
    """The remedy with the command line's option, or None when no option sets its argument."""
    flag = FLAGS.get(remedy.argument)
    if flag is None:
        return None
    if remedy.verb == "raise":
        core = f"raise {flag.name}"
    elif remedy.verb == "choose" and 0 < len(remedy.choices) <= _LISTED:
        core = f"choose {flag.name} " + either(flag.typed(c) for c in remedy.choices)
    else:
        core = f"pass {flag.name}" + (f" {flag.metavar}" if flag.metavar else "")
    return " ".join(t for t in (remedy.lead, core, remedy.purpose) if t)


def for_shell(said, *, reason: bool = False) -> str:
    """``said`` (an error of the library, a reader's note, or a text) in the command line's words.

    Composed from the parts the library gives (see the module's docstring), never from its text.  A
    note of a choice applied leads with the option and its value (``--nan-policy drop-rows: dropped 1
    row(s) ...``); ``reason``: the note is why a column is not a feature, said with the option after it
    (``NaN/inf values (--nan-policy drop-columns)``).
    """
    plain = getattr(said, "plain", None)
    flag = FLAGS.get(getattr(said, "argument", None))
    if plain is None:
        predicate = getattr(said, "predicate", None)
        return f"{flag.name} {predicate}" if flag is not None and predicate is not None else str(said)
    source = getattr(said, "source", None)
    text = plain if source is None else f"{source}: {plain}"
    if isinstance(said, str) and flag is not None:  # a reader's note: the choice it applied
        applied = flag.set_to(getattr(said, "value", None))
        text = f"{text} ({applied})" if reason else f"{applied}: {text}"
    remedy = getattr(said, "remedy", None)
    words = None if remedy is None else _remedy(remedy)
    return f"{text}; {words}" if words else text
