"""A vocabulary of many distinct words at a few bytes a word (issue 40: a million distinct words
within 4x the text).

:class:`WordCounts` takes each document's ``{word: count}`` and keeps no Python string per
distinct word: words are keyed by a 64-bit hash (``hash`` of the str), found in a sorted NumPy
array of hashes, and written once, as UTF-8, into one byte buffer with the end offset of each.
Every hash match is checked against the stored word, so two words that share a hash stay two
words (the later one is looked up by its text in a small dict): the counts are exact, whatever
the hash.  :class:`Words` is the result's vocabulary: a read-only sequence of str over the
buffer, sorted as Python sorts str (UTF-8 byte order is code-point order).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

__all__ = ["Words", "WordCounts"]

#: (document, word) pairs gathered before their words are looked up together
_BATCH = 1 << 14
#: words handled at a time when sorting and copying (bounds the temporary arrays)
_BLOCK = 1 << 14
_U32_MAX = 0xFFFF_FFFF
#: a word's key: the top 38 bits of its 64-bit hash; the top 6 choose one of 64 buckets, each a
#: sorted uint32 array of the other 32 (a rare shared key is one more checked collision)
_KEY_SHIFT, _BUCKETS = 26, 64


def _trim() -> None:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim``; nothing
    elsewhere): the arrays freed between two steps are otherwise still resident when the next
    large array is mapped anew, and the peak memory counts both."""
    global _TRIM
    if _TRIM is None:
        try:
            import ctypes

            _TRIM = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _TRIM = False
    if _TRIM:
        _TRIM(0)


_TRIM = None


def _encode(word: str) -> bytes:
    return word.encode("utf-8", "surrogatepass")


class Words(Sequence):
    """A read-only sequence of str kept as one UTF-8 buffer and the end offset of each word.

    Indexing gives a str (a slice a list of str); it compares equal to a list of the same words.
    A word costs its UTF-8 bytes and 4 or 8 bytes of offset instead of a Python str (about 60
    bytes) and a list slot.
    """

    __slots__ = ("_buf", "_ends")

    def __init__(self, buf, ends: np.ndarray):
        self._buf = buf if isinstance(buf, (bytes, bytearray)) else bytes(buf)  # (not copied)
        self._ends = np.asarray(ends)

    @classmethod
    def from_list(cls, words) -> Words:
        parts = [_encode(str(w)) for w in words]
        return cls(b"".join(parts), np.cumsum([len(p) for p in parts], dtype=np.int64))

    def __len__(self) -> int:
        return int(self._ends.size)

    def _word(self, i: int) -> str:
        start = int(self._ends[i - 1]) if i else 0
        return self._buf[start:int(self._ends[i])].decode("utf-8", "surrogatepass")

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._word(j) for j in range(*i.indices(len(self)))]
        j = int(i)  # an int or a NumPy integer
        if j != i:
            raise TypeError(f"word indices must be integers or slices, not {type(i).__name__}")
        if j < 0:
            j += len(self)
        if not 0 <= j < len(self):
            raise IndexError(f"word index {i} out of range for {len(self)} words")
        return self._word(j)

    def __iter__(self):
        buf, start = self._buf, 0
        for end in self._ends.tolist():
            yield buf[start:end].decode("utf-8", "surrogatepass")
            start = end

    def __eq__(self, other):
        if isinstance(other, Words):
            return self._buf == other._buf and np.array_equal(self._ends, other._ends)
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None

    def __add__(self, other):
        return list(self) + list(other)

    def __radd__(self, other):
        return list(other) + list(self)

    def __array__(self, dtype=None, copy=None):
        return np.array(list(self), dtype=dtype)

    def __reduce__(self):
        return (Words, (self._buf, self._ends))

    def __repr__(self) -> str:
        head = ", ".join(repr(w) for w in self[:5])
        return f"Words([{head}{', ...' if len(self) > 5 else ''}], {len(self):,} words)"


