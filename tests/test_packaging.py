"""A wheel built from the repo installs into a fresh venv, runs the demo, and ships no top-level
``adapters`` module; it holds the license text, says what it is (classifiers, keywords) and
offers users no test tools (those are the ``dev`` dependency group, not an extra)."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


@pytest.mark.slow
def test_wheel_in_a_fresh_venv_runs_the_demo_without_a_top_level_adapters(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(ROOT),
        ],
        check=True,
        timeout=600,
    )
    (wheel,) = (tmp_path / "dist").glob("coverage_gate-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata,) = (name for name in names if name.endswith(".dist-info/METADATA"))
        fields = archive.read(metadata).decode().split("\n\n", 1)[0].splitlines()
        (license_file,) = (name for name in names if name.endswith(".dist-info/licenses/LICENSE"))
        assert archive.read(license_file) == (ROOT / "LICENSE").read_bytes()
    assert "License-Expression: MIT" in fields
    assert "License-File: LICENSE" in fields
    # the user extras: the HTML report and the documentation site; no test tools
    assert sorted(f for f in fields if f.startswith("Provides-Extra:")) == [
        "Provides-Extra: docs",
        "Provides-Extra: html",
    ]
    assert "Classifier: Typing :: Typed" in fields
    assert any(f.startswith("Keywords:") for f in fields)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True, timeout=900)
    demo = subprocess.run(
        [str(env_dir / "bin" / "coverage-gate"), "demo"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert demo.returncode == 0, demo.stderr
    assert "approve → comment (mode enforce from demo" in demo.stdout
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.util, sysconfig, pathlib;"
            "site = pathlib.Path(sysconfig.get_paths()['purelib']);"
            "print(importlib.util.find_spec('adapters') is None, (site / 'adapters').exists(),"
            " importlib.util.find_spec('coverage_gate.adapters.pi_rpc') is not None)",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert probe.stdout.split() == ["True", "False", "True"]
