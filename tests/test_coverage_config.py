"""The coverage figure measures the whole shipped package, adapters included: run from the
checkout (as `pytest --cov` is), the adapters' files are in the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


@pytest.mark.slow
def test_coverage_from_the_checkout_measures_the_adapters(tmp_path: Path) -> None:
    env = {**os.environ, "COVERAGE_FILE": str(tmp_path / ".coverage")}
    coverage = [sys.executable, "-m", "coverage"]
    for args in (
        ["run", "-m", "coverage_gate", "formats"],
        ["json", "-o", str(tmp_path / "coverage.json")],
    ):
        done = subprocess.run(
            [*coverage, *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr
    measured = set(json.loads((tmp_path / "coverage.json").read_text())["files"])
    adapters = {f"adapters/{path.name}" for path in (ROOT / "adapters").glob("*.py")}
    assert adapters and adapters <= measured
    assert "coverage_gate/cli.py" in measured
