"""The defaults the command line shows, in one module that loads nothing: `--help` shows them
without loading the modules that use them (the contracts, the scanner, the live runner, the
report), and those modules take them from here.
"""

from __future__ import annotations

__all__ = [
    "EVIDENCE_SCHEMA",
    "EVIDENCE_VERSION",
    "GRACE_SECONDS",
    "MAX_ERROR_RATE",
    "MAX_FALLBACKS",
    "MAX_FILES",
    "MAX_ISSUES",
    "MAX_LINE_BYTES",
    "MAX_WOULD_DOWNGRADE_RATE",
    "MIN_APPROVALS",
    "MIN_DAYS",
    "MIN_EVIDENCE_AVAILABILITY",
]

#: The evidence document's schema name and version (``model``, ``evidence_doc``, ``files``).
EVIDENCE_SCHEMA = "coverage-gate/evidence"
EVIDENCE_VERSION = "1.7"

#: Evidence bounds (``model.Bounds``): distinct files kept, call-level issues sampled.
MAX_FILES = 2000
MAX_ISSUES = 256
#: The longest tool-event line held whole (``linescan``); a longer one is read as it flows.
MAX_LINE_BYTES = 4 * 1024 * 1024
#: Seconds between SIGTERM and SIGKILL when `run` ends a reviewer (``live``).
GRACE_SECONDS = 5.0

#: When a repository is ready to enforce (``report.Criteria``).
MIN_APPROVALS = 50
MIN_DAYS = 7.0
MIN_EVIDENCE_AVAILABILITY = 0.99
#: Reconcile runs that may end without a decision, as a share of all runs (the upper bound of
#: its 95% Wilson interval): the would-downgrade ceiling's 10%. A clean window of the approvals
#: readiness needs (0 errors in 50 runs) bounds it at 7.1% and passes; an operator's 11 mistyped
#: runs beside 200 reviews bound it at 9.1% and pass; a pipeline failing one run in ten or more
#: never passes.
MAX_ERROR_RATE = 0.10
MAX_FALLBACKS = 0
MAX_WOULD_DOWNGRADE_RATE = 0.10
