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
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.md5",
                    "auto_examples/*.json"]
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

# --- API reference -------------------------------------------------------------------------
autosummary_generate = True
numpydoc_show_class_members = False      # the autosummary class template lists the methods
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()
numpydoc_xref_param_type = False

intersphinx_mapping = {}                  # offline builds: no inventories are fetched

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
    "header_links_before_dropdown": 5,
    # API pages: one object each, so no "on this page" column (more room for the formulas)
    "secondary_sidebar_items": {"generated/*": []},
}
html_sidebars = {"index": [], "install": [], "models": [], "c_lambda": [], "guide": [],
                 "changelog": []}
html_show_sourcelink = False

# --- Papers are cited by authors and year -------------------------------------------------
# The docstrings and the recorded reproduction reports name the papers by the numbers of the
# project's reading list ("seed 001"); the site cites them by authors and year instead.
PAPERS = {
    "000": ("Liu, Wu and He", "2011"),
    "001": ("Wu and Liu", "2007"),
    "002": ("Liu and Yuan", "2011"),
    "003": ("Wu and Liu", "2013"),
    "004": ("Kang, Lin and Zhang", "2019"),
}
_AUTHORS = r"(?:Liu, Wu (?:and|&) He|Wu (?:and|&) Liu|Liu (?:and|&) Yuan|Kang, Lin (?:and|&) Zhang)"


def cite_papers(text):
    """Replace the reading-list numbers ("seed 001") in ``text`` by authors and year."""
    def authors(num):
        return PAPERS[num][0]

    def year(num):
        return PAPERS[num][1]

    text = text.replace("Every paper in ``seeds/``", "Every paper")
    # "seeds 000 and 002" -> "Liu, Wu and He (2011) and Liu and Yuan (2011)"
    text = re.sub(r"seeds (\d{3}) and (\d{3})",
                  lambda m: f"{authors(m[1])} ({year(m[1])}) and {authors(m[2])} ({year(m[2])})",
                  text)
    # "Seed 001 (Wu and Liu, truncated-hinge-loss MSVM)" -> "Wu and Liu (2007)"
    text = re.sub(r"[Ss]eed (\d{3}) \([^)]*\)",
                  lambda m: f"{authors(m[1])} ({year(m[1])})", text)
    # "seed 000, Liu, Wu & He" (a table cell) -> "Liu, Wu and He (2011)"
    text = re.sub(r"[Ss]eed (\d{3}), " + _AUTHORS + r"(?: \(slides\)| \d{4})?",
                  lambda m: f"{authors(m[1])} ({year(m[1])})", text)
    # "Kang, Lin and Zhang (seed 004, section 3.1)" -> "Kang, Lin and Zhang (2019, section 3.1)"
    text = re.sub(r"(" + _AUTHORS + r") \([Ss]eed (\d{3})",
                  lambda m: f"{m[1]} ({year(m[2])}", text)
    # "of Wu and Liu, seed 001." -> "of Wu and Liu (2007)."
    text = re.sub(r"(" + _AUTHORS + r"),? [Ss]eed (\d{3})",
                  lambda m: f"{m[1]} ({year(m[2])})", text)
    # "(seed 000, section 5.1)" -> "(Liu, Wu and He 2011, section 5.1)"
    text = re.sub(r"\([Ss]eed (\d{3})",
                  lambda m: f"({authors(m[1])} {year(m[1])}", text)
    # "seed 002's tables" -> "Liu and Yuan's (2011) tables"
    text = re.sub(r"[Ss]eed (\d{3})'s",
                  lambda m: f"{authors(m[1])}'s ({year(m[1])})", text)
    # anything else: "seed 000 section 3.3" -> "Liu, Wu and He (2011) section 3.3"
    text = re.sub(r"[Ss]eed (\d{3})(?!\d)",
                  lambda m: f"{authors(m[1])} ({year(m[1])})", text)
    return text


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


def _process_docstring(app, what, name, obj, options, lines):
    lines[:] = _escape_shapes(cite_papers("\n".join(lines))).split("\n")


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
    reports = sorted(p for p in REPRODUCE_SRC.glob("seed*.md"))
    for path in sorted(REPRODUCE_SRC.glob("*.png")):
        shutil.copy2(path, REPRODUCE_OUT / path.name)
    for path in [REPRODUCE_SRC / "README.md", *reports]:
        text = path.read_text(encoding="utf-8")
        text = re.sub(r"(?<!!)\[([^\]]+)\]\(([^)]+)\)", _link_outside, text)
        text = cite_papers(text)
        text = re.sub(r"(\w+) & (\w+) \((\d{4})\)", r"\1 and \2 (\3)", text)
        # "[1+u]_+ - [u-1]_+" outside code spans would read as emphasis in Markdown
        parts = text.split("`")
        parts[::2] = [part.replace("]_+", "]\\_+") for part in parts[::2]]
        text = "`".join(parts)
        name = "index.md" if path.name == "README.md" else path.name
        if name == "index.md":
            text = text.replace(
                "\n\n", "\n\nThese pages are the recorded reports of "
                "`benchmarks/results/reproduce/` in the repository, as the scripts wrote them.\n\n", 1)
            toctree = "\n".join(p.stem for p in reports)
            text += f"\n```{{toctree}}\n:hidden:\n\n{toctree}\n```\n"
        (REPRODUCE_OUT / name).write_text(text, encoding="utf-8")


def setup(app):
    app.connect("builder-inited", copy_reproductions)
    # before numpydoc (priority 500) turns the sections into reST
    app.connect("autodoc-process-docstring", _process_docstring, priority=100)
    app.connect("autodoc-skip-member", _skip_member)
