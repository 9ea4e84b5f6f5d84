"""Which way a table is stored: one sample per row (the default) or one feature per row
(gene-expression matrices: genes/probes as rows, a header of sample names).

:func:`decide_orientation` weighs the evidence of the file (an id column, the header, the
shape) and returns the orientation with the note that says what was decided and why.
"""

from __future__ import annotations

import re

import numpy as np

from .._common.said import Note, Remedy
from .._common.validation import InputError

ORIENTATIONS = ("auto", "rows-are-samples", "rows-are-features")

#: microarray probe / methylation-site identifiers (Affymetrix, Illumina, Agilent, UniGene, miRBase):
#: they name a measurement, never a sample
_PROBE = re.compile(
    r"[\w./:-]+_(?:[a-z]_)?(?:at|st)|AFFX-[\w./-]+|ILMN_\d+|A_\d+_P\d+|cg\d{6,}|hsa-(?:miR|let)-[\w-]+"
    r"|Hs\.\d+|[A-Za-z]?\d+_[a-z]_at", re.IGNORECASE)
#: gene / transcript identifiers (Ensembl, RefSeq, LOC, Entrez): a gene, or a sample named by its
#: gene (a knock-out line), so worth no more than a gene symbol
_GENE_ID = re.compile(r"ENS[A-Z]*[GTPE]\d{6,}(?:\.\d+)?|[NX][MR]_\d+(?:\.\d+)?|LOC\d+|ENTREZ:?\d+",
                      re.IGNORECASE)
#: gene symbols as HGNC writes them (TP53, BRCA1, HLA-DRA, C1orf112, MT-CO1)
_SYMBOL = re.compile(r"[A-Z][A-Z0-9]*(?:[-.][A-Z0-9]+)*|C\d+orf\d+|[A-Z][A-Z0-9]*orf\d+")
#: sample / cell identifiers (GEO, TCGA, SRA, BioSample, 10x barcodes)
_SAMPLE = re.compile(r"GSM\d+|TCGA-[\w.-]+|[SED]RR\d+|[SED]RX\d+|SAM[NED]A?\d+|[ACGT]{8,}(?:-\d+)?",
                     re.IGNORECASE)
_SAMPLE_WORDS = re.compile(r"sample|patient|subject|donor|case|control|tumou?r|normal|replicate|"
                           r"cell|specimen|individual|mouse|rat|rep\d", re.IGNORECASE)
_FEATURE_WORDS = re.compile(r"gene|probe|transcript|feature|protein|mirna|cpg|snp", re.IGNORECASE)
_FEATURE_HEADERS = {"id_ref", "probe", "probe_id", "probeid", "probeset", "probeset_id", "probe_set",
                    "gene", "genes", "gene_id", "geneid", "gene_symbol", "genesymbol", "symbol",
                    "gene_name", "ensembl", "ensembl_id", "ensembl_gene_id", "feature", "feature_id",
                    "transcript", "transcript_id", "entrez", "entrez_id", "hgnc_symbol", "identifier",
                    "id_ref", "reporter", "target", "mirna", "cpg"}
_SAMPLE_HEADERS = {"sample", "samples", "sample_id", "sampleid", "sample_name", "patient",
                   "patient_id", "subject", "subject_id", "cell", "cell_id", "barcode", "barcodes",
                   "donor", "specimen", "case", "case_id", "geo_accession", "gsm"}


def check_orientation(orientation) -> str:
    if not isinstance(orientation, str) or orientation not in ORIENTATIONS:
        raise InputError(f"`orientation` must be one of {ORIENTATIONS} ('auto': decided from the "
                         "file and said in the notes); got " + repr(orientation))
    return orientation


def _fraction(values, pattern) -> float:
    vals = [v for v in values if v]
    if not vals:
        return 0.0
    return sum(1 for v in vals if pattern.fullmatch(v)) / len(vals)


def _symbols(values) -> float:
    """Fraction of gene-symbol-shaped names, 0 when they are one prefix numbered (S1, S2, ...)."""
    vals = [v for v in values if v]
    if len(vals) < 5:
        return 0.0
    frac = _fraction(vals, _SYMBOL)
    prefixes = {re.sub(r"[\d_.-]+$", "", v) for v in vals}
    return frac if len(prefixes) >= max(5, 0.1 * len(vals)) else 0.0


def _examples(values, limit: int = 3) -> str:
    shown = [f"'{v}'" for v in list(values)[:limit]]
    return ", ".join(shown) + (", ..." if len(values) > limit else "")


def _norm(header: str) -> str:
    return re.sub(r"[\s.-]+", "_", str(header).strip().lower())


#: evidence needed to read the rows as features (the shape is never counted)
THRESHOLD = 3


