"""The documentation site builds with warnings as errors (slow: the gallery examples run).

    python -m pytest -m slow tests/test_docs.py

needs the docs extra (``pip install ".[docs]"``) and a source checkout or an unpacked sdist
(both carry the docs, the examples and the benchmark figures the docs embed); where any of
those is missing the test fails, naming it.  The fast tests check that the sdist keeps what
the build reads.
"""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
REPRODUCE = ROOT / "benchmarks" / "results" / "reproduce"


def _embedded_figures():
    """The image files the reproduction reports (copied into docs/reproduce/) embed."""
    names = set()
    for report in REPRODUCE.glob("*.md"):
        names.update(re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", report.read_text(encoding="utf-8")))
    return sorted(names)


def test_the_figures_the_docs_embed_are_there():
    """Every figure a reproduction report embeds exists (the docs build reads them), in a
    source checkout or an unpacked sdist (a tree with docs/conf.py)."""
    if not (DOCS / "conf.py").exists():
        # the tests of an installed wheel (cibuildwheel) run without the docs sources
        pytest.skip("not a source tree: no docs/conf.py")
    if not REPRODUCE.is_dir():
        pytest.fail(f"{REPRODUCE} is missing: the docs build copies its reports")
    figures = _embedded_figures()
    assert figures, "no figure found in the reproduction reports"
    missing = [name for name in figures if not (REPRODUCE / name).is_file()]
    assert not missing, f"figures the docs embed are missing: {missing}"


def test_the_sdist_keeps_what_the_docs_build_reads():
    """pyproject.toml's sdist.exclude leaves in the docs, the examples, the shipped
    intersphinx inventories and the benchmark figures (the docs build from an unpacked
    sdist: issue 28 item 10)."""
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ reads pyproject.toml")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    exclude = config["tool"]["scikit-build"]["sdist"]["exclude"]
    # the matcher scikit-build-core uses (installed with it)
    pathspec = pytest.importorskip("pathspec", reason="scikit-build-core's pathspec")
    spec = pathspec.GitIgnoreSpec.from_lines(exclude)
    needed = ["docs/conf.py", "docs/index.rst", "docs/_inventories/sklearn.inv",
              "docs/_inventories/numpy.inv", "docs/make_numpy_inventory.py",
              "examples/plot_decision_boundaries.py",
              *(f"benchmarks/results/reproduce/{name}" for name in _embedded_figures())]
    dropped = [path for path in needed if spec.match_file(path)]
    assert not dropped, f"sdist.exclude drops files the docs build needs: {dropped}"


def test_the_numpy_inventory_covers_the_numpy_names_the_docs_use():
    """docs/_inventories/numpy.inv is what docs/make_numpy_inventory.py writes from the
    current examples and docs (so every NumPy name they use is linked offline), and its
    links follow NumPy's documentation layout."""
    if not (DOCS / "make_numpy_inventory.py").exists():
        pytest.skip("not a source tree: no docs/make_numpy_inventory.py")
    sys.path.insert(0, str(DOCS))
    try:
        import make_numpy_inventory as inv
    finally:
        sys.path.remove(str(DOCS))
    assert inv.main(["--check"]) == 0, "run python docs/make_numpy_inventory.py"
    names = inv.referenced_names()
    assert {"numpy.linspace", "numpy.random.default_rng"} <= set(names)
    import numpy as np
    assert inv.entry("numpy.linspace", np.linspace) == (
        "py:function", "reference/generated/numpy.linspace.html#numpy.linspace")
    assert inv.entry("numpy.abs", np.abs) == (
        "py:data", "reference/generated/numpy.absolute.html#numpy.absolute")
    assert inv.entry("numpy.float64", np.float64)[1] == (
        "reference/arrays.scalars.html#numpy.float64")
    assert inv.entry("numpy.random.default_rng", np.random.default_rng)[1] == (
        "reference/random/generator.html#numpy.random.default_rng")


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
    for module in ("sphinx", "numpydoc", "sphinx_gallery", "myst_parser",
                   "pydata_sphinx_theme", "matplotlib"):
        pytest.importorskip(module, reason='the docs extra: pip install ".[docs]"')
    # an unpacked sdist has all of these: their absence is a packaging defect, not a reason
    # to skip
    assert (DOCS / "conf.py").exists(), f"{DOCS / 'conf.py'} is missing"
    assert list((ROOT / "examples").glob("plot_*.py")), "the gallery examples are missing"
    assert REPRODUCE.is_dir(), f"{REPRODUCE} is missing: the docs build copies its reports"
    missing = [name for name in _embedded_figures() if not (REPRODUCE / name).is_file()]
    assert not missing, f"figures the docs embed are missing: {missing}"

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
