"""`python -m benchmarks.faults` from the repository root, or `python benchmarks/faults`."""

from __future__ import annotations

import sys
from pathlib import Path

if not __package__:  # run as a directory: import the package from the repository root, not this folder
    sys.path[0] = str(Path(__file__).resolve().parents[2])

from benchmarks.faults.runner import main

sys.exit(main())
