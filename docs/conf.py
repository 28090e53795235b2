"""Sphinx configuration of the msvm documentation.

Build: ``pip install ".[docs]" && python -m sphinx -W -b html docs docs/_build/html``.
"""

import os
import re
import shutil
import sys
from pathlib import Path

import msvm

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS))          # the sphinx-gallery image scraper helpers, if any

project = "msvm"
author = "the msvm developers"
copyright = "the msvm developers"
version = release = msvm.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",            # MathJax 3, shipped in the package: no network needed
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "_inventories", "Thumbs.db", ".DS_Store", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.md5",
                    "auto_examples/*.json"]
myst_enable_extensions = ["dollarmath"]

# --- Math: rendered by a MathJax copied into the site (_static/mathjax) from the
# sphinx-mathjax-offline package (docs extra), so that a local build reads without a network.
mathjax_path = "mathjax/tex-chtml.js"
myst_heading_anchors = 3

# --- API reference -------------------------------------------------------------------------
autosummary_generate = True
numpydoc_show_class_members = False      # the autosummary class template lists the methods
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()
numpydoc_xref_param_type = False

# Links to scikit-learn, SciPy and NumPy.  The inventories are read from docs/_inventories/
# (shipped: the build needs no network; see the README there for their source and how to
# refresh them; NumPy's is written by docs/make_numpy_inventory.py for the NumPy names the
# docs use), so an offline build resolves the same links.  A project without a shipped
# inventory is left out of the mapping rather than fetched.
INVENTORIES = {
    "sklearn": "https://scikit-learn.org/stable/",
    "scipy": "https://docs.scipy.org/doc/scipy/",
    "numpy": "https://numpy.org/doc/stable/",
}
intersphinx_mapping = {
    name: (url, str(DOCS / "_inventories" / f"{name}.inv"))
    for name, url in INVENTORIES.items() if (DOCS / "_inventories" / f"{name}.inv").exists()
}

# --- Gallery -------------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "abort_on_example_error": True,
    "show_memory": False,
    "min_reported_time": 1,
    # the docs test sets MSVM_DOCS_RUN_STALE=1: every example runs, even if unchanged
    "run_stale_examples": os.environ.get("MSVM_DOCS_RUN_STALE") == "1",
}

# --- HTML ----------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"msvm {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
templates_path = ["_templates"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    # the first six pages of the toctree, the API reference among them, in the top bar
    "header_links_before_dropdown": 6,
    # API pages: one object each, so no "on this page" column (more room for the formulas)
    "secondary_sidebar_items": {"generated/*": []},
}
html_sidebars = {"index": [], "install": [], "models": [], "c_lambda": [], "guide": [],
                 "contributing": [], "changelog": []}
html_show_sourcelink = False

# Papers are cited by authors and year in the docstrings and the reproduction reports
# themselves (and the reproduction scripts are named so, e.g. liu_yuan_2011_table1.py).


def _escape_shapes(text):
    """``shape (n_iter_,)`` reads as a link to a target "n_iter" in reST: escape the
    trailing underscores of attribute names inside shape tuples (parentheses with a comma,
    outside code and math)."""
    def escape(m):
        return re.sub(r"(\w)_(?=[\s,)])", r"\1\\_", m[0])

    return re.sub(r"\([^()`]*,[^()`]*\)", escape, text)


def _skip_member(app, what, name, obj, skip, options):
    """Document the methods msvm defines; scikit-learn's own (get_params, set_params,
    set_*_request, the mixins' score) are documented by scikit-learn."""
    module = getattr(obj, "__module__", None) or ""
    if what == "class" and module.startswith("sklearn"):
        return True
    return None


# Display formulas in the docstrings are written on one logical line (they read so in help()).
# MathJax 3 does not break lines, so a formula wider than the column (the reinforced MSVM's
# and the angle-based ones at 1280 px) is set in rows here: a new row before the constraint
# ("s.t.") and before the second loss term, rows aligned on the left.  Only formulas longer
# than WRAP_MATH_CHARS characters of LaTeX are touched.
WRAP_MATH_CHARS = 150
_MATH_BREAKS = (r"\quad\text{s.t.}\quad", r"+ (1-\gamma)")


def _wrap_display_math(text):
    """Split long ``.. math::`` blocks into left-aligned rows (an amsmath ``split``, which
    Sphinx's MathJax output uses for a formula containing a row break)."""
    def wrap(m):
        indent, body = m[1], " ".join(m[2].split())
        if len(body) <= WRAP_MATH_CHARS or "\\\\" in body:
            return m[0]
        for mark in _MATH_BREAKS:
            row = mark.replace(r"\quad\text", r"\text")
            body = body.replace(mark, r"\\ &\qquad {}" + row if row[0] == "+" else
                                r"\\ &" + row)
        if "\\\\" not in body:
            return m[0]
        return f"{indent}.. math::\n\n{indent}    &" + body + "\n\n"

    return re.sub(r"(?m)^( *)\.\. math::\n\n((?:\1 {4}.*\n)+)\n?", wrap, text)


def _process_docstring(app, what, name, obj, options, lines):
    text = _wrap_display_math("\n".join(lines) + "\n")
    lines[:] = _escape_shapes(text).split("\n")[:-1]


# --- Generated pages: the recorded paper reproductions and the "which model when" table ---
REPRODUCE_SRC = ROOT / "benchmarks" / "results" / "reproduce"
REPRODUCE_OUT = DOCS / "reproduce"


def _link_outside(m):
    """Keep the text of a link that points out of the reproduction folder."""
    target = m[2]
    if target.endswith((".md", ".png")) and "/" not in target:
        return m[0]
    return m[1]


def copy_reproductions(app):
    """Copy the recorded reproduction reports and figures into docs/reproduce/."""
    if REPRODUCE_OUT.exists():
        shutil.rmtree(REPRODUCE_OUT)
    REPRODUCE_OUT.mkdir()
    reports = sorted(p for p in REPRODUCE_SRC.glob("*.md") if p.name != "README.md")
    for path in sorted(REPRODUCE_SRC.glob("*.png")):
        shutil.copy2(path, REPRODUCE_OUT / path.name)
    for path in [REPRODUCE_SRC / "README.md", *reports]:
        text = path.read_text(encoding="utf-8")
        text = re.sub(r"(?<!!)\[([^\]]+)\]\(([^)]+)\)", _link_outside, text)
        text = re.sub(r"(\w+) & (\w+) \((\d{4})\)", r"\1 and \2 (\3)", text)
        # "[1+u]_+ - [u-1]_+" outside code spans would read as emphasis in Markdown
        parts = text.split("`")
        parts[::2] = [part.replace("]_+", "]\\_+") for part in parts[::2]]
        text = "`".join(parts)
        name = "index.md" if path.name == "README.md" else path.name
        if name == "index.md":
            text = text.replace(
                "\n\n", "\n\nThese pages are the recorded reports of "
                "`benchmarks/results/reproduce/` in the repository, as the scripts wrote "
                "them.\n\n", 1)
            toctree = "\n".join(p.stem for p in reports)
            text += f"\n```{{toctree}}\n:hidden:\n\n{toctree}\n```\n"
        (REPRODUCE_OUT / name).write_text(text, encoding="utf-8")


def setup(app):
    app.connect("builder-inited", copy_reproductions)
    # before numpydoc (priority 500) turns the sections into reST
    app.connect("autodoc-process-docstring", _process_docstring, priority=100)
    app.connect("autodoc-skip-member", _skip_member)
