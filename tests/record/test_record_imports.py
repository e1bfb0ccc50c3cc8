"""What `record` loads: the recording path, not the decision's renderers and reconciler (start-up
time; the figures are the benchmark's, tests/bench/bench_speed.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import DATA
from tests.test_startup import loaded_by


def test_record_loads_no_decision_renderer_or_reconciler(tmp_path: Path) -> None:
    """`record` writes an evidence document and its one-line summary; rendering and reconciling
    decisions are other commands' work, and their modules stay unloaded."""
    stream = DATA / "pi-rpc" / "pi_a_honest.jsonl"
    out = tmp_path / "evidence.json"
    modules = loaded_by(
        "record", str(stream), "-f", "pi-rpc", "--revision", "r", "-o", str(out), cwd=tmp_path
    )
    assert json.loads(out.read_text())["counters"]["calls"] > 0
    assert "coverage_gate.outputs.summary" in modules
    unwanted = ("coverage_gate.outputs.render", "coverage_gate.core.reconcile")
    assert sorted(modules & set(unwanted)) == []
