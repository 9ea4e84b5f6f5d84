"""How a text file is written: its encoding, delimiter, rows, cells and whether the
first line is a header (number conventions: :mod:`.conventions`).
"""

from __future__ import annotations

import csv
import re

import numpy as np

from .._common.said import Note, Remedy
from .conventions import _INT_FORMAT
from .loaded import DataFormatError


_MISSING = {"", "na", "n/a", "nan", "null", "none", "?", "-", "#n/a"}
#: the csv module refuses fields over 131,072 characters by default; a whole line read with a
#: delimiter it does not hold is one field (a 60,000-column line has millions of characters)
_FIELD_LIMIT = 2 ** 31 - 1


def _lift_field_limit() -> None:
    if csv.field_size_limit() < _FIELD_LIMIT:
        csv.field_size_limit(_FIELD_LIMIT)


_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
         (b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def _sniff_utf16(data: bytes) -> str | None:
    """UTF-16 without a byte-order mark: ASCII text has a NUL in every other byte."""
    head = data[:4096]
    if len(head) < 4:
        return None
    even, odd = head[0::2], head[1::2]
    if odd.count(0) > 0.9 * len(odd) and even.count(0) < 0.1 * len(even):
        return "utf-16-le"
    if even.count(0) > 0.9 * len(even) and odd.count(0) < 0.1 * len(odd):
        return "utf-16-be"
    return None


#: characters of a candidate UTF-16 text judged (the first ones)
_JUDGE_CHARS = 20_000
#: fewest characters whose byte statistics choose a byte order (shorter text: only when the
#: other order does not read as text)
_MIN_CHARS = 16
#: categories of characters that text is made of (letters, marks, numbers, punctuation, symbols,
#: spaces); not private-use, unassigned, surrogate, format or control characters
_TEXT_CATEGORIES = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No",
                              "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs"})


def _entropy(values: np.ndarray) -> float:
    """Shannon entropy (bits) of the byte values."""
    p = np.bincount(values, minlength=256)
    p = p[p > 0] / values.size
    return float(-(p * np.log2(p)).sum())


def _text_share(text: str) -> float:
    """The share of the characters of ``text`` that text is made of (see :data:`_TEXT_CATEGORIES`;
    tab, line feed and carriage return count as text)."""
    import unicodedata

    if not text:
        return 0.0
    ok = sum(ch in "\t\n\r" or unicodedata.category(ch) in _TEXT_CATEGORIES for ch in text)
    return ok / len(text)


#: national 8-bit and double-byte character sets: a character one of them holds is in common use
#: (Latin, Greek, Cyrillic, Hebrew, Arabic, Thai, the JIS, GB2312, KS and Big5 ideographs);
#: a byte-swapped reading lands on rare ideographs (extension A), syllabics, private use...
_LEGACY_CODECS = ("cp1252", "cp1250", "cp1251", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257",
                  "cp874", "cp932", "gb2312", "cp949", "big5")


def _common_share(text: str, limit: int = 4_000) -> float:
    """The share of the (first ``limit``) characters of ``text`` that one of
    :data:`_LEGACY_CODECS` can write."""
    from collections import Counter

    counts = Counter(text[:limit])
    total = sum(counts.values())
    if not total:
        return 0.0

    def common(ch: str) -> bool:
        for codec in _LEGACY_CODECS:
            try:
                ch.encode(codec)
                return True
            except UnicodeEncodeError:
                pass
        return False

    return sum(c for ch, c in counts.items() if ch < "\x80" or common(ch)) / total


def _utf16_text(data: bytes, encoding: str) -> str | None:
    """The head of ``data`` read in ``encoding``; None when it does not decode (an unpaired
    surrogate)."""
    try:
        return data[: 2 * _JUDGE_CHARS].decode(encoding)
    except UnicodeDecodeError as exc:  # (a pair cut at the end of the head is no error)
        if exc.start < 2 * _JUDGE_CHARS - 4:
            return None
        return data[: exc.start].decode(encoding)


def _utf16_share(data: bytes, encoding: str) -> float:
    """The text share (:func:`_text_share`) of the head of ``data`` read in ``encoding``; -1 when
    it does not decode (an unpaired surrogate)."""
    try:
        text = data[: 2 * _JUDGE_CHARS].decode(encoding)
    except UnicodeDecodeError as exc:  # (a pair cut at the end of the head is no error)
        if exc.start < 2 * _JUDGE_CHARS - 4:
            return -1.0
        text = data[: exc.start].decode(encoding)
    return _text_share(text)


