"""Write docs/_inventories/numpy.inv: an intersphinx inventory of the NumPy names the docs use.

NumPy's own ``objects.inv`` is not available offline (no Debian or PyPI package ships it), so
this script writes one for exactly the NumPy names the documentation references: the
``np.<name>`` attributes that the gallery examples use (sphinx-gallery links them in the
rendered code) and the ``numpy.<name>`` targets of cross-reference roles in the docs and in
msvm's docstrings.  Each name points to its page in NumPy's online documentation
(``https://numpy.org/doc/stable/``, the base URL of ``intersphinx_mapping`` in conf.py), by
the layout of NumPy's documentation sources:

* ``numpy.random.default_rng`` and ``numpy.random.Generator``: ``reference/random/generator``
  (``autofunction`` / ``autoclass`` in ``reference/random/generator.rst``), and a method
  ``numpy.random.Generator.<m>``: ``reference/random/generated/numpy.random.Generator.<m>``
  (its ``autosummary :toctree: generated/``);
* the scalar types (``numpy.float64``, ...): ``reference/arrays.scalars``
  (``autoclass`` in ``reference/arrays.scalars.rst``);
* every other name, a routine, ufunc, class or index helper of the ``numpy`` namespace:
  ``reference/generated/numpy.<name>`` (the ``autosummary :toctree: generated/`` lists of the
  ``reference/routines.*.rst`` pages and of ``arrays.ndarray.rst``), an alias at the page of
  the object it names (``numpy.abs``: ``numpy.absolute``);

with the object's own anchor (``#numpy.<name>``).  Run from the repository root:
``python docs/make_numpy_inventory.py`` (``--check`` exits 1 when the shipped inventory is
not what the script writes now, e.g. after an example started using a new NumPy name).
"""

import ast
import re
import sys
import zlib
from pathlib import Path

import numpy as np

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
TARGET = DOCS / "_inventories" / "numpy.inv"
# numpy.<dotted name> in a cross-reference role (:class:`numpy.ndarray`, {func}`~numpy.x`)
ROLE = re.compile(r"[:}]`~?(numpy(?:\.\w+)+)`")
GENERATOR_PAGE = "reference/random/generator.html"
SCALARS_PAGE = "reference/arrays.scalars.html"


def _example_names(path):
    """numpy.<a>.<b> for every attribute chain ``np.a.b`` (or ``numpy.a.b``) in a script."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    aliases = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.Import)
               for a in node.names if a.name == "numpy"}
    names = set()
    for node in ast.walk(tree):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in aliases and parts:
            names.add(".".join(["numpy"] + parts[::-1]))
    return names


def _resolve(name):
    """The longest prefix of ``name`` that is a NumPy object, and the object (None: none)."""
    parts = name.split(".")
    obj, found = np, None
    for i in range(1, len(parts)):
        if not hasattr(obj, parts[i]):
            break
        obj = getattr(obj, parts[i])
        found = (".".join(parts[:i + 1]), obj)
    return found


def referenced_names():
    """The NumPy objects the docs reference: {full name: object}."""
    names = set()
    for path in sorted((ROOT / "examples").glob("*.py")):
        names |= _example_names(path)
    texts = [*DOCS.glob("*.md"), *DOCS.glob("*.rst"), *(ROOT / "src" / "msvm").rglob("*.py")]
    for path in texts:
        names |= set(ROLE.findall(path.read_text(encoding="utf-8")))
    resolved = dict(filter(None, (_resolve(name) for name in names)))
    # a module (numpy.random) is not a page of this layout
    return {name: obj for name, obj in sorted(resolved.items())
            if not isinstance(obj, type(np))}


def entry(name, obj):
    """(role, relative URI) of one name, by NumPy's documentation layout (module docstring)."""
    if isinstance(obj, type) and issubclass(obj, np.generic):
        return "py:class", f"{SCALARS_PAGE}#{name}"
    if name in ("numpy.random.default_rng", "numpy.random.Generator"):
        role = "py:class" if isinstance(obj, type) else "py:function"
        return role, f"{GENERATOR_PAGE}#{name}"
    if name.startswith("numpy.random.Generator."):
        return "py:method", f"reference/random/generated/{name}.html#{name}"
    if isinstance(obj, type):
        role = "py:class"
    elif isinstance(obj, np.ufunc) or not callable(obj):
        role = "py:data"
    else:
        role = "py:function"
    # an alias (numpy.abs is numpy.absolute) has no page of its own: its object's page
    own = getattr(obj, "__name__", None)
    if name.count(".") == 1 and own and getattr(np, own, None) is obj:
        name = f"numpy.{own}"
    return role, f"reference/generated/{name}.html#{name}"


def inventory_bytes(names):
    """An intersphinx inventory (format version 2) of ``names``."""
    header = ("# Sphinx inventory version 2\n# Project: NumPy\n"
              "# Version: stable\n"
              "# The remainder of this file is compressed using zlib.\n")
    lines = []
    for name, obj in names.items():
        role, uri = entry(name, obj)
        lines.append(f"{name} {role} 1 {uri} -\n")
    return header.encode() + zlib.compress("".join(lines).encode(), 9)


def main(argv):
    data = inventory_bytes(referenced_names())
    if "--check" in argv:
        if not TARGET.exists() or TARGET.read_bytes() != data:
            print(f"{TARGET} is stale: run python docs/make_numpy_inventory.py")
            return 1
        return 0
    TARGET.write_bytes(data)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
