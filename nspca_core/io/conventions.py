"""Numbers written other than as Python's ``float()`` reads them: thousands separators,
decimal commas and hexadecimal, read as numbers or refused with the column named.
"""

from __future__ import annotations

import re

import numpy as np

from .loaded import DataFormatError


_AMBIGUOUS_COMMA = re.compile(r"[+-]?\d{1,3},\d{3}")
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][+-]?\d+)?")
_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+(?:[eE][+-]?\d+)?")
_DOT_GROUPED = re.compile(r"[+-]?\d{1,3}(?:\.\d{3})+")
_DOT_GROUPED_DECIMAL_COMMA = re.compile(r"[+-]?\d{1,3}(?:\.\d{3})+,\d*")
_HEX = re.compile(r"[+-]?0[xX][0-9a-fA-F]+")
_INT_FORMAT = re.compile(r"[+-]?\d+|[+-]?\d{1,3}(?:,\d{3})+")
#: largest integer a float64 holds exactly
_EXACT_INT = 2 ** 53


def _cell_kind(t: str) -> str | None:
    """Which convention a text cell that ``float()`` refused follows, if any."""
    if _AMBIGUOUS_COMMA.fullmatch(t):
        return "ambiguous"  # "1,000": 1000 with a thousands separator, or 1.0 with a decimal comma
    if _THOUSANDS.fullmatch(t):
        return "thousands"
    if _DECIMAL_COMMA.fullmatch(t):
        return "decimal"
    if _DOT_GROUPED_DECIMAL_COMMA.fullmatch(t):
        return "decimal"
    if _HEX.fullmatch(t):
        return "hex"
    return None


def _col_label(cells: np.ndarray, numeric: np.ndarray, j: int) -> str:
    """A column's name for messages before the header is decided: its first cell if text."""
    first = str(cells[0, j]).strip()
    return f"'{first}'" if first and not numeric[0, j] else f"column {j + 1}"


def _fits(kind: str | None, convention: str) -> bool:
    """Whether a cell of ``kind`` is a number in ``convention``."""
    if convention == "hex":
        return kind == "hex"
    return kind in ("ambiguous", convention)


def _convention_value(t: str, convention: str) -> float:
    if convention == "hex":
        return float(int(t, 16))
    if convention == "thousands":
        return float(t.replace(",", ""))
    return float(t.replace(".", "").replace(",", "."))  # decimal comma, '.' groups thousands


def _text_kinds(cells, numeric, j: int, start: int) -> dict | None:
    """``{kind: first example}`` of the text cells of column j; None when one of them
    below row ``start`` follows no known number convention (a real text column).  A
    first-line cell in no convention is a column name and is passed over."""
    found: dict = {}
    for i in np.flatnonzero(~numeric[:, j]):
        t = str(cells[i, j]).strip()
        kind = _cell_kind(t)
        if kind is None:
            if i < start:
                continue
            return None
        found.setdefault(kind, t)
    return found


