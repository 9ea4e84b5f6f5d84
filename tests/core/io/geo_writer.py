"""SOFT files written the way GEO writes them (DataSet ``GDSxxx.soft`` and family
``GSExxx_family.soft``), for the readers' tests and benchmarks.

The layout follows GEO's downloads (e.g. GDS507.soft.gz, GSE1563_family.soft.gz): ``^ENTITY = id``
lines, ``!attribute = value`` lines, ``#column = description`` lines, and each table between
``!<kind>_table_begin`` / ``!<kind>_table_end`` with a tab-separated header; ``null`` for
missing values in DataSet tables.  Lines end with ``\\n``.
"""

from __future__ import annotations

import numpy as np

DATABASE = ["^DATABASE = Geo", "!Database_name = Gene Expression Omnibus (GEO)",
            "!Database_institute = NCBI NLM NIH", "!Database_web_link = http://www.ncbi.nlm.nih.gov/geo",
            "!Database_email = geo@ncbi.nlm.nih.gov", "!Database_ref = Nucleic Acids Res. 2005 Jan 1;33 "
            "Database Issue:D562-6"]


def _num(v) -> str:
    if isinstance(v, str):
        return v
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "null"
    return repr(float(v)) if not float(v).is_integer() else str(int(v)) if abs(v) < 1e15 else repr(float(v))


def dataset_soft(values, probes, symbols, gsm, subsets, *, gds="GDS507", platform="GPL97",
                 titles=None) -> str:
    """A DataSet SOFT text: ``values`` probes x samples (NaN written ``null``), ``subsets`` a list of
    ``(type, description, [gsm...])``."""
    out = list(DATABASE)
    out += [f"^DATASET = {gds}", f"!dataset_title = Renal clear cell carcinoma ({platform})",
            "!dataset_description = Comparison of renal clear cell tumor tissue with normal tissue.",
            "!dataset_type = Expression profiling by array", "!dataset_pubmed_id = 14641932",
            f"!dataset_platform = {platform}", "!dataset_platform_organism = Homo sapiens",
            "!dataset_platform_technology_type = in situ oligonucleotide",
            "!dataset_feature_count = %d" % len(probes), "!dataset_sample_organism = Homo sapiens",
            "!dataset_sample_type = RNA", "!dataset_channel_count = 1",
            "!dataset_sample_count = %d" % len(gsm), "!dataset_value_type = count",
            "!dataset_update_date = Mar 04 2004"]
    for i, (typ, desc, members) in enumerate(subsets):
        out += [f"^SUBSET = {gds}_{i + 1}", f"!subset_dataset_id = {gds}", f"!subset_description = {desc}",
                f"!subset_sample_id = {','.join(members)}", f"!subset_type = {typ}"]
    out += [f"^DATASET = {gds}", "#ID_REF = Platform reference identifier", "#IDENTIFIER = identifier"]
    for j, g in enumerate(gsm):
        title = titles[j] if titles else f"C0{j} tissue U133B"
        out.append(f"#{g} = Value for {g}: {title}; src: Trizol isolation of total RNA")
    out.append("!dataset_table_begin")
    out.append("\t".join(["ID_REF", "IDENTIFIER"] + list(gsm)))
    values = np.asarray(values, dtype=float)
    for i, p in enumerate(probes):
        out.append("\t".join([p, symbols[i]] + [_num(v) for v in values[i]]))
    out.append("!dataset_table_end")
    return "\n".join(out) + "\n"


def family_soft(samples, platforms, *, gse="GSE1563", extra_columns=True) -> str:
    """A family SOFT text.  ``platforms``: ``{gpl: (probe ids, gene symbols)}``; ``samples``: list of
    dicts ``gsm, platform, title, characteristics (list of "key: value"), ids, values``."""
    out = list(DATABASE)
    out += [f"^SERIES = {gse}", "!Series_title = Blood transcriptome of patients", f"!Series_geo_accession = {gse}",
            "!Series_status = Public on Sep 01 2005", "!Series_summary = Expression profiles of blood.",
            "!Series_type = Expression profiling by array"]
    out += [f"!Series_sample_id = {s['gsm']}" for s in samples]
    out += [f"!Series_platform_id = {p}" for p in platforms]
    for gpl, (ids, syms) in platforms.items():
        out += [f"^PLATFORM = {gpl}", "!Platform_title = [HG-U95Av2] Affymetrix Human Genome U95 Version 2 "
                "Array", f"!Platform_geo_accession = {gpl}", "!Platform_technology = in situ oligonucleotide",
                "!Platform_organism = Homo sapiens", "#ID = Affymetrix Probe Set ID",
                "#GB_ACC = GenBank Accession Number", "#SPOT_ID = ",
                "#Species Scientific Name = The genus and species of the organism represented by the probe",
                "#Gene Title = Entrez Gene name",
                "#Gene Symbol = Entrez Gene symbol", "!platform_table_begin",
                "ID\tGB_ACC\tSPOT_ID\tSpecies Scientific Name\tGene Title\tGene Symbol"]
        for i, s in zip(ids, syms):
            out.append(f"{i}\tM{abs(hash(i)) % 99999:05d}\t\tHomo sapiens\t{s} gene title\t{s}")
        out.append("!platform_table_end")
    for s in samples:
        out += [f"^SAMPLE = {s['gsm']}", f"!Sample_title = {s['title']}", f"!Sample_geo_accession = {s['gsm']}",
                "!Sample_status = Public on Sep 01 2005", "!Sample_type = RNA", "!Sample_channel_count = 1",
                f"!Sample_source_name_ch1 = {s.get('source', 'peripheral blood')}",
                "!Sample_organism_ch1 = Homo sapiens"]
        out += [f"!Sample_characteristics_ch1 = {c}" for c in s.get("characteristics", [])]
        out += ["!Sample_molecule_ch1 = total RNA", f"!Sample_platform_id = {s['platform']}",
                "!Sample_data_row_count = %d" % len(s["ids"]), "#ID_REF = ", "#VALUE = MAS5 signal intensity"]
        if extra_columns:
            out += ["#ABS_CALL = present/absent call", "!sample_table_begin", "ID_REF\tVALUE\tABS_CALL"]
            out += [f"{i}\t{_num(v)}\t{'P' if k % 3 else 'A'}" for k, (i, v) in enumerate(zip(s["ids"], s["values"]))]
        else:
            out += ["!sample_table_begin", "ID_REF\tVALUE"]
            out += [f"{i}\t{_num(v)}" for i, v in zip(s["ids"], s["values"])]
        out.append("!sample_table_end")
    return "\n".join(out) + "\n"