def _chunk(buf: np.ndarray, ends: np.ndarray, ids: np.ndarray, depth: int) -> np.ndarray:
    """Bytes ``8 depth`` to ``8 depth + 8`` of the words ``ids`` as big-endian uint64 (zeros
    past a word's end: no token holds a NUL, so a prefix sorts first)."""
    out = np.empty(ids.size, dtype=np.uint64)
    lane = np.arange(8)
    for lo in range(0, ids.size, _BLOCK):
        sel = ids[lo:lo + _BLOCK]
        end = ends[sel].astype(np.int64)
        start = np.where(sel > 0, ends[np.maximum(sel - 1, 0)], 0).astype(np.int64) + 8 * depth
        pos = start[:, None] + lane
        valid = pos < end[:, None]
        block = np.zeros(pos.shape, dtype=np.uint8)
        block[valid] = buf[pos[valid]]
        out[lo:lo + sel.size] = block.view(">u8").ravel()
    return out


def _sorted_order(buf: np.ndarray, ends: np.ndarray, ids: np.ndarray, depth: int = 0) -> np.ndarray:
    """``ids`` (distinct words) in the order Python sorts the words: by their UTF-8 bytes, 8 at a
    time, the words that tie on a chunk sorted again on the next one (a few words, or words
    that tie on a long prefix, by their bytes)."""
    key = _chunk(buf, ends, ids, depth)
    perm = np.argsort(key, kind="stable")
    key.sort()  # (in place: the sorted keys without a second array)
    tie = np.flatnonzero(key[1:] == key[:-1])
    del key
    ids = ids[perm]
    del perm
    if tie.size == 0:
        return ids
    first = np.flatnonzero(np.diff(np.concatenate([[-2], tie])) != 1)  # runs of ties
    for a, b in zip(tie[first].tolist(), np.append(tie[first[1:] - 1], tie[-1]).tolist()):
        run = ids[a:b + 2]
        if run.size <= 16 or depth >= 32:
            starts = np.where(run > 0, ends[np.maximum(run - 1, 0)], 0).tolist()
            stops = ends[run].tolist()
            ids[a:b + 2] = sorted(run.tolist(), key=dict(zip(run.tolist(), [
                buf[s:e].tobytes() for s, e in zip(starts, stops)])).__getitem__)
        else:
            ids[a:b + 2] = _sorted_order(buf, ends, run.copy(), depth + 1)
    return ids


