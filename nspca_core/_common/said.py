"""Messages as data: what went wrong (or what was done) and what to do, so that each front says it in
its own words without reading the text.

The library's message names its arguments (``nan_policy='drop-rows'``, ``resize=(height, width)``);
the app names its controls, the command line its options.  So an :class:`InputError` (and a reader's
:class:`Note`) carries, beside its text:

* ``plain``: the text without any argument named and without the remedy (what is wrong, or what was
  done), positions counted as the text says;
* ``remedy``: a :class:`Remedy`, the argument to give and the values to choose from;
* ``source``: the file the text is about, when it leads the text as ``"<source>: "``;
* for a note, ``argument`` and ``value``: the choice that was applied.

A front shows ``plain`` and says the remedy with its own control for ``remedy.argument`` (or leaves it
out when it has no such control); it never rewrites the text.  :func:`said` composes the library's
own text from the same parts.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Remedy", "Note", "said", "either"]


def either(items) -> str:
    """``"a"``, ``"a or b"``, ``"a, b or c"``."""
    items = [str(t) for t in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


@dataclass(frozen=True)
class Remedy:
    """What to do, as data: give ``argument`` one of ``choices`` (``verb="choose"``), a value spelled
    like ``spelled`` (``verb="pass"``), or a larger limit (``verb="raise"``).

    ``lead``: what comes before, e.g. ``"if it is data,"`` or ``"give every image the same size,
    or"``; ``purpose``: what comes after, e.g. ``"to resize them"``.  Words, never argument names.
    """

    argument: str
    choices: tuple = ()
    verb: str = "choose"
    spelled: str = ""
    lead: str = ""
    purpose: str = ""

    def api(self) -> str:
        """The remedy as the library says it (``choose nan_policy='drop-rows' or 'impute-mean'``)."""
        if self.verb == "raise":
            core = f"raise {self.argument}"
        elif self.verb == "choose" and self.choices:
            core = f"choose {self.argument}=" + either(repr(c) for c in self.choices)
        else:
            core = f"pass {self.argument}={self.spelled or '...'}"
        return " ".join(t for t in (self.lead, core, self.purpose) if t)


def said(plain: str, *, source: str | None = None, remedy: Remedy | None = None,
         applied: tuple | None = None) -> str:
    """The library's text from its parts: ``"<source>: "``, ``"<argument>=<value>: "`` for a choice
    applied, ``plain``, then ``"; "`` and the remedy."""
    text = plain
    if applied is not None:
        text = f"{applied[0]}={applied[1]!r}: {text}"
    if source:
        text = f"{source}: {text}"
    if remedy is not None:
        text = f"{text}; {remedy.api()}"
    return text


class Note(str):
    """A reader's note: the library's text (a ``str``, compared and printed as before) with its parts.

    ``Note(plain, argument=..., value=..., remedy=..., because=...)`` composes the text with
    :func:`said` unless ``text`` is given.  ``argument``/``value``: the choice the note reports as
    applied (``nan_policy``, ``"drop-rows"``); ``because``: the reasons of a decision, in words.
    """

    plain: str
    argument: str | None
    value: object
    remedy: Remedy | None
    because: str | None

    def __new__(cls, plain: str, *, argument: str | None = None, value=None, remedy: Remedy | None = None,
                because: str | None = None, text: str | None = None):
        if text is None:
            text = said(plain, remedy=remedy, applied=(argument, value) if argument and remedy is None else None)
        self = super().__new__(cls, text)
        self.plain, self.argument, self.value, self.remedy, self.because = plain, argument, value, remedy, because
        return self

    def __reduce__(self):
        return (_note, (str(self), dict(vars(self))))


def _note(text: str, fields: dict) -> Note:
    return Note(fields.pop("plain"), text=text, **fields)
