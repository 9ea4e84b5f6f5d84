"""Tests of the data side (nspca_core.io, datasets, text corpora, the CLI)."""
