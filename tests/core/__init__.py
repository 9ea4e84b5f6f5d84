"""Tests of the solver core (nspca_core: algorithms, certificates, peers, operators, layout)."""
