"""Shared pieces of the paper-reproduction scripts in benchmarks/reproduce/.

Each script reproduces one table of a paper in ``seeds/``: it runs the paper's protocol (data,
sizes, tuning, repetitions), prints our mean (sd) next to the paper's published mean (sd) and
writes a markdown table (and the raw numbers as JSON) into ``benchmarks/results/reproduce/``.

Comparison rule.  A cell is flagged when our mean and the paper's differ by more than two
standard errors of the difference, ``|m_ours - m_paper| > 2 sqrt(se_ours^2 + se_paper^2)``,
with ``se = sd / sqrt(reps)``.  Papers print either standard deviations or standard errors in
parentheses; each table says which (``paper_spread='sd'`` or ``'se'``).

``--quick`` runs a few small repetitions and writes ``quick_*`` files (git-ignored); the test
suite runs every script this way as a smoke test.
"""

import argparse
import datetime
import json
import math
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

RESULTS_DIR = Path(__file__).resolve().parents[1] / "results" / "reproduce"


def parse_args(description, argv=None, default_reps=None):
    """The command line every script takes: --quick, --reps, --out, --seed."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true",
                        help="a few small repetitions (smoke test); writes quick_* files")
    parser.add_argument("--reps", type=int, default=None,
                        help=f"repetitions (default: the paper's, {default_reps})")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR,
                        help="output directory (default benchmarks/results/reproduce)")
    parser.add_argument("--seed", type=int, default=0, help="base random seed")
    return parser.parse_args(argv)


def summarize(values):
    """(mean, sd, se, count) of a list of per-repetition values (sd with ddof = 1)."""
    v = np.asarray(values, dtype=np.float64)
    n = len(v)
    mean = float(v.mean()) if n else math.nan
    sd = float(v.std(ddof=1)) if n > 1 else math.nan
    return mean, sd, (sd / math.sqrt(n) if n > 1 else math.nan), n


def compare(values, paper_mean, paper_spread, paper_reps, spread_kind):
    """Our summary against the paper's; returns a dict with the z score and the flag."""
    mean, sd, se, n = summarize(values)
    out = {"mean": mean, "sd": sd, "se": se, "reps": n, "paper_mean": paper_mean,
           "paper_spread": paper_spread, "paper_spread_kind": spread_kind,
           "paper_reps": paper_reps, "z": None, "differs": None}
    if paper_mean is None or paper_spread is None or not n > 1:
        return out
    paper_se = paper_spread if spread_kind == "se" else paper_spread / math.sqrt(paper_reps)
    se_diff = math.sqrt(se ** 2 + paper_se ** 2)
    gap = mean - paper_mean
    z = gap / se_diff if se_diff > 0 else (0.0 if gap == 0 else math.copysign(math.inf, gap))
    out["z"] = float(z)
    out["differs"] = bool(abs(z) > 2.0)
    return out


def fmt(mean, spread, digits=4, scale=1.0):
    """'m (s)' with a fixed number of decimals; '-' for a missing value."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "-"
    if spread is None or (isinstance(spread, float) and math.isnan(spread)):
        return f"{mean * scale:.{digits}f}"
    return f"{mean * scale:.{digits}f} ({spread * scale:.{digits}f})"


def comparison_row(label, cmp, digits=4, scale=1.0):
    """Markdown cells: label, ours mean (sd), paper mean (spread), z, flag."""
    ours = fmt(cmp["mean"], cmp["sd"], digits, scale)
    paper = fmt(cmp["paper_mean"], cmp["paper_spread"], digits, scale) \
        if cmp["paper_mean"] is not None else "not published"
    z = "-" if cmp["z"] is None else f"{cmp['z']:+.1f}"
    flag = "" if not cmp["differs"] else "**> 2 s.e.**"
    return [label, ours, paper, z, flag]


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def git_commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True,
                              cwd=Path(__file__).resolve().parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def provenance(args, started):
    """One line: date, commit, machine, repetitions mode, wall time."""
    import msvm
    return (f"Run {datetime.date.today().isoformat()} on commit {git_commit()}, msvm "
            f"{msvm.__version__}, Python {platform.python_version()}, "
            f"{platform.machine()}; {'quick mode' if args.quick else 'full run'}; "
            f"wall time {time.perf_counter() - started:.0f} s.")


def write_outputs(args, name, markdown, payload):
    """Write ``name``.md and ``name``.json (``quick_`` prefixed in quick mode) to --out."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = ("quick_" if args.quick else "") + name
    (out / f"{stem}.md").write_text(markdown.rstrip() + "\n")
    (out / f"{stem}.json").write_text(json.dumps(payload, indent=1, default=_json_default))
    print(f"wrote {out / (stem + '.md')}", file=sys.stderr)
    return out / f"{stem}.md"


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def figure_path(args, name):
    """Where a PNG figure goes (``quick_`` prefixed in quick mode)."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    return out / (("quick_" if args.quick else "") + f"{name}.png")
