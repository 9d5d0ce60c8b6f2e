"""The ``python -m core simulate`` contract, run in-process: the helpers the scenario and vehicle tests
share (``from tests.core.cli_contract import ...``; the repository root is on pytest's ``pythonpath``).

The contract (README "Command line"): a good scenario exits 0 and writes ``--out``; a bad one exits 2
with one line on stderr naming the offending key and writes nothing.
"""
from __future__ import annotations

from pathlib import Path


def simulate_text(tmp_path: Path, text: str) -> tuple[int, Path]:
    """Write ``text`` as scenario.toml and run ``python -m core simulate`` on it in-process:
    (exit status, the --out path)."""
    from core.cli import run

    scenario = tmp_path / "scenario.toml"
    scenario.write_text(text)
    out = tmp_path / "traj.json"
    return run(["simulate", str(scenario), "--out", str(out)]), out


def run_simulate(tmp_path: Path, text: str, capsys) -> tuple[int, str, Path]:
    """``simulate_text`` with its stderr: (exit status, stderr, the --out path), the triple every
    CLI contract test checks."""
    code, out = simulate_text(tmp_path, text)
    return code, capsys.readouterr().err, out


def assert_refused(code: int, err: str, out: Path, key: str) -> None:
    """A bad scenario: exit 2, one line on stderr naming ``key``, no output file."""
    err = err.strip()
    assert code == 2
    assert not out.exists()
    assert "\n" not in err and key in err, err
