"""The benchmark scripts import their neighbours by module name (they run as scripts from
benchmarks/), so their tests put that folder on the import path."""

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))
