"""Covariance operators: what every solver and certificate reads instead of an n × n matrix.

``cov.Cov`` is the dense operator (data or covariance, optionally a projection deflation of
either); ``sparse`` holds scipy.sparse data with implicit centering and the implicitly centered
dense operator for data too large to copy; ``weighted`` the weighted sparse operator; and
``covariance.as_cov`` picks one for any input container (the one place that decides centering).
The Dask operator lives in :mod:`nspca_core.distributed`.
"""