def utf16_by_content(data: bytes, *, nul: bool = True) -> tuple[str, str] | None:
    """``(encoding, why)`` when ``data`` reads as UTF-16 without a byte-order mark, else None.

    For text with little or no ASCII (Russian, Japanese, Chinese), where the NUL pattern of
    :func:`_sniff_utf16` does not show.  A byte order is a candidate when the text it decodes
    to (strictly: surrogates paired) is at least 95% letters, marks, digits, punctuation,
    symbols and spaces (a byte-swapped reading gives unpaired surrogates, private-use and
    unassigned characters).  In UTF-16 the byte that carries a character's high half takes few
    values (one script's rows: ``0x04`` for Cyrillic, ``0x30`` and the kanji rows for Japanese,
    ``0x00`` for ASCII) while the low byte is spread.  When ``nul`` (the bytes hold NULs, so
    they are UTF-16 or binary): the only candidate when its high bytes have the lower entropy
    by 1 bit (6 characters or more) or 90% of its characters are in common use (ASCII with a NUL
    read two bytes at a time gives rarer ideographs); of two the one whose characters are in
    common use (:func:`_common_share`: at least 90%, and 10 points more than the other), else
    the one whose high bytes have the lower entropy by at least 1 bit (6 characters or more),
    or with at least :data:`_MIN_CHARS` characters by 0.25 bit (not the scripts of the
    letters: Japanese mixes kana and kanji, a byte-swapped reading is often all ideographs).  Without
    NULs only the candidate whose high bytes have the lower entropy by at least 1 bit, in at
    least :data:`_MIN_CHARS` characters (other 8-bit text read two bytes at a time looks like
    CJK ideographs either way).  Judged on the first :data:`_JUDGE_CHARS` characters.
    """
    if len(data) < 4 or len(data) % 2:
        return None
    head = np.frombuffer(data[: 2 * _JUDGE_CHARS], dtype=np.uint8)
    even, odd = _entropy(head[0::2]), _entropy(head[1::2])
    texts = {enc: _utf16_text(data, enc) for enc in ("utf-16-le", "utf-16-be")}
    shares = {enc: -1.0 if t is None else _text_share(t) for enc, t in texts.items()}
    good = [enc for enc, share in shares.items() if share >= 0.95]
    lower = "utf-16-le" if odd < even else "utf-16-be"  # (LE: the high byte second)
    gap = abs(even - odd)
    entropy = f"its high bytes have {min(even, odd):.1f} bits of entropy, the low bytes {max(even, odd):.1f}"
    n = len(data) // 2
    if not nul:
        if lower not in good or gap < 1.0 or n < _MIN_CHARS:
            return None
        chosen, why = lower, entropy
    elif len(good) == 1 and (good[0] == lower and gap >= 1.0 and n >= 6
                             or _common_share(texts[good[0]]) >= 0.9):
        chosen, why = good[0], "the other byte order does not read as text"
    elif len(good) == 2:
        common = {enc: _common_share(texts[enc]) for enc in good}
        best = max(good, key=common.get)
        if common[best] >= 0.9 and common[best] - min(common.values()) >= 0.1:
            chosen, why = best, (f"{common[best]:.0%} of its characters are in common use, "
                                 f"{min(common.values()):.0%} in the other byte order")
        elif gap >= 1.0 and n >= 6 or gap >= 0.25 and n >= _MIN_CHARS:
            chosen, why = lower, entropy
        else:
            return None
    else:
        return None
    return chosen, f"byte pattern: {why}; {shares[chosen]:.0%} text characters"


