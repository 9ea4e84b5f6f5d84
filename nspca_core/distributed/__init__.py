"""The Dask path: a covariance operator over a ``dask.array`` (``array.DaskCov``), the kernels the
workers run (``kernels``, imported by the workers themselves: the client sends no code), the
top-eigenvector factor (``factor``), the client helpers and the solvers run on it (``fit``).

Dask is an optional dependency (the ``[dask]`` extra): only these modules import it.
"""