def _number_conventions(cells, values, numeric, missing, delim, name: str, notes: list) -> dict:
    """Read thousands separators, decimal commas and hex as numbers, or refuse clearly.

    Only columns whose every text cell (below the first line, which may be a
    header) follows one convention are converted; one convention holds for the
    whole file.  ``"1,000"`` alone is ambiguous: read as 1000 in a comma-delimited
    file (where such cells must be quoted, as spreadsheets do for thousands),
    refused otherwise unless another column settles it.  ``values``/``numeric``
    are updated in place; returns ``{column index: reason}`` for hex columns
    left as text.
    """
    start = 1 if cells.shape[0] > 1 else 0
    kinds = {}
    for j in np.flatnonzero(~numeric.all(axis=0)):
        found = _text_kinds(cells, numeric, j, start)
        if found:
            kinds[int(j)] = found
    if not kinds:
        return {}
    label = lambda j: _col_label(cells, numeric, j)  # noqa: E731
    hexa = {j: f for j, f in kinds.items() if "hex" in f}
    for j, f in hexa.items():
        if set(f) != {"hex"} or (numeric[start:, j] & ~missing[start:, j]).any():
            raise DataFormatError(f"{name}: column {label(j)} mixes hexadecimal numbers "
                                  f"({f.get('hex')!r}) with other numbers; write the whole column "
                                  "in one convention (all 0x... or all decimal)")
    convention = _comma_convention({j: f for j, f in kinds.items() if j not in hexa}, delim,
                                   label, name)
    done: dict = {"thousands": [], "decimal": [], "hex": []}
    left_as_text: dict = {}
    for j in kinds:
        conv = "hex" if j in hexa else convention
        # the first line joins in only when it is written in the same convention (else a name)
        ok = [i for i in np.flatnonzero(~numeric[:, j])
              if i >= start or _fits(_cell_kind(str(cells[i, j]).strip()), conv)]
        vals = [_convention_value(str(cells[i, j]).strip(), conv) for i in ok]
        if conv == "hex" and any(abs(v) > _EXACT_INT for v in vals):
            left_as_text[j] = ("hexadecimal values above 2**53 (identifiers?), not exact as "
                               "numbers")
            continue
        if conv == "decimal":
            _dotted_in_decimal_column(cells, numeric, missing, values, j, start, label(j), name)
        values[ok, j] = vals
        numeric[ok, j] = True
        done[conv].append(j)
    if convention == "decimal":
        _dotted_columns_in_decimal_file(cells, numeric, missing, done["decimal"], start, label,
                                        name, notes)
    examples = {"thousands": "'1,234' = 1234", "decimal": "'3,14' = 3.14", "hex": "'0x1F' = 31"}
    words = {"thousands": "with thousands separators", "decimal": "with a decimal comma",
             "hex": "in hexadecimal"}
    for conv, cols in done.items():
        if cols:
            notes.append(f"{len(cols)} column(s) written {words[conv]}, read as numbers "
                         f"({examples[conv]}): {', '.join(label(j) for j in cols[:10])}"
                         f"{', ...' if len(cols) > 10 else ''}")
    return left_as_text


def _comma_convention(commas: dict, delim, label, name: str) -> str | None:
    """The file's one comma convention ("thousands" or "decimal") from the columns' cells."""
    dec = [j for j, f in commas.items() if "decimal" in f]
    thou = [j for j, f in commas.items() if "thousands" in f]
    if dec and thou:
        raise DataFormatError(
            f"{name}: column {label(dec[0])} writes numbers with a decimal comma "
            f"({commas[dec[0]]['decimal']!r}) but column {label(thou[0])} with thousands separators "
            f"({commas[thou[0]]['thousands']!r}); use one convention in the whole file")
    if dec or thou:
        return "decimal" if dec else "thousands"
    if not commas:
        return None
    if delim == ",":
        return "thousands"  # quoted "1,000" in a comma-separated file: a spreadsheet's thousands
    j = next(iter(commas))
    raise DataFormatError(
        f"{name}: column {label(j)} holds numbers like {commas[j]['ambiguous']!r}, which read "
        "as a thousand with a thousands separator or as 1.0 with a decimal comma; write them "
        "without thousands separators (1000) or with a decimal point (1.0)")


def _dotted_in_decimal_column(cells, numeric, missing, values, j, start, label, name) -> None:
    """In a decimal-comma column, '1.234' groups thousands (1234); '3.5' is refused."""
    for i in np.flatnonzero(numeric[:, j] & ~missing[:, j]):
        t = str(cells[i, j]).strip()
        if "." not in t:
            continue
        if _DOT_GROUPED.fullmatch(t):
            values[i, j] = float(t.replace(".", ""))
            continue
        raise DataFormatError(f"{name}: column {label} mixes a decimal point ({t!r}) with decimal "
                              "commas; write every number of the column the same way")


def _dotted_columns_in_decimal_file(cells, numeric, missing, converted, start, label, name,
                                    notes) -> None:
    """Other columns of a decimal-comma file: '1.500' may mean 1500 -- refuse; '0.25' is said."""
    dotted = []
    for j in range(cells.shape[1]):
        if j in converted or not numeric[start:, j].all() or missing[start:, j].all():
            continue
        texts = cells[start:, j].astype(str)
        with_dot = [t.strip() for t in texts[np.char.find(texts, ".") >= 0]]
        if not with_dot:
            continue
        if all(_DOT_GROUPED.fullmatch(t) for t in with_dot):
            raise DataFormatError(
                f"{name}: column {label(j)} holds numbers like {with_dot[0]!r} in a file that writes "
                "decimals with commas: the '.' may be a thousands separator (1500) or a decimal "
                "point (1.5); write them unambiguously")
        dotted.append(j)
    if dotted:
        notes.append(f"column(s) {', '.join(label(j) for j in dotted[:10])} use a decimal point "
                     "while the file uses decimal commas elsewhere: both read as decimals")
