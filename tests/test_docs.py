"""The documentation site builds with warnings as errors (slow: the gallery examples run).

    python -m pytest -m slow tests/test_docs.py

needs the docs extra (``pip install ".[docs]"``) and a source checkout (the docs, the
examples and the benchmark figures; the sdist leaves the figures out).
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
    for module in ("sphinx", "numpydoc", "sphinx_gallery", "myst_parser",
                   "pydata_sphinx_theme", "matplotlib"):
        pytest.importorskip(module, reason='the docs extra: pip install ".[docs]"')
    if not (DOCS / "conf.py").exists() or not list(
            (ROOT / "benchmarks" / "results" / "reproduce").glob("*.png")):
        pytest.skip("needs a source checkout with docs/ and the benchmark figures")

    out = tmp_path / "html"
    start = time.perf_counter()
    # the wall-clock timeout is a hang backstop far above the build's time at load 12
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=7200,
        env={**os.environ, "MPLBACKEND": "Agg", "MSVM_DOCS_RUN_STALE": "1"})
    seconds = time.perf_counter() - start
    print(f"documentation build: {seconds:.1f} s")
    assert proc.returncode == 0, (proc.stdout[-3000:] + "\n" + proc.stderr[-5000:])

    # every page of the site is there, the API reference covers every public name, and the
    # gallery examples ran and drew
    for page in ("index", "install", "guide", "models", "c_lambda", "api", "contributing",
                 "changelog", "reproduce/index", "auto_examples/index"):
        assert (out / f"{page}.html").exists(), page
    import msvm
    import msvm.datasets
    import msvm.metrics
    import msvm.model_selection
    import msvm.plotting
    names = [f"msvm.{n}" for n in msvm.__all__ if n != "__version__"]
    names += [f"msvm.datasets.{n}" for n in msvm.datasets.__all__]
    names += [f"msvm.model_selection.{n}" for n in msvm.model_selection.__all__]
    names += ["msvm.metrics.average_utility", "msvm.metrics.make_utility_scorer",
              "msvm.plotting.plot_coef_path", "msvm.plotting.plot_inner_products"]
    missing = [n for n in names if not (out / "generated" / f"{n}.html").exists()]
    assert not missing, missing
    examples = sorted(p.stem for p in (ROOT / "examples").glob("plot_*.py"))
    assert examples
    for name in examples:
        assert list((out / "_images").glob(f"sphx_glr_{name}_*.png")), name

    # papers are cited by authors and year on the site, never by reading-list numbers
    for html in out.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        assert "seed 00" not in text.lower(), html