class WordCounts:
    """The (document, word, count) triples of a stream of documents, with the distinct words.

    ``add(found)`` takes one document's ``{word: count}``; :meth:`matrix` gives the documents x
    kept words CSR matrix with the kept words sorted.  ``hash_fn`` keys the words (any function
    from str to an int64; tests pass a colliding one).

    Memory: per distinct word its UTF-8 bytes, a 4-byte offset, an 8-byte hash and a 4-byte id;
    per (document, word) pair a 4-byte word id and a 1-byte count (counts above 255 kept apart);
    the words of the last :data:`_BATCH` pairs as str.
    """

    def __init__(self, hash_fn=hash):
        self._hash = hash_fn
        self._buf = bytearray()
        self._ends = array("I")
        # the sorted hashes in _BUCKETS buckets by their top bits (a new word copies one bucket,
        # not the whole table), and the word id of each hash (its first word)
        self._keys = [np.zeros(0, dtype=np.uint32)] * _BUCKETS
        self._ids = [np.zeros(0, dtype=np.int32)] * _BUCKETS
        self._other: dict = {}                     # words whose hash an earlier word holds
        self._pending: list = []
        self._pending_counts = array("q")
        self.indices = array("i")
        self.counts = array("B")
        self._big_at, self._big = array("q"), array("q")  # counts above 255: pair, count
        self.indptr = array("q", [0])

    @property
    def n_words(self) -> int:
        return len(self._ends)

    def add(self, found: dict) -> None:
        """One document's words and their counts."""
        self._pending.extend(found)
        self._pending_counts.extend(found.values())
        self.indptr.append(self.indptr[-1] + len(found))
        if len(self._pending) >= _BATCH:
            self._flush()

    def _new_words(self, words: list) -> list:
        """Store ``words`` (new); their ids."""
        n, parts = len(self._ends), [_encode(w) for w in words]
        if self._ends.typecode == "I" and len(self._buf) + sum(map(len, parts)) > _U32_MAX:
            self._ends = array("q", self._ends)
        for p in parts:
            self._buf += p
            self._ends.append(len(self._buf))
        return list(range(n, len(self._ends)))

    def word(self, j: int) -> str:
        start = self._ends[j - 1] if j else 0
        return self._buf[start:self._ends[j]].decode("utf-8", "surrogatepass")

    def _resolve(self, word: str, j: int) -> int:
        """The id of ``word``, whose hash is that of word ``j``."""
        if self.word(j) == word:
            return j
        k = self._other.get(word)
        if k is None:
            k = self._other[word] = self._new_words([word])[0]
        return k

    def _stored(self, ids: np.ndarray):
        """(start, end) of the stored words ``ids`` in the buffer."""
        ends = np.frombuffer(self._ends, dtype=np.uint32 if self._ends.typecode == "I" else np.int64)
        end = ends[ids].astype(np.int64)
        start = np.where(ids > 0, ends[np.maximum(ids - 1, 0)], 0).astype(np.int64)
        return start, end

    def _lookup(self, uh: np.ndarray, unique_words: list):
        """Ids of the sorted distinct hashes ``uh`` (``unique_words`` one word of each), new
        ones stored; and the positions ``u`` whose stored word is not ``unique_words[u]``."""
        enc = np.frombuffer("\0".join(unique_words).encode("utf-8", "surrogatepass"), dtype=np.uint8)
        sep = np.flatnonzero(enc == 0)
        if sep.size != len(unique_words) - 1:  # (a word holds a NUL: tokens never do)
            raise ValueError("words must not hold NUL characters")
        ustart = np.concatenate([[0], sep + 1])
        ulen = np.concatenate([sep, [enc.size]]) - ustart
        del sep
        ids = np.empty(uh.size, dtype=np.int32)
        bucket = np.searchsorted((uh >> 32) + _BUCKETS // 2, np.arange(_BUCKETS + 1)).tolist()
        low = (uh & 0xFFFF_FFFF).astype(np.uint32)
        found, places = [], []
        for b in range(_BUCKETS):
            lo, hi = bucket[b], bucket[b + 1]
            if lo == hi:
                continue
            keys, q = self._keys[b], low[lo:hi]
            pos = np.searchsorted(keys, q)
            known = pos < keys.size
            known[known] = keys[pos[known]] == q[known]
            ids[lo:hi][known] = self._ids[b][pos[known]]
            found.append(np.flatnonzero(known) + lo)
            places.append((b, lo, np.flatnonzero(~known), pos))
        found = np.concatenate(found) if found else np.zeros(0, np.int64)
        # the words of the known hashes must be the stored ones (else a collision)
        start, end = self._stored(ids[found])
        same = (end - start) == ulen[found]
        nonempty = same & (ulen[found] > 0)  # (two empty words are equal)
        cand = found[nonempty]
        size = ulen[cand]
        at = np.repeat(ustart[cand] - np.concatenate([[0], np.cumsum(size)[:-1]]), size)
        at += np.arange(at.size)
        diff = enc[at] != np.frombuffer(self._buf, dtype=np.uint8)[
            at - np.repeat(ustart[cand] - start[nonempty], size)]
        del at
        bad = np.add.reduceat(diff, np.concatenate([[0], np.cumsum(size)[:-1]])) > 0 \
            if cand.size else np.zeros(0, bool)
        check = np.concatenate([found[~same], cand[bad]]).tolist()
        del diff, start, end, found, cand
        # new words: their bytes appended in one piece
        new = np.concatenate([lo + nw for _, lo, nw, _ in places]) if places else np.zeros(0, np.int64)
        size = ulen[new]
        at = np.repeat(ustart[new] - np.concatenate([[0], np.cumsum(size)[:-1]]), size)
        at += np.arange(at.size)
        n = self.n_words
        if self._ends.typecode == "I" and len(self._buf) + at.size > _U32_MAX:
            self._ends = array("q", self._ends)
        self._ends.extend((len(self._buf) + np.cumsum(size)).tolist())
        self._buf += enc[at].tobytes()
        ids[new] = np.arange(n, n + new.size)
        for b, lo, nw, pos in places:
            if nw.size:
                self._keys[b] = np.insert(self._keys[b], pos[nw], low[lo + nw])
                self._ids[b] = np.insert(self._ids[b], pos[nw], ids[lo + nw])
        return ids, check

    def _flush(self) -> None:
        words = self._pending
        if not words:
            return
        h = np.fromiter((self._hash(w) for w in words), dtype=np.int64, count=len(words)) >> _KEY_SHIFT
        uh, first, inv = np.unique(h, return_index=True, return_inverse=True)
        del h
        ids, check = self._lookup(uh, [words[i] for i in first.tolist()])
        del uh
        pair = ids[inv]
        rep = first[inv]
        # pairs whose word may not be their hash's word: a repeated hash with other text, or a
        # hash whose stored word differs (a collision); each is looked up by its text
        dup = np.flatnonzero(rep != np.arange(rep.size))
        suspect = {i for i, r in zip(dup.tolist(), rep[dup].tolist()) if words[i] != words[r]}
        if check:
            suspect.update(np.flatnonzero(np.isin(inv, check)).tolist())
        for i in sorted(suspect):
            pair[i] = self._resolve(words[i], int(pair[i]))
        base = len(self.counts)
        c = np.frombuffer(self._pending_counts, dtype=np.int64)
        big = np.flatnonzero(c > 255)
        if big.size:
            self._big_at.extend((big + base).tolist())
            self._big.extend(c[big].tolist())
        self.indices.frombytes(pair.astype(np.int32).tobytes())
        self.counts.frombytes(np.where(c > 255, 0, c).astype(np.uint8).tobytes())
        del c
        self._pending, self._pending_counts = [], array("q")

    def _stop_ids(self, stop_words) -> np.ndarray:
        """Ids of the words of ``stop_words`` that occur."""
        out = []
        for s in stop_words:
            k = self._other.get(s)
            if k is not None:
                out.append(k)
            h = int(np.int64(self._hash(s))) >> _KEY_SHIFT
            b, low = (h >> 32) + _BUCKETS // 2, h & 0xFFFF_FFFF
            keys = self._keys[b]
            p = int(np.searchsorted(keys, np.uint32(low)))
            if p < keys.size and int(keys[p]) == low:
                j = int(self._ids[b][p])
                if self.word(j) == s:
                    out.append(j)
        return np.array(sorted(out), dtype=np.int64)

    def matrix(self, stop_words, min_count: float):
        """``(X, words, info)``: the documents x kept words CSR matrix of float64 counts (words
        sorted, indices sorted), the kept :class:`Words`, and ``info`` (``distinct_words``,
        ``n_stop``, ``n_rare``, ``stop_examples``).  A word is kept when it is not in
        ``stop_words`` (a set or None) and occurs in at least ``min_count`` documents.
        Consumes the counts."""
        self._flush()
        n_words, n_docs = self.n_words, len(self.indptr) - 1
        stop = self._stop_ids(stop_words) if stop_words else np.zeros(0, dtype=np.int64)
        self._keys = self._ids = None
        _trim()
        idx = np.frombuffer(self.indices, dtype=np.int32) if len(self.indices) else np.zeros(0, np.int32)
        df = np.zeros(n_words, dtype=np.int32)  # (bincount would copy the ids as int64)
        for lo in range(0, idx.size, _BLOCK):
            np.add.at(df, idx[lo:lo + _BLOCK], 1)
        drop = df < min_count
        drop[stop] = False
        n_rare = int(drop.sum())
        drop[stop] = True
        del df
        kept = np.flatnonzero(~drop).astype(np.int32)
        del drop
        buf = np.frombuffer(self._buf, dtype=np.uint8)
        ends = np.frombuffer(self._ends, dtype=np.uint32 if self._ends.typecode == "I" else np.int64)
        order = _sorted_order(buf, ends, kept) if kept.size else kept
        del kept
        _trim()
        words = self._words(buf, ends, order)
        info = {"distinct_words": n_words, "n_stop": int(stop.size), "n_rare": n_rare,
                "stop_examples": sorted(self.word(int(j)) for j in stop)[:5]}
        del buf, ends
        self._buf = self._ends = None
        remap = np.full(n_words, -1, dtype=np.int32)
        remap[order] = np.arange(order.size, dtype=np.int32)
        del order
        for lo in range(0, idx.size, _BLOCK):  # (in place, a block at a time: np.take would copy)
            idx[lo:lo + _BLOCK] = remap[idx[lo:lo + _BLOCK]]
        del remap
        self.indices = idx
        del idx
        _trim()
        return self._csr(n_docs, len(words)), words, info

    @staticmethod
    def _words(buf: np.ndarray, ends: np.ndarray, order: np.ndarray) -> Words:
        """The words ``order`` as a :class:`Words`, copied a block at a time into one buffer."""
        def spans(lo):
            sel = order[lo:lo + _BLOCK]
            end = ends[sel].astype(np.int64)
            return np.where(sel > 0, ends[np.maximum(sel - 1, 0)], 0).astype(np.int64), end

        total = sum(int((e - s).sum()) for s, e in map(spans, range(0, order.size, _BLOCK)))
        out = bytearray(total)
        dest = np.frombuffer(out, dtype=np.uint8)
        new_ends = np.empty(order.size, dtype=np.uint32 if total <= _U32_MAX else np.int64)
        done = 0
        for lo in range(0, order.size, _BLOCK):
            start, end = spans(lo)
            size = end - start
            cum = np.cumsum(size)
            at = np.repeat(start - (cum - size), size) + np.arange(int(cum[-1]) if cum.size else 0)
            new_ends[lo:lo + size.size] = done + cum
            dest[done:done + at.size] = buf[at]
            done += at.size
        del dest
        return Words(out, new_ends)

    def _csr(self, n_docs: int, n_kept: int):
        """The CSR matrix of the pairs whose word is kept (new id >= 0 in ``indices``)."""
        idx, self.indices = self.indices, None
        keep = idx >= 0
        ptr = np.frombuffer(self.indptr, dtype=np.int64)[1:]
        at = np.frombuffer(self._big_at, dtype=np.int64) if len(self._big_at) else np.zeros(0, np.int64)
        big = np.frombuffer(self._big, dtype=np.int64) if at.size else np.zeros(0, np.int64)
        newptr = np.zeros(n_docs + 1, dtype=np.int64)
        big_at, total = np.zeros(at.size, dtype=np.int64), 0
        for lo in range(0, keep.size, _BLOCK):  # kept pairs before each document's end, a block at a time
            cum = np.cumsum(keep[lo:lo + _BLOCK], dtype=np.int64) + total
            a, b = np.searchsorted(ptr, [lo, lo + cum.size], side="right")
            newptr[1 + a:1 + b] = cum[ptr[a:b] - 1 - lo]
            a, b = np.searchsorted(at, [lo, lo + cum.size])
            big_at[a:b] = cum[at[a:b] - lo] - 1
            total = int(cum[-1])
        ok = keep[at]
        big_at, big = big_at[ok], big[ok]  # counts above 255 of kept pairs: where they go
        indices = idx[keep]
        del idx
        data = np.frombuffer(self.counts, dtype=np.uint8)[keep].astype(np.float64) \
            if len(self.counts) else np.zeros(0)
        self.counts = None
        data[big_at] = big
        del keep
        X = sp.csr_matrix((data, indices, newptr), shape=(n_docs, n_kept))
        X.sort_indices()
        return X
