"""Numerical kernels of the completion estimators (batched soft-impute, SMC blocks).
"""

from __future__ import annotations