def _decode(data: bytes, name: str, notes: list) -> str:
    """Text from bytes: byte-order marks (UTF-8/16/32, e.g. Excel's "Unicode text"), then
    UTF-16 without a mark, UTF-8, and Latin-1 as the last resort; said in ``notes``."""
    encoding = next((enc for bom, enc in _BOMS if data.startswith(bom)), None)
    how = "byte-order mark"
    if encoding is None:
        encoding, how = _sniff_utf16(data), "NUL byte pattern"
    if encoding is None and b"\x00" in data[:65536]:  # UTF-16 with little ASCII, or binary
        found = utf16_by_content(data)
        if found is not None:
            encoding, how = found
    if encoding is not None:
        if encoding != "utf-8-sig":
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError as exc:
                raise DataFormatError(f"{name}: looks like {encoding.upper()} text ({how}) but does "
                                      f"not decode ({exc.reason} at byte {exc.start}); save it as "
                                      "UTF-8 CSV") from None
            notes.append(f"text decoded as {encoding.upper().replace('-LE', '').replace('-BE', '')} "
                         f"(found by its {how})")
            return text.lstrip("\ufeff")
    if b"\x00" in data[:65536]:
        raise DataFormatError(f"{name}: binary content in a text file (NUL bytes that are not "
                              "UTF-16 text in either byte order); is it really CSV/TSV? Save it as "
                              "UTF-8 (or UTF-16 with its byte-order mark)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        notes.append("text is not UTF-8: read as Latin-1")
        return data.decode("latin-1")


def _choose_delimiter(lines: list[str], ext: str) -> str | None:
    """The delimiter giving a constant field count >= 2 on most sample lines.

    Returns None for whitespace-separated text.  Ties go to the preferred
    delimiter (tab for .tsv/.tab, then tab, ';', ',', '|').
    """
    sample = lines[:50]
    _lift_field_limit()
    prefs = ["\t", ";", ",", "|"]
    best = None
    for rank, d in enumerate(prefs):
        counts = [len(r) for r in csv.reader(sample, delimiter=d)]
        modal = max(set(counts), key=counts.count)
        if modal < 2:
            continue
        frac = counts.count(modal) / len(counts)
        bonus = 1 if (d == "\t" and ext in (".tsv", ".tab")) else 0
        score = (frac >= 0.9, bonus, frac, -rank)
        if best is None or score > best[0]:
            best = (score, d)
    if best is not None and best[0][0]:
        return best[1]
    ws = [len(s.split()) for s in sample]
    if min(ws) >= 2 and len(set(ws)) == 1:
        return None
    return best[1] if best is not None else ","


def _strs(col) -> np.ndarray:
    """A column of text cells as stripped str."""
    return np.array([str(c).strip() for c in col], dtype=str)


def _parse_cells(cells: np.ndarray):
    """Parse a block of text cells column by column.

    Returns ``(values, numeric, missing)``: float values (NaN where missing or
    text), whether each cell is a number or a missing marker, whether it is a
    missing marker (empty, NA, ...).  A column of clean numbers takes the fast
    path (one C-level conversion); only columns with text or markers are
    examined cell by cell.
    """
    shape = cells.shape
    values = np.full(shape, np.nan)
    numeric = np.zeros(shape, dtype=bool)
    missing = np.zeros(shape, dtype=bool)
    for j in range(shape[1]):
        col = cells[:, j]
        try:
            values[:, j] = col.astype(np.float64)
            numeric[:, j] = True
            continue
        except ValueError:
            pass
        for i, raw in enumerate(col):
            t = str(raw).strip()
            if t.lower() in _MISSING:
                missing[i, j] = numeric[i, j] = True
                continue
            try:
                values[i, j] = float(t)
                numeric[i, j] = True
            except ValueError:
                pass
    return values, numeric, missing


def _header_note(has_header: bool, how: str) -> Note:
    if has_header:
        plain, lead, other = f"first line read as column names ({how})", "if it is data,", "no"
    else:
        plain, lead, other = f"first line read as data ({how})", "if it holds column names,", "yes"
    return Note(plain, text=f"header: {plain}; {lead} choose header {other!r}", argument="header",
                value=has_header, remedy=Remedy("header", (not has_header,), lead=lead))


def _written_with_decimals(texts, values, missing, sample: int = 1000) -> bool:
    """Whether a numeric column is written with decimals (``0.5``, ``1.0``, ``1e3``),
    not as integers: a non-integral value says so at once, else the text of its
    first ``sample`` cells is looked at (a column is written one way)."""
    with np.errstate(invalid="ignore"):
        if (values[~missing] != np.round(values[~missing])).any():
            return True
    return any(not _INT_FORMAT.fullmatch(str(t).strip())
               for t, miss in zip(texts[:sample], missing[:sample]) if not miss)


def _numeric_header(cells, values, numeric, missing) -> str | None:
    """Why an all-number first line is column names (years, ids, wavelengths), or None.

    It is when its numbers are distinct integers (written as such) and either
    (a) above columns written with decimals, and increasing/decreasing or far
    outside the values below, or (b) increasing/decreasing and, in every
    non-constant column (at least 2, with at least 3 body rows), farther from
    the body's range than 3 times its width.  A file of 2 lines has no header
    of numbers (one row of data would be left).
    """
    body_num = numeric[1:].all(axis=0) & ~missing[1:].all(axis=0)
    cols = np.flatnonzero(body_num & numeric[0] & ~missing[0])
    if cols.size < 2 or cells.shape[0] < 3:  # a header over a single row would leave no PCA
        return None
    v = values[0, cols]
    if np.unique(v).size < cols.size or not np.isfinite(v).all():
        return None
    steps = np.diff(v)
    monotone = bool((steps > 0).all() or (steps < 0).all())
    first = [str(cells[0, j]).strip() for j in cols]
    ints = all(_INT_FORMAT.fullmatch(t) for t in first)
    if not ints:
        return None
    every = cols.size == values.shape[1]  # then views, not copies, of a large matrix
    body = values[1:] if every else values[1:, cols]
    bmiss = missing[1:] if every else missing[1:, cols]

    def nonintegral(rows, idx):
        """Whether each column ``idx`` holds a non-integer in ``rows``, a block of columns at a time."""
        out = np.zeros(idx.size, dtype=bool)
        step = max(1, 1_000_000 // max(1, rows.stop - rows.start))
        for a in range(0, idx.size, step):
            cs = idx[a:a + step]
            blk = body[rows, cs[0]:cs[-1] + 1] if cs[-1] - cs[0] + 1 == cs.size else body[rows][:, cs]
            mb = bmiss[rows, cs[0]:cs[-1] + 1] if cs[-1] - cs[0] + 1 == cs.size else bmiss[rows][:, cs]
            filled = np.where(mb, 0.0, blk)
            with np.errstate(invalid="ignore"):
                out[a:a + step] = (filled != np.round(filled)).any(axis=0)
        return out

    # a column is written with decimals when one of its values is not an integer (most columns
    # settle on their first rows), else when one of its first cells is not written as an integer
    all_cols = np.arange(cols.size)
    nonint = nonintegral(slice(0, min(1000, body.shape[0])), all_cols)
    if not nonint.all() and body.shape[0] > 1000:
        rest = np.flatnonzero(~nonint)
        nonint[rest] = nonintegral(slice(0, body.shape[0]), rest)
    decimal_body = all(nonint[c] or _written_with_decimals(cells[1:, j], body[:, c], missing[1:, j])
                       for c, j in enumerate(cols))
    outside = False
    if body.shape[0] >= 3:
        with np.errstate(invalid="ignore"):
            lo, hi = np.nanmin(body, axis=0), np.nanmax(body, axis=0)
        span, dist = hi - lo, np.maximum(lo - v, v - hi)
        # constant columns say nothing; every other one must sit far from the first line
        varied = span > 0
        outside = bool(varied.sum() >= 2 and (dist[varied] > 3 * span[varied]).all())
    shown = ", ".join(first[:3]) + (", ..." if len(first) > 3 else "")
    if decimal_body and (monotone or outside):
        return (f"its numbers ({shown}) are distinct integers over decimal numbers"
                + (", in order" if monotone else ", far outside the values below"))
    if monotone and outside:
        return f"its numbers ({shown}) are integers in order, far outside the values below them"
    return None


def _decide_header(header, cells, values, numeric, missing) -> tuple[bool, str]:
    """Whether the first line holds column names, and the note that says so and why."""
    if header is True:
        return True, _header_note(True, "as asked")
    if header is False:
        return False, _header_note(False, "as asked")
    first_text = ~numeric[0] & ~missing[0]
    if first_text.all() or (first_text & numeric[1:].any(axis=0)).any():
        return True, _header_note(True, "detected: text above numbers")
    if cells.shape[0] < 2:
        return False, _header_note(False, "a single line")
    why = _numeric_header(cells, values, numeric, missing)
    if why is not None:
        return True, _header_note(True, f"detected: {why}")
    return False, _header_note(False, "detected: numbers like the lines below")


#: cells starting with '#' that are values, not comments (spreadsheet errors, missing markers)
_HASH_VALUES = re.compile(r"#(?:N/A|VALUE!|DIV/0!|REF!|NAME\?|NUM!|NULL!|GETTING_DATA|NA\b)", re.IGNORECASE)


def _is_comment(line: str) -> bool:
    s = line.lstrip()
    return s.startswith("#") and not _HASH_VALUES.match(s)


def _comment_lines(numbered: list, ext: str, notes: list):
    """``numbered`` without its comment lines (starting with ``#``, as R, NumPy and scanpy's
    example files write them), said in ``notes``; and the comment line just above the data when
    it may be a header written as a comment (``# a b c``), else None.

    Lines starting with ``#`` are comments only when they are fewer than the other lines (a
    column of ``#ff0000`` colours is data) and not a spreadsheet error or marker (``#N/A``).
    """
    comments = [k for k, (_, ln) in enumerate(numbered) if _is_comment(ln)]
    if not comments or len(comments) >= len(numbered) - len(comments):
        return numbered, None
    rest = [row for k, row in enumerate(numbered) if k not in set(comments)]
    first_data = next(k for k in range(len(numbered)) if k not in set(comments))
    shown = ", ".join(f"line {numbered[k][0]}" for k in comments[:3]) + (", ..." if len(comments) > 3 else "")
    example = numbered[comments[0]][1].strip()
    notes.append(f"skipped {len(comments)} comment line(s) starting with '#' ({shown}: "
                 f"{example[:40]!r}{'...' if len(example) > 40 else ''})")
    above = numbered[first_data - 1] if first_data >= 1 and first_data - 1 in set(comments) else None
    return rest, above


def _comment_header(header_line, numbered, line_no, lines, delim, notes):
    """The comment line above the data read as the header when it has as many fields as the
    data's lines and the first of those holds only numbers (``numpy.savetxt(header=...)``)."""
    no, raw = header_line
    text = raw.lstrip()[1:].strip()

    def fields(ln):
        return ln.split() if delim is None else next(csv.reader([ln], delimiter=delim))

    head, first = fields(text), fields(lines[0])
    if len(head) != len(first) or len(head) < 2 or not all(_is_float(c) for c in first):
        return numbered, line_no, lines
    notes.append(f"line {no} {raw.strip()[:40]!r} read as the header, its '#' removed (as numpy.savetxt "
                 "writes a header)")
    return [(no, text)] + numbered, np.concatenate([[no], line_no]), [text] + lines


def _is_float(cell: str) -> bool:
    try:
        float(cell.strip())
        return True
    except ValueError:
        return False


def _split_rows(text: str, name: str, ext: str, notes: list):
    """``(rows of fields, file line number of each row, delimiter)``; ragged rows refused."""
    raw_lines = text.splitlines()
    numbered = [(i + 1, ln) for i, ln in enumerate(raw_lines) if ln.strip()]
    if not numbered:
        raise DataFormatError(f"{name}: the file is empty (no data rows)")
    inner_blank = numbered[-1][0] - len(numbered)
    if inner_blank:
        notes.append(f"skipped {inner_blank} blank line(s)")
    numbered, header_line = _comment_lines(numbered, ext, notes)
    line_no = np.array([i for i, _ in numbered])
    lines = [ln for _, ln in numbered]
    delim = _choose_delimiter(lines, ext)
    if header_line is not None:  # '# a b c' as numpy.savetxt writes a header: checked on the data's delimiter
        numbered, line_no, lines = _comment_header(header_line, numbered, line_no, lines, delim, notes)
    if delim is None:
        rows = [ln.split() for ln in lines]
        notes.append("whitespace-separated columns")
    else:
        _lift_field_limit()
        rows = list(csv.reader(lines, delimiter=delim))
        notes.append(f"delimiter {'TAB' if delim == chr(9) else repr(delim)}")
    # drop a trailing empty field present on every row (a trailing delimiter)
    if rows and all(len(r) > 1 and r[-1].strip() == "" for r in rows):
        rows = [r[:-1] for r in rows]
        notes.append("ignored a trailing delimiter at the end of every line")
    widths = np.array([len(r) for r in rows])
    if len(rows) > 1 and (widths[1:] == widths[0] + 1).all() and all(r[-1].strip() == "" for r in rows[1:]):
        rows = [rows[0]] + [r[:-1] for r in rows[1:]]
        widths[1:] -= 1
        notes.append("ignored a trailing delimiter at the end of every data line")
    elif len(rows) > 1 and (widths[1:] == widths[0] + 1).all():
        # R's write.table writes row names without a header cell: the header is one field short
        rows[0] = [""] + list(rows[0])
        widths[0] += 1
        notes.append("the first line has one field fewer than the others (as R's write.table writes "
                     "row names): an empty name added for the first column")
    if (widths != widths[0]).any():
        bad = np.flatnonzero(widths != widths[0])
        shown = ", ".join(f"line {line_no[i]} has {widths[i]}" for i in bad[:5])
        raise DataFormatError(f"{name}: ragged rows: the first line has {widths[0]} field(s) but "
                              f"{shown}{', ...' if bad.size > 5 else ''} "
                              f"({bad.size} line(s) differ); every row needs the same number "
                              "of fields")
    return rows, line_no, delim