def decide_orientation(orientation: str, *, ids, id_header, column_names, n_rows: int,
                       n_numeric: int) -> tuple[str, str]:
    """``(orientation, note)`` for a table of ``n_rows`` rows and ``n_numeric`` numeric columns.

    ``ids``: the values of the table's id column (its first text column), or None;
    ``id_header``: that column's header cell ('' when the header has none);
    ``column_names``: the header cells of the numeric columns, or None (no header).

    ``"auto"`` scores what the file's names say for one feature per row: ids shaped
    like microarray probes (``1007_s_at``, ``AFFX-...``, ``ILMN_...``, ``cg...``) +3,
    gene ids (``ENSG...``, ``NM_...``, ``LOC...``) or gene symbols +2 (they also name
    cell lines and knock-out samples: ``HELA``, ``MCF7``, ``ENSG...-KO``), ids naming
    genes (``gene_12``) +1, an id column headed ``ID_REF``/``probe``/``gene``... +2, a
    header of sample ids (``GSM...``, ``TCGA-...``, cell barcodes) +2 or of sample
    words (``sample``, ``patient``, ``tumor``...) +1; and against it: ids shaped like
    sample ids -3, a header of probe/gene names -3, an id column headed
    ``sample``/``patient``/``cell`` -2.  A total of :data:`THRESHOLD` (3) or more
    reads the rows as features.  The shape (far more rows than numeric columns) is
    said in the note but never counted: the shape alone never transposes, and
    neither do gene-shaped ids with it.  The note gives the total and the threshold
    (how close the call was).
    """
    reasons_for, reasons_against, score = [], [], 0
    ids = None if ids is None else [str(v).strip() for v in ids]
    names = None if column_names is None else [str(v).strip() for v in column_names]
    tall = n_rows >= 5 * n_numeric
    if ids is not None:
        distinct = len(set(ids)) == len(ids)
        probe, gene_id = _fraction(ids, _PROBE), _fraction(ids, _GENE_ID)
        symbol, sample = _symbols(ids), _fraction(ids, _SAMPLE)
        if probe >= 0.5:
            score += 3
            reasons_for.append(f"the id column holds probe ids ({_examples(ids)}) +3")
        elif probe + gene_id >= 0.5:
            score += 2
            reasons_for.append(f"the id column holds gene ids ({_examples(ids)}) +2")
        elif symbol >= 0.6:
            score += 2
            reasons_for.append(f"the id column holds gene symbols ({_examples(ids)}) +2")
        elif sample < 0.5 and sum(bool(_FEATURE_WORDS.search(v)) for v in ids) >= 0.5 * len(ids):
            score += 1
            reasons_for.append(f"the ids name genes/probes ({_examples(ids)}) +1")
        if sample >= 0.5:
            score -= 3
            reasons_against.append(f"the id column holds sample ids ({_examples(ids)}) -3")
        head = _norm(id_header or "")
        if head in _FEATURE_HEADERS:
            score += 2
            reasons_for.append(f"the id column is headed '{id_header}' +2")
        elif head in _SAMPLE_HEADERS:
            score -= 2
            reasons_against.append(f"the id column is headed '{id_header}' -2")
        tall = tall and distinct
    if names is not None and len(set(names)) == len(names):
        if _fraction(names, _SAMPLE) >= 0.5:
            score += 2
            reasons_for.append(f"the header holds sample ids ({_examples(names)}) +2")
        elif sum(bool(_SAMPLE_WORDS.search(v)) for v in names) >= 0.5 * len(names):
            score += 1
            reasons_for.append(f"the header names samples ({_examples(names)}) +1")
        if _fraction(names, _PROBE) + _fraction(names, _GENE_ID) >= 0.5 or _symbols(names) >= 0.6:
            score -= 3
            reasons_against.append(f"the header holds probe/gene names ({_examples(names)}) -3")
    if orientation != "auto":
        if orientation == "rows-are-features":
            return orientation, ("orientation: each row of the file is a feature and each column a "
                                 "sample (as asked); read transposed")
        return orientation, "orientation: each row of the file is a sample (as asked)"
    shape = (f"; the shape ({n_rows:,} rows for {n_numeric:,} numeric columns) is not counted: the shape "
             "alone never transposes" if tall else "")
    evidence = "; ".join(reasons_for + reasons_against)
    tally = f"evidence {score:+d}, {THRESHOLD} needed"
    if score >= THRESHOLD:
        plain = ("each row of the file read as a feature (e.g. a gene) and each column as a sample, so the "
                 f"table is transposed (auto: {evidence}: {tally}{shape})")
        return "rows-are-features", Note(
            plain, text=f"orientation: {plain}; if each row is a sample, choose orientation 'rows-are-samples'",
            argument="orientation", value="rows-are-features", because=f"{evidence}: {tally}{shape}",
            remedy=Remedy("orientation", ("rows-are-samples",), lead="if each row is a sample,"))
    if not reasons_for and not reasons_against:
        why = "no sign of features as rows" + shape
    else:
        why = f"{evidence}: {tally} for features as rows{shape}"
    plain = f"each row of the file read as a sample (auto: {why})"
    lead = "if each row is a feature (e.g. a gene, samples as columns),"
    return "rows-are-samples", Note(plain, text=f"orientation: {plain}; {lead} choose orientation 'rows-are-features'",
                                    argument="orientation", value="rows-are-samples", because=why,
                                    remedy=Remedy("orientation", ("rows-are-features",), lead=lead))


def transpose_names(n: int) -> list:
    """Feature names of a transposed table without an id column."""
    return [f"row_{i + 1}" for i in range(n)]


def as_strings(values) -> list:
    return [str(v) for v in np.asarray(values).tolist()]
