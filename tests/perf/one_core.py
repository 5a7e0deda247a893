"""Imported first by every benchmark script: BLAS/OpenMP threads are limited to one
before numpy loads (a benchmark measures one core), and the repository's root and
``tests/`` go first on ``sys.path`` (the scripts run from any directory)."""
import os
import sys
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"

ROOT = Path(__file__).resolve().parents[2]
#: the code under test: this tree's, or an earlier commit's extracted by ``previous.py``
#: (``MAPEVAL_CODE``), with this tree's ``tests/`` helpers
CODE = Path(os.environ.get("MAPEVAL_CODE") or ROOT)
sys.path[:0] = [str(CODE), str(ROOT / "tests")]
