"""The front door: :func:`load_file` checks its arguments, finds the file's kind and
hands it to its reader; :func:`describe` says what was read.

What :func:`load_file` reads, and how
-------------------------------------
Formats: ``.csv .tsv .tab .txt`` (delimiter and header detected; text columns
become labels/metadata and ``notes`` says so), ``.npy`` and ``.npz``
(``allow_pickle=False`` always; 3-D arrays are read as image stacks),
``.mat`` (scipy.io.loadmat, numeric arrays only), ``.zip`` of
``.png .jpg .jpeg .pgm .bmp`` images (grey, common size).

Read first by :mod:`.extra_formats`: GEO SOFT (``.soft[.gz]``, DataSet and family;
``platform=``), compressed tables (``.csv/.tsv/.tab/.txt`` + ``.gz/.bz2/.xz/.zst``, read as
the plain file), Excel (``.xlsx``/``.xls``; ``sheet=``), Cell Ranger ``.h5``, AnnData
layers and objects (``layer=``, ``use_raw=``, ``load_file(adata)``).

The field's formats (:mod:`.omics`): GEO series matrix files
(``*_series_matrix.txt[.gz]``, or any file starting with ``!Series_``) read
as samples x probes with the GSM ids as ``sample_names`` and the
``!Sample_title``/``source_name_ch1``/``characteristics_ch1`` lines as
``metadata`` (``label_column`` may name one); AnnData ``.h5ad`` (needs the
optional ``anndata`` package: ``pip install 'nspca-core[formats]'``) with
``X`` kept sparse when sparse, ``obs`` as metadata and labels from its
first categorical column (or ``label_column``); a ``.zip`` of a 10x folder
(``matrix.mtx[.gz]``, ``features.tsv``/``genes.tsv``, ``barcodes.tsv``)
read as cells x genes, sparse, the gene names as features.

Text: UTF-8, Latin-1, and UTF-16/32 (by byte-order mark, as Excel's
"Unicode text" writes, or by its NUL byte pattern).  Numbers may use
thousands separators (``"1,234"``) or decimal commas (``3,14``, with
``.`` grouping thousands as in ``1.234,5``), one convention per file, or
be hexadecimal (``0x1F``); ``notes`` names the columns so read, and a file
that mixes conventions or is ambiguous (only ``1,000``-like numbers in a
file not delimited by commas) is refused with the column named.

Header detection (``header="auto"``): a first line with text above numeric
columns is a header.  An all-number first line is one when its numbers are
distinct integers (written without decimals) and either above columns
written with decimals, in increasing/decreasing order or far from the
values below; or in order and, in every non-constant column, farther from
the range of the values below (at least 3 rows) than 3 times its width.
Otherwise it is data.

Columns that are not features (text kept as metadata, empty, labels,
dropped for NaN/inf) are listed in ``dropped_columns`` with the reason.
Positions in messages count as the user does: CSV line numbers from 1
with the header line included, array rows from 1.

Orientation (``orientation="auto"``, CSV/TSV): the rows are read as
features when the names add up to 3 or more: ids shaped like microarray
probes (``1007_s_at``, ``AFFX-...``, ``ILMN_...``) +3, gene ids
(``ENSG...``, ``NM_...``, ``LOC...``) or gene symbols +2 (they also name
cell lines and knock-outs), ids naming genes (``gene_12``) +1, an id column
headed ``ID_REF``/``probe``/``gene`` +2, a header of sample ids (``GSM...``,
``TCGA-...``, barcodes) +2 or sample words +1; ids shaped like sample ids -3,
a header of gene names -3, an id column headed ``sample``/``patient`` -2.
The shape (far more rows than columns) is said in the notes but never
counted: the shape alone never transposes.  The note gives the total and
the 3 needed.

Text corpora (documents x words, read sparse by :mod:`.bow`):
the UCI Bag-of-Words ``docword.NAME.txt`` or ``.txt.gz`` (recognised by
its name, or any ``.txt`` when ``vocab`` is given), Matrix Market
``.mtx``/``.mtx.gz``, an ``.npz`` written by ``scipy.sparse.save_npz``
(recognised by its arrays; never unpickled), or a ``.zip`` holding one of
these and its ``vocab.NAME.txt``.  gzip content is capped at
``max_bytes`` like archives.  ``variable``, ``resize`` and
``label_column`` do not apply (InputError); ``nan_policy`` and ``header``
are ignored (non-finite values are always refused).  Malformed files
raise DataFormatError naming the line and value.

A single image file is rejected: one image is one sample, and PCA needs
many.  Upload a ``.zip`` of same-size images (one per sample) instead; to
analyse an image's pixel matrix itself, save it as ``.csv``/``.npy``.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np

from .._common.validation import InputError
from .._common.params import check
from .corpora import (_beside, _corpus_kind, _corpus_zip_members, _is_docword, _is_sparse_npz,
                      _load_corpus, _load_corpus_zip, _reject_dense_options)
from .delimited import _load_text
from .documents import DEFAULT_MIN_DF, read_documents
from .extra_formats import _display_name, load_extra
from .images import _load_zip
from .loaded import DataFormatError, LoadedData, _dropped_text, _finish
from .omics import is_geo_series, load_geo, load_h5ad, load_tenx, tenx_members
from .orientation import check_orientation
from .samples import attach_sample_info, read_sheet
from .formats import NAN_POLICY_LABELS, format_of
from .source import TEXT_EXTENSIONS, _extension, _read_source


NAN_POLICIES = tuple(NAN_POLICY_LABELS)  # the registry (.formats)
#: values of ``header``: detect, the first line is column names, the first line is data
HEADER_CHOICES = ("auto", "yes", "no")


def _check_header(header):
    """``header`` as True (column names), False (data) or None (detect)."""
    choices = {"auto": None, "yes": True, "no": False, None: None, True: True, False: False}
    if isinstance(header, str):
        header = header.strip().lower()
    if not isinstance(header, (str, bool, type(None))) or header not in choices:
        raise InputError("`header` must be 'auto' (detect), 'yes'/True (the first line holds column "
                         f"names) or 'no'/False (the first line is data); got {header!r}")
    return choices[header]


def _check_args(max_bytes, resize, nan_policy, variable, filename):
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise InputError(f"`max_bytes` must be a positive int; got {max_bytes!r}")
    if nan_policy not in NAN_POLICIES:
        raise InputError(f"`nan_policy` must be one of {NAN_POLICIES}; got {nan_policy!r}")
    if variable is not None and not isinstance(variable, str):
        raise InputError(f"`variable` must be a string (an array/variable name) or None; "
                         f"got {variable!r}")
    if filename is not None and not isinstance(filename, str):
        raise InputError(f"`filename` must be a string or None; got {filename!r}")
    if resize is not None:
        ok = (isinstance(resize, (tuple, list)) and len(resize) == 2
              and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in resize))
        if not ok:
            raise InputError(f"`resize` must be None or (height, width) with positive ints; "
                             f"got {resize!r}")
        resize = (int(resize[0]), int(resize[1]))
    return resize


def load_file(source, *, filename=None, variable=None, max_bytes: int = 200_000_000, resize=None,
              nan_policy: str = "error", label_column=None, header="auto",
              vocab=None, orientation: str = "auto", sample_info=None,
              sample_id_column=None, text_column=None, stop_words="english",
              min_df=DEFAULT_MIN_DF, numbers: bool = False, callback=None, platform=None, sheet=None,
              layer=None, use_raw: bool = False, feature_names=None) -> LoadedData:
    """Read a data file into a samples x features matrix.

    Parameters
    ----------
    source : path, bytes or file-like
        A path, raw bytes, or an object with ``read()`` (e.g. Streamlit's
        ``UploadedFile``, whose ``name`` gives the type).
    filename : str, optional
        Name used for the type (by extension) and in messages; needed for bytes
        (else the type is sniffed from magic bytes, text meaning CSV).
    variable : str, optional
        The array of an ``.npz`` / variable of a ``.mat`` to use (required when
        there are several numeric ones; the error lists them).
    max_bytes : int
        Size cap for the file and for the uncompressed content of archives.
    resize : (height, width), optional
        Resize every image of a ``.zip`` to this size (only then are mixed sizes
        accepted).
    nan_policy : {"error", "drop-rows", "drop-columns", "impute-mean"}
        What to do with NaN/inf (missing) values; only ``"error"`` leaves the data
        untouched, the others are said in ``notes``.
    label_column : str or int, optional
        CSV/TSV column to use as labels (a numeric one is then removed from the
        features).  By default the first text column with repeated values.
    header : {"auto", "yes", "no"} or bool, default "auto"
        CSV/TSV: whether the first line holds column names.  ``"yes"``/``True``
        and ``"no"``/``False`` force it; ``"auto"`` (or None) detects it: the
        first line is a header when it holds text above numbers, or numbers
        written differently from the body (e.g. the years ``2019,2020,2021``
        over decimal values), see Notes.  ``notes`` always says which was chosen
        and why.
    vocab : path, bytes, file-like or list of str, optional
        Text corpora only: the vocabulary (``vocab.NAME.txt``, one word per
        line, word i on line i), or the words themselves.  Without it the
        vocabulary is taken from the corpus ``.zip``, or from
        ``vocab.NAME.txt`` beside a ``docword.NAME.txt[.gz]`` path; else the
        words are named ``word_1, word_2, ...`` (a note says so).
    orientation : {"auto", "rows-are-samples", "rows-are-features"}
        How a table (CSV/TSV, ``.npy``, ``.npz``, ``.mat``) is stored.
        ``"rows-are-features"`` transposes: each row of the file is a feature
        (a gene, a probe), each column a sample; the header gives the sample
        names and the id column the feature names.  ``"auto"`` (default)
        weighs the evidence of a CSV/TSV (see Notes) and says in ``notes``
        what it decided and why (``extra["orientation"]`` holds the decision);
        arrays without names are read as stored.
    sample_info : path, bytes, file-like or pandas.DataFrame, optional
        A sample sheet: one row per sample, CSV/TSV with a header line.  It is
        matched to ``sample_names`` by its id column (``sample_id_column``, or
        the column holding the most sample names); its columns join
        ``metadata`` in the data's row order, and ``label_column`` may name one
        of them (unnamed: the first column with repeated values gives the
        labels).  Samples missing from the sheet, ids on several rows and
        repeated sample names are refused with the ids listed; rows of the
        sheet for other samples are ignored and listed in ``notes``.
    sample_id_column : str or int, optional
        The sheet's column of sample ids (default: detected).
    text_column : str, int, None or False, optional
        Raw text (:mod:`.documents`): the CSV/TSV column holding one document
        per row; None detects a column of free text (in a file with at most 2
        numeric columns), False never reads texts.  A ``.zip`` of ``.txt`` files
        is read as one document per file.  Words are counted as scikit-learn's
        ``CountVectorizer`` counts (lower case) into a sparse documents x words matrix,
        ``format`` ``"text-zip"``/``"text-table"``.
    stop_words : "english", None or list of str, default "english"
        Raw text: words left out (scikit-learn's English list by default).
    min_df : int or float, default 2
        Raw text: keep the words of at least this many documents (a float: this
        fraction of the documents).  ``notes`` say how many words were removed.
    numbers : bool, default False
        Raw text: count the numbers (runs of digits only: years, page numbers) as words too;
        by default they are not words.
    callback : callable, optional
        ``callback(done, total)``, a progress report while raw text documents
        are counted (every few documents) or a UCI docword file's triples are
        read (every million), and once at the end with ``done == total``;
        other formats do not call it.
    platform : str, optional
        GEO family SOFT files: the platform (``"GPL570"``) whose samples are read;
        default the one with most samples (``notes`` list the others).
    sheet : str or int, optional
        Excel workbooks: the sheet read (name or 0-based position); default the
        first sheet holding a numeric block (``notes`` name it).
    layer : str, optional
        AnnData: the layer read instead of ``X`` (``adata.layers[layer]``).
    use_raw : bool, default False
        AnnData: read ``adata.raw`` (its ``X`` and ``var_names``) instead of ``X``.
    feature_names : {"id", "symbol"}, optional
        GEO SOFT and 10x HDF5: the probe/feature ids or the gene symbols as the
        feature names; the other kind stays in ``extra`` (``"feature_ids"``,
        ``"gene_symbols"``).  Default: probe ids for SOFT (several probes share a
        gene), gene symbols for 10x HDF5 (as Cell Ranger's own tools show them).

    Returns
    -------
    LoadedData
        For a text corpus ``X`` is a ``scipy.sparse.csr_matrix`` (documents x
        words, float64 counts, never densified) and ``feature_names`` the
        vocabulary; ``format`` is ``"uci-bow"``, ``"mtx"`` or ``"sparse-npz"``
        and ``extra["sparse"]`` is True.  Every other format gives a dense
        ndarray.

    Raises
    ------
    DataFormatError
        With a message naming the problem: empty file, header only, non-numeric
        matrix, NaN/inf (count and first positions), single row/column, ragged
        rows, mixed image sizes, unsafe or nested archives, too many files, a zip
        bomb, a file over ``max_bytes``, object arrays, a ``.mat`` without a
        numeric matrix or in v7.3 format, an unknown extension, a single image.

    Notes
    -----
    The formats read, the text encodings and number conventions, the header and
    orientation rules, text corpora and single images are described in this
    module's docstring (:mod:`nspca_core.io.load`).
    """
    resize = _check_args(max_bytes, resize, nan_policy, variable, filename)
    if feature_names not in (None, "id", "symbol"):
        raise InputError(f"`feature_names` must be 'id' (probe/feature ids) or 'symbol' (gene symbols); "
                         f"got {feature_names!r}")
    use_raw = check("flag", use_raw, "use_raw")
    extra_options = {"platform": platform, "sheet": sheet, "layer": layer, "use_raw": use_raw,
                     "feature_names": feature_names}
    header = _check_header(header)
    orientation = check_orientation(orientation)
    sheet_table, sheet_label, label_column = _read_sample_sheet(sample_info, sample_id_column, label_column,
                                                                max_bytes)
    if callback is not None and not callable(callback):
        raise InputError(f"`callback` must be None or a function callback(done, total); got {callback!r}")
    loaded = _read_named(source, filename, extra_options, variable, max_bytes, resize, nan_policy, label_column,
                         header, vocab, orientation, (text_column, stop_words, min_df, numbers), callback)
    if sheet_table is not None:
        loaded = attach_sample_info(loaded, None, sample_id_column=sample_id_column,
                                    label_column=sheet_label, sheet=sheet_table)
    return loaded


def _read_named(source, filename, extra_options, variable, max_bytes, resize, nan_policy, label_column, header,
                vocab, orientation, text, callback) -> LoadedData:
    """The file read by its reader (the field's formats first); an error names the file it is about
    (``InputError.source``) when its message leads with the file's name, as the readers write them."""
    try:
        loaded = load_extra(source, filename, max_bytes=max_bytes, nan_policy=nan_policy, label_column=label_column,
                            vocab=vocab, **extra_options,
                            reload=lambda data, inner: _load_any(
                                data, inner, variable, max_bytes, resize, nan_policy, label_column, header, vocab,
                                orientation, text, callback=callback))
        if loaded is None:
            loaded = _load_any(source, filename, variable, max_bytes, resize, nan_policy, label_column, header,
                               vocab, orientation, text, callback=callback)
    except InputError as exc:
        exc.name_source(_display_name(source, filename))
        raise
    return loaded


def _read_sample_sheet(sample_info, sample_id_column, label_column, max_bytes):
    """The sample sheet, if any, read before the data: ``(sheet, sheet_label, label_column)``.

    A ``label_column`` naming a column of the sheet becomes ``sheet_label`` (the data's
    reader then gets None); otherwise it stays the data's.
    """
    if sample_id_column is not None and sample_info is None:
        raise InputError("`sample_id_column` applies only with a sample sheet (`sample_info`)",
                         argument="sample_id_column", value=sample_id_column,
                         plain="a column of sample ids applies only with a sample sheet")
    if sample_info is None:
        return None, None, label_column
    sheet = read_sheet(sample_info, max_bytes)
    if isinstance(label_column, str) and label_column in list(sheet[0].columns):
        return sheet, label_column, None
    return sheet, None, label_column


def _load_any(source, filename, variable, max_bytes, resize, nan_policy, label_column, header, vocab,
              orientation, text=(None, "english", DEFAULT_MIN_DF), callback=None) -> LoadedData:
    """The reader of the file's kind (arguments already checked)."""
    named = filename is not None or isinstance(source, (str, os.PathLike)) or \
        bool(getattr(source, "name", None))
    data, name = _read_source(source, filename, max_bytes)
    if len(data) == 0 or data.isspace():  # (no stripped copy of a large file)
        raise DataFormatError(f"{name}: the file is empty")
    notes: list = []
    if vocab is None and isinstance(source, (str, os.PathLike)) and _is_docword(name):
        vocab = _beside(Path(source))
        if vocab is not None:
            notes.append(f"vocabulary {vocab.name} found beside {name}")
    geo = is_geo_series(name, data)
    if geo or name.lower().endswith(".h5ad"):
        if orientation == "rows-are-features" or variable is not None or resize is not None \
                or vocab is not None:
            raise InputError(f"{name}: `orientation`, `variable`, `resize` and `vocab` do not apply to "
                             "GEO series matrix and .h5ad files (samples/cells are read as rows)")
        if geo:
            return load_geo(data, name, nan_policy, label_column, max_bytes)
        return load_h5ad(data, name, nan_policy, label_column)
    kind = _corpus_kind(name, data, vocab is not None)
    if orientation == "rows-are-features" and (kind is not None or _extension(name, data, named) == ".zip"):
        raise InputError(f"orientation='rows-are-features' does not apply to {name}: text corpora, "
                         "images and the field's formats have a fixed orientation (documents, images, "
                         "samples or cells as rows)")
    if kind is not None:
        _reject_dense_options(name, variable, resize, label_column)
        return _load_corpus(data, name, kind, vocab, max_bytes, notes, callback)
    ext = _extension(name, data, named)
    if ext == ".npz" and _is_sparse_npz(data, name, max_bytes):
        _reject_dense_options(name, variable, resize, label_column)
        return _load_corpus(data, name, "npz", vocab, max_bytes)
    tenx = tenx_members(data, name) if ext == ".zip" else None
    if tenx is not None:
        _reject_dense_options(name, variable, resize, label_column)
        return load_tenx(data, name, tenx, max_bytes)
    found = _corpus_zip_members(data, name, max_bytes) if ext == ".zip" else None
    if found is not None:
        _reject_dense_options(name, variable, resize, label_column)
        return _load_corpus_zip(found, name, vocab, max_bytes, callback)
    if vocab is not None:
        raise InputError(f"`vocab` applies only to text corpora (docword.NAME.txt[.gz], .mtx, a "
                         f"sparse .npz or a .zip of them); {name} is read as a dense matrix")
    if ext in TEXT_EXTENSIONS + (".zip",):  # raw text documents (a .zip of .txt, a column of texts)
        docs = read_documents(data, name, ext, text_column=text[0], stop_words=text[1], min_df=text[2],
                              label_column=label_column, max_bytes=max_bytes, callback=callback,
                              numbers=text[3])
        if docs is not None:
            return docs
    elif text[0] is not None and text[0] is not False:
        raise InputError(f"`text_column` applies to a CSV/TSV of texts; {name} is not one")
    if ext in TEXT_EXTENSIONS:
        return _load_text(data, name, ext, nan_policy, label_column, header, orientation)
    fmt = format_of(ext)
    if fmt is not None and fmt.reader:  # a file of one numeric matrix: its registered reader (.formats)
        loaded = fmt.read()(data, name, nan_policy=nan_policy, variable=variable, max_bytes=max_bytes)
        return _transposed(loaded, orientation, nan_policy)
    if ext == ".zip":
        return _load_zip(data, name, resize, nan_policy, max_bytes)
    raise DataFormatError(f"{name}: a single image is one sample, and PCA needs many; upload a "
                          ".zip of same-size images (one image per sample), or save the pixel "
                          "matrix as .csv/.npy to analyse its rows")


def _transposed(loaded: LoadedData, orientation: str, nan_policy: str) -> LoadedData:
    """An array read as stored, or transposed when asked (``rows-are-features``)."""
    if orientation != "rows-are-features":
        if orientation == "auto":
            return dataclasses.replace(loaded, extra={**loaded.extra, "orientation": "rows-are-samples"})
        return loaded
    if loaded.image_shape is not None or loaded.labels is not None:
        raise InputError(f"orientation='rows-are-features' does not apply to {loaded.source_name}: its "
                         "rows are images or labelled samples")
    X = np.asarray(loaded.X).T
    notes = list(loaded.notes) + [f"orientation: each row of the array is a feature (as asked); "
                                  f"transposed to {X.shape[0]} samples x {X.shape[1]} features"]
    return _finish(X, [f"row_{i + 1}" for i in range(X.shape[1])], None, None, None, notes,
                   loaded.source_name, loaded.format, nan_policy, variable=loaded.variable,
                   extra={**loaded.extra, "orientation": "rows-are-features"},
                   sample_names=[str(f) for f in loaded.feature_names])


def describe(loaded: LoadedData) -> str:
    """A few lines the app can show under an upload: size, format, labels, notes."""
    m, n = loaded.X.shape
    if loaded.extra.get("sparse"):
        rows, cols = ("cells", "genes") if loaded.format in ("h5ad", "10x") else ("documents", "words")
        lines = [f"**{loaded.source_name}**: {m} {rows} x {n} {cols} ({loaded.format}, sparse: "
                 f"{loaded.extra.get('nnz', 0):,} nonzeros)"]
        return "\n".join(lines + [f"- {note}" for note in loaded.notes])
    lines = [f"**{loaded.source_name}**: {m} samples x {n} features ({loaded.format or 'data'}"
             + (f", variable '{loaded.variable}'" if loaded.variable and loaded.format != "csv" else "")
             + ")"]
    if loaded.image_shape is not None:
        lines.append(f"images of {loaded.image_shape[0]}x{loaded.image_shape[1]} pixels")
    if loaded.labels is not None:
        uniq = np.unique(np.asarray(loaded.labels).astype(str))
        shown = ", ".join(uniq[:8].tolist()) + (", ..." if uniq.size > 8 else "")
        lines.append(f"labels: {uniq.size} classes ({shown})")
    if loaded.metadata is not None:
        lines.append(f"metadata columns: {', '.join(map(str, loaded.metadata.columns))}")
    if loaded.dropped_columns:
        lines.append(f"not used as features: {_dropped_text(loaded.dropped_columns)}")
    lines += [f"- {note}" for note in loaded.notes]
    return "\n".join(lines)
