"""An installed wheel carries patterns/ and works outside the repository."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import ROOT


@pytest.mark.slow
def test_wheel_installs_and_runs_from_another_folder(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(dist), str(ROOT)], check=True, capture_output=True)
    (wheel,) = dist.glob("triage-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # dependencies come from this environment; the package itself only from the wheel
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "-q", str(wheel)], check=True, capture_output=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    log = elsewhere / "incident.log"
    log.write_bytes((ROOT / "examples" / "founding-incident.log").read_bytes())
    where = subprocess.run([str(py), "-c", "import analyzer, analyzer.data as d; print(analyzer.__file__); "
                            "print(d.builtin_patterns())"], cwd=elsewhere, check=True, capture_output=True,
                           text=True).stdout.split()
    assert where[0].startswith(str(venv)) and where[1].startswith(str(venv))
    res = subprocess.run([str(venv / "bin" / "triage"), "--format", "json", "incident.log"], cwd=elsewhere,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    top = json.loads(res.stdout)["findings"][0]
    assert top["members"][0] == "flashinfer-sm12x-needs-cuda-12-9"
