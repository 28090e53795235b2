"""Smoke test of the paper-reproduction scripts: each runs end to end in --quick mode.

The recorded runs (the papers' repetition counts) are in benchmarks/results/reproduce/; here
every script runs with a few small repetitions into a temporary directory, as the README says
(``python -m benchmarks.reproduce.<script>`` from the repository root), and must exit 0 and
write its markdown table (and its figure, for the figure scripts).
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import resource
except ImportError:                     # Windows: no CPU limit, the wall-clock backstop only
    resource = None

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in (ROOT / "benchmarks" / "reproduce").glob("*.py")
                 if not p.name.startswith("_"))


PAPERS = ("liu_wu_he_2011", "wu_liu_2007", "liu_yuan_2011", "wu_liu_2013", "kang_lin_zhang_2019")


def test_every_paper_has_a_script_named_by_authors_and_year():
    """Each source paper has a reproduction script named <authors>_<year>_<table or figure>."""
    names = {p.stem for p in SCRIPTS}
    for paper in PAPERS:
        assert any(name.startswith(paper + "_") for name in names), paper
    assert all(name.startswith(PAPERS) for name in names), names


# A hang guard in CPU time (the child is killed after this many seconds of its own CPU time),
# so that a loaded machine, where the child waits for a core, does not fail the test; the
# wall-clock timeout is only a backstop for a child that waits without using CPU.
CPU_LIMIT = 300


def _limit_cpu():
    """Limit the child's CPU time (run in the child before it starts Python)."""
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT, CPU_LIMIT + 10))


# One script per paper (its quickest) runs in the default suite; the others, which share its
# paper's module, are slow-marked (together about 30 s of the default run's 4 minutes).
DEFAULT_RUN = {"kang_lin_zhang_2019_figure1", "liu_wu_he_2011_table3", "liu_yuan_2011_figure3",
               "wu_liu_2007_figure2", "wu_liu_2013_circle"}


def _script_param(path):
    marks = () if path.stem in DEFAULT_RUN else (pytest.mark.slow,)
    return pytest.param(path, id=path.stem, marks=marks)


def test_the_default_run_covers_every_paper():
    """The default suite runs one reproduction script of every paper."""
    assert {name.rsplit("_", 1)[0] for name in DEFAULT_RUN} == set(PAPERS)
    assert DEFAULT_RUN <= {p.stem for p in SCRIPTS}


@pytest.mark.parametrize("script", [_script_param(p) for p in SCRIPTS])
def test_script_runs_in_quick_mode(script, tmp_path):
    proc = subprocess.run([sys.executable, "-m", f"benchmarks.reproduce.{script.stem}", "--quick",
                           "--out", str(tmp_path)], preexec_fn=_limit_cpu if resource else None,
                          capture_output=True, text=True, timeout=3600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    written = {p.name for p in tmp_path.iterdir()}
    assert written and all(name.startswith("quick_") for name in written), written
    if "figure" in script.stem:
        assert any(name.endswith(".png") for name in written), written
    for md in tmp_path.glob("*.md"):
        text = md.read_text()
        assert text.strip(), md
    for js in tmp_path.glob("*.json"):
        json.loads(js.read_text())
    if "table" in script.stem or not any(n.endswith(".png") for n in written):
        assert any("|" in md.read_text() for md in tmp_path.glob("*.md")), written
