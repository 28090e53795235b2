"""Exact-kernel speed of the per-class-hinge models on the SMO path (issue 24 items 1, 3, 4).

    python -m benchmarks.run_per_class_speed                     # pendigits table + floor
    python -m benchmarks.run_per_class_speed --scaling 10000 20000   # item 3 sizes
    python -m benchmarks.run_per_class_speed --linear            # item 4: the linear path
    python -m benchmarks.run_per_class_speed --large-c           # also C = 256, gamma = 1/32
    python -m benchmarks.run_per_class_speed --tag before        # label the run
    python -m benchmarks.run_per_class_speed --tag T --merge-from other/per_class_speed.json
    python -m benchmarks.run_per_class_speed --tag T --no-pendigits --scaling 80000 --append

(from the repository root)

Pendigits (msvm.datasets.load_pendigits), stratified 70/30 split (random_state=0),
StandardScaler, RBF C = 10, gamma = 1/16, one BLAS thread.  In one process: SVC, the "floor"
(the whole training RBF matrix once with BLAS, float64, plus one product of it with an
n x k matrix) and ReinforcedMSVM, Lee-Lin-Wahba (reinforcement=0), AngleBasedMSVM,
WestonWatkinsMSVM and WeightedRobustMSVM(truncation=None).  For each fit: CPU time
(time.process_time), its ratio to SVC and to the floor, epochs (n_iter_), and the SMO path's
steps, working-set blocks and kernel rows computed (read from the solver's verbose report).
The machine may be shared with other work: read CPU times and the ratios of one run.
Results go to benchmarks/results/per_class_speed.md and .json (one entry per --tag).
"""

import argparse
import contextlib
import io
import json
import os
import re
import time
import warnings

import numpy as np

from benchmarks.run_row_batches import add_row_switches, apply_row_switches
from benchmarks.harness import RESULTS, git_commit, machine_info, markdown_table, write_json
from benchmarks.per_class_large_c import R10
from benchmarks.per_class_pages import R14_PAGES
from benchmarks.per_class_floor import R15_TEXT, R16_TEXT
from benchmarks.per_class_r17 import R17_TEXT
from benchmarks.run_row_batches import build_commit

# measured once on this branch with temporary knobs (not rerun by this script): ReinforcedMSVM
# on pendigits as above, CPU time of one fit each, the machine shared (load 8-14)
TRIED = """## Tried on the way (ReinforcedMSVM, pendigits; not kept unless said)

| change | CPU s | epochs | SMO steps | blocks |
|---|---|---|---|---|
| main (block solved to eps, q = 256, half the previous set kept) | 3.68 | 69 | 525,462 | 1,345 |
| block tolerance 0.1 x its starting violation (kept) | 3.21-3.27 | 57 | 436,576 | 1,267 |
| block tolerance 0.05 | 3.58 | 64 | 487,696 | 1,464 |
| block tolerance 0.2 | 3.62 | 49 | 376,148 | 1,630 |
| block tolerance 0.3 | 3.59 | 43 | 323,960 | 1,751 |
| block step budget 10 q (instead of 50 q) | 3.46 | 66 | 500,245 | 1,453 |
| 0.1 and budget 3 q | 3.72 | 58 | 445,966 | 1,657 |
| working set q = 128 | 4.75 | 81 | 620,385 | 3,687 |
| working set q = 512 | 3.95 | 59 | 449,055 | 631 |
| 0.1 and q = 512 | 3.52 | 49 | 369,743 | 677 |
| 0.15 and q = 384 | 3.47 | 49 | 370,888 | 931 |
| 0.1 and q = 192 | 4.08 | 66 | 501,477 | 2,187 |
| 0.1 and a quarter of the previous set kept | 3.53 | 58 | 444,016 | 1,402 |
| none of the previous set kept | 128.3 | 295 | 769,402 | 30,099 |

LLW with the block tolerance 0.1: 6.5 -> 6.07 s (153 -> 135 epochs).

## Tried for second-order steps (issue 24 item 1; none kept)

ReinforcedMSVM on pendigits, CPU time of one fit each, the machine shared (load 8-13), with the
prototype of commit f79bd02 (reverted in the next commit; its environment knobs reproduce
these rows).  Free-set Newton: every N blocks, the variables strictly inside their boxes
(5-9k of them, in 2,700-3,900 samples: far fewer than the 35k "free" counted before), their
samples' float32 kernel block K_SS gathered from the row cache, Jacobi-preconditioned CG on
H_FF x = -z_F with one sgemm per product (14-22 ms each here), the step clipped to the boxes
and an exact line search along the clipped step, then every score updated.  Block-local
Newton: the grouped path's _free_newton_step (CG on the q x q block) on ungrouped blocks.

| change (C = 10, gamma = 1/16 unless said) | CPU s | epochs | SMO steps | blocks | Newton (CG) |
|---|---|---|---|---|---|
| main | 3.08 | 57 | 436,576 | 1,267 | 0 |
| free-set Newton every 22 blocks, 30 CG products | 18.78 | 41 | 312,119 | 812 | 36 (1,080) |
| the same every 11 blocks | 29.15 | 35 | 262,397 | 701 | 63 (1,890) |
| every 22 blocks, 8 CG products | 11.40 | 55 | 417,273 | 1,200 | 54 (432) |
| every 22 blocks, 3 CG products | 8.14 | 56 | 424,016 | 1,218 | 55 (165) |
| every 22 blocks, no CG product (a) | 4.44 | 57 | 436,576 | 1,267 | 0 (0) |
| every 22 blocks, 30 CG, with inward bound variables (b) | 18.52 | 42 | | | |
| block-local Newton every 100 pair steps | 83.58 | 37 | 280,735 | 1,272 | |
| block-local Newton at 1/8 of the grouped path's trigger | 5.31 | 60 | 456,350 | 1,367 | |
| ALM inner tolerance from 0.01 instead of 0.1 (c) | 3.42 | 64 | | | |
| C = 256, gamma = 1/32: main | 20.04 | 484 | | | |
| C = 256: free-set Newton every 22 blocks, 30 CG | 37.40 | 437 | | | 42 (1,260) |
| C = 256: block-local Newton at 1/8 of the trigger | 81.97 | 421 | | | |

(a) the gathering of K_SS alone: about 23 ms a step.  (b) the free set plus the variables at
a bound whose gradient points into the box by more than half the last scan's violation.
(c) not a second-order step; LLW 6.17 s, 141 epochs (135 on main).

What this says: the CG needs about 30 products (each an m x m by m x k product) to cut the
blocks by a third, while the whole SMO fit costs about 200 such products; with fewer
products the block count does not move.  Late in a solve the Newton decrease on the free
set is a few 1e-3 of the objective (the free values are already near their face optimum): the
epochs go to finding which variables sit at their bounds, which a step on the free set
does not do.  The line search took 5-25 % of the clipped step early on and 90-97 % late.
"""

# r5 (issue 24 item 1): where the CPU goes, measured with perf record on one fit each and
# a temporary counter build (not rerun by this script), and what was tried and not kept
R5 = """## r5: where the CPU goes (perf, pendigits ReinforcedMSVM, main 8b55e2c)

perf record on one fit each (the samples of the compiled core, the process's start left
out; shares of the fit), one thread, the machine shared:

| part | C = 10, gamma = 1/16 (2.9 s) | C = 256, gamma = 1/32 (17 s) |
|---|---|---|
| local SMO steps (extremes, partner search, step updates, transversal) | 30 % | 62 % |
| score updates after a block (rows_axpys) | 29 % | 18 % |
| global scans (_scan_part) | 22 % | 3 % |
| working-set gather (K_BB, block variables) | 14 % | 6 % |
| kernel rows (dot products, exponentials) | 6 % | 1 % |
| augmented-Lagrangian rounds, Python | below 1 % | below 1 % |

Counted per epoch (n SMO steps) with a temporary counter build: at C = 10 the epochs of the
last two augmented-Lagrangian rounds (45 of 57) change 3.7-21k variables each; in the second
round 89-99 % of them are free before and after, 200-440 go from free to a bound and 80-290
back; in the last round 97.5-99.8 % are free-to-free moves, 17-55 go to a bound and 6-35
back.  Bound-to-bound flips stop after epoch 9.  So the late solve is tiny moves of free
variables, not bound flips.  Blocks get shorter late (7-58 blocks an epoch, 130-1,100 steps
each), so the per-block costs (scan, gather, score update) grow to dominate.  At C = 256 an
epoch is about one block of 512 samples taking 5-11k local steps, again 98-99.9 % moves of
free variables: the local SMO crawls on an ill-conditioned free set, and its two passes over
the bucket per step were the largest single cost (44 %).  The augmented-Lagrangian rounds at
C = 10: three inner solves (inner tolerance 0.1 for epochs 0-11, 0.01 for 11-29, 0.001 for
29-57); the multiplier updates cost below 1 %, but the epoch ending each round holds 100-125
short blocks (about 70 steps each), against 7-58 blocks elsewhere.  The fit at C = 256 is
four solves (three stop at the 100-epoch budget of msvm/_sequence.py's finishing schedule,
no finishing step taken).

## Tried in r5 (exact changes only; not kept unless said)

| change (every one keeps the iterates) | CPU |
|---|---|
| local SMO: extremes and partner search as vectorized passes (kept) | C = 10 -6 %, C = 256 -15 % |
| local SMO: a step's block updates as cloned C loops (kept) | C = 256 a further -10 % |
| global scan: selects instead of branches on each variable's z (kept) | C = 10 -3 % |
| score update in column tiles of 512 / 1024 / 2048 samples (a) | C = 10 +7 / +7 / +3 % |
| working-set gather in increasing column order (b) | the gather +57 % |

The runs "r5-before" (main 8b55e2c, built apart and run from its own tree, merged here with
--merge-from) and "r5" (the three kept changes) ran one after the other on the shared
machine (load 10-12); a first pair of runs with the first two changes gave C = 10 ReinforcedMSVM
3.05 -> 2.80 s, LLW 5.70 -> 5.07 s, AngleBasedMSVM 3.44 -> 3.07 s, C = 256 18.13 -> 13.75 s.
Single WeightedRobustMSVM(truncation=None) fits vary by +-6 % at this load (0.208 and
0.215 s on main, 0.221 and 0.210 s with the changes); five fits each in alternating
processes (three rounds, load 12): 0.202-0.212 s on main, 0.206-0.210 s with the changes
(its grouped path keeps the plain loops); WestonWatkinsMSVM 0.162-0.164 s -> 0.154-0.159 s.
Every fit above has main's objective to the last digit, epochs, steps and blocks
(fingerprint 38 of 38 identical).

(a) each changed kernel row read once for all its slots instead of once per slot: the rows
come from the 260 MB L3 cache, and the update is bound by the float32-to-double conversions,
not by memory.  A BLAS product for the update (F^T += dU^T K_B) was not tried: sgemm on the
float32 rows rounds in single precision and dgemm adds the terms in an order of its own (and
per thread split), so neither keeps the iterates, and (a) says little is left to gain from
reading each row once.  (b) the block's columns sorted, the entries written to their block
positions: perf samples of the gather 624 -> 982.
"""

# r6 (issue 24 item 1, changes that move the iterates): what was tried with the temporary
# environment knobs of commit 8a06e70 (reverted in 7fb02aa; not rerun by this script)
R6 = """## Tried in r6 (changes that move the iterates; one kept)

Pendigits ReinforcedMSVM, one fit each, one thread, CPU time; the machine was shared (load
6-10 during these runs, +-5 % between repeats of one fit), so compare within a column.  The
knobs of commit 8a06e70 (reverted in the next commit) reproduce every row; with none set
every fit is main's.

C = 10, gamma = 1/16:

| change | CPU s | epochs | SMO steps | blocks |
|---|---|---|---|---|
| main | 2.52-2.70 | 57 | 436,576 | 1,267 |
| zero settling margin on per-class hinges (kept) | 2.43-2.61 | 58 | 444,057 | 1,380 |
| the same from the first scan of a round | 2.66 | 59 | 452,346 | 1,484 |
| settling margin half the last violation | 2.69 | 60 | 456,050 | 1,556 |
| candidates down to 0.5 eps (tails filled with near-violators) | 2.50 | 57 | 438,466 | 1,252 |
| candidates down to 0.2 eps | 2.55-2.75 | 58 | 440,960 | 1,215 |
| a multiplier step every full scan inside a round | 2.81 | 59 | 447,782 | 1,500 |
| a multiplier step every 3 full scans | 2.72 | 58 | 443,674 | 1,388 |
| rounds before the last end at 1.5 eps (no tail) | 2.60 | 64 | 485,408 | 1,155 |
| rounds before the last end at 2 eps | 2.55 | 66 | 502,366 | 1,057 |
| rounds before the last end at 3 eps | 2.57 | 69 | 525,571 | 1,065 |
| rho 0.25 x the default (kappa median K_ii): 5 rounds | 2.96 | 56 | 423,767 | 1,683 |
| rho 4 x | 2.80 | 70 | 538,171 | 1,301 |
| rho 16 x | 2.97 | 86 | 655,573 | 1,247 |
| inner tolerance x 0.01 a round (0.1, 0.001) | 2.70 | 69 | 530,606 | 1,202 |
| inner tolerance x 0.3 a round | 3.08 | 46 | 349,531 | 1,713 |
| x 0.3 a round, rounds before the last end at 1.5 eps | 2.64 | 56 | 423,901 | 1,212 |
| x 0.2 a round, rounds before the last end at 1.5 eps | 2.59 | 55 | 417,894 | 1,196 |
| first inner tolerance 0.3 | 3.06 | 52 | 399,925 | 1,654 |
| first inner tolerance 1 | 3.02 | 68 | 516,756 | 1,480 |
| blocks holding every violator solved to 0.5 eps | 2.67 | 62 | 476,515 | 1,270 |
| blocks holding every violator solved to 0.2 eps | 2.64 | 69 | 530,569 | 1,162 |
| block tolerance 0.3 of its start (0.1 kept) | 3.04 | 43 | 323,960 | 1,751 |
| block tolerance 0.03 of its start | 2.90 | 64 | 491,608 | 1,419 |
| block step budget 10 q (50 q kept): the budget never binds | 2.69 | 57 | 436,576 | 1,267 |

C = 256, gamma = 1/32:

| change | CPU s | epochs | SMO steps | blocks |
|---|---|---|---|---|
| main | 12.56-13.57 | 484 | 3,718,804 | 1,240 |
| zero settling margin on per-class hinges (kept) | 13.28-13.62 | 457 | 3,509,327 | 1,506 |
| candidates down to 0.5 eps | 13.17 | 480 | 3,685,484 | 1,084 |
| a multiplier step every full scan inside a round | 13.89 | 475 | 3,647,560 | 1,270 |
| a multiplier step every 3 full scans | 13.72 | 475 | 3,654,178 | 1,351 |
| rounds before the last end at 2 eps | 14.20 | 517 | 3,974,758 | 1,057 |
| rho 0.25 x the default | 13.99 | 377 | 2,895,701 | 1,913 |
| rho 4 x | 14.20 | 570 | 4,380,765 | 884 |
| inner tolerance x 0.01 a round | 13.54 | 484 | 3,720,867 | 1,307 |
| inner tolerance x 0.3 a round | 12.72 | 466 | 3,578,244 | 1,161 |
| x 0.3 a round, rounds before the last end at 1.5 eps | 13.57 | 481 | 3,695,626 | 1,227 |
| blocks holding every violator solved to 0.5 eps | 15.10 | 516 | 3,967,328 | 1,202 |
| block tolerance 0.3 of its start | 13.21 | 278 | 2,136,675 | 1,956 |
| block tolerance 0.2 of its start | 13.84 | 334 | 2,566,416 | 1,755 |
| block tolerance 0.03 of its start | 15.27 | 723 | 5,560,421 | 1,137 |
| block step budget 10 q | 12.92 | 456 | 3,506,202 | 1,450 |
| working set 256 (512 chosen here) | 15.31 | 593 | 4,559,235 | 4,303 |
| working set 384 | 14.31 | 528 | 4,057,441 | 2,175 |
| the cluster start (plan override cluster_start='on') | 16.64 | 400 | 3,071,768 | 1,161 |

What this says.  Every change trades SMO steps against blocks: the ones that cut epochs by
20-45 % (block tolerance 0.3: C = 256 in 278 epochs instead of 484; inner tolerance x 0.3 a
round: C = 10 in 46 instead of 57) add as many blocks, and those that cut blocks (candidates
near eps, rounds ended loosely) add steps.  A least-squares fit of the C = 10 rows gives
CPU = 0.8 s + 1.3 us per SMO step + 1.0 ms per block: the blocks (their scans, gathers
and score updates of about 256 changed samples over all n) are half of the fit, so the lever
left is the fixed cost of a block, not the schedule.  The augmented Lagrangian is not the
bottleneck: rho 1 is the best of four, multiplier steps inside a round add blocks, and the
rounds' tails (blocks of 10-150 steps holding the last few violators, 60 / 215 / 120 blocks
at the end of the three rounds at C = 10: traced with MSVM_X_TRACE) cost less than the
steps that ending the rounds early adds.  At C = 256 the first solve's first round (from
alpha = 0) takes 86 of the 484 epochs with blocks that reach the step budget, and the solves
restarted at the 100-epoch budget of the finishing schedule spend about 300 epochs at
eps = 1e-3 with 2-3k violators and blocks of 5-10k steps.

Kept: per-class-hinge problems (every direction on one slot, no groups: ReinforcedMSVM,
Lee-Lin-Wahba, AngleBasedMSVM, the truncated models' convex steps) settle a variable at a
bound as soon as its gradient points out of the box (margin 0 instead of the last scan's
largest violation), from the second scan of each inner solve on; every full scan (each
SHRINK_EVERY scans and before the stop) still checks it.  Three alternating fits each, C = 10:
ReinforcedMSVM 2.56-2.70 -> 2.43-2.61 s, LLW 4.87-4.98 -> 4.50-4.65 s (135 -> 129 epochs),
AngleBasedMSVM 2.95-3.09 -> 2.61-2.80 s; C = 256 13.48-13.57 -> 13.42-13.62 s.
WestonWatkinsMSVM (two slots per direction) measured 0.164-0.169 -> 0.175-0.176 s with the
same rule and keeps libsvm's; WeightedRobustMSVM(truncation=None) (grouped) keeps it too.
Below 2,000 samples the rule is libsvm's as before (SETTLE_ZERO_MIN_N): on TargetedLocalMSVM's
200-sample local fits at tol 1e-6 the zero margin cost epochs (a warm start 112 -> 155, a cold
linear start 101 -> 177), so every fit of the fingerprint (all below 2,000 samples) is
main's; with the zero margin on every size, 15 of its 38 fits moved within tol (largest
relative objective change 4.3e-4).
"""

# r8 (issue 24 item 1): the per-block fixed cost, attributed with perf record and a temporary
# counter build (not rerun by this script), and the exact changes tried against it
R8 = """## r8: the per-block fixed cost (issue 24 item 1)

The r6 fit of the C = 10 runs (CPU = 0.8 s + 1.3 us per SMO step + 1.0 ms per block) left
the fixed cost of a working-set block as the lever.  Where it goes, on main 4c5a090 (the
solver of the run "r8" above, which is main's: no solver change was kept):

perf record (cpu-clock sampling, one fit each, one thread, the machine shared at load 3-16;
shares of the samples in msvm's compiled modules):

| part | ReinforcedMSVM C = 10 | LLW C = 10 | ReinforcedMSVM C = 256 |
|---|---|---|---|
| score update after a block (rows_axpys: _row_updates.h) | 35 % | 35 % | 34 % |
| global scans (_scan_part, _flat_violation) | 18.5 % | 19.5 % | 3.7 % |
| working-set gather of K_BB (_gather_part) | 14 % | 12 % | 12.5 % |
| block set-up (_block_variables, _settled_variable, _load_block) | 5.7 % | 5.5 % | 2.7 % |
| local SMO steps (z, extremes, partners, step updates) | 18 % | 20 % | 45 % |
| kernel rows (dot products, exponentials, cache) | 7 % | 5 % | 1.6 % |

Counted with a temporary counter build (per block, averaged over the fit):

| per block | ReinforcedMSVM C = 10 | LLW C = 10 | ReinforcedMSVM C = 256 |
|---|---|---|---|
| blocks (full scans among the scans) | 1,380 (132) | 2,130 (199) | 1,506 (145) |
| samples in the working set | 256 | 256 | 512 |
| its variables, less the settled ones | 640 | 782 | 1,356 |
| samples changed | 194 | 197 | 402 |
| (sample, slot) coefficients changed: kernel-row passes of the update | 372 | 455 | 894 |
| samples settled (of 7,694) at the write-back | 4,469 (58 %) | 4,399 (57 %) | 4,771 (62 %) |
| distinct samples changed between two full scans | 93 | 90 | 126 |

So a block at C = 10 runs one pass of the score update over all n samples per changed
(sample, slot) coefficient (372 x 7,694 = 2.9 M float32 terms, about 0.58 ms: 0.2 ns a
term), one scan of the unsettled samples (about 3,600 with the full scan every tenth,
0.31 ms: 8.5 ns a visited variable), one gather of the q x q block from the cached rows
(65,536 entries, 0.23 ms: 3.5 ns an entry) and 0.1 ms of block set-up: 1.2 ms, the fit's
1.0 ms a block.  No pass in it is redundant (one update, one scan, one gather a block, and
the scan already skips the settled samples and variables).  A C microbenchmark of the
update's access pattern on this machine (194 random rows of a 141 MB float32 store, the
size of the fit's row cache, 372 coefficients over 10 score rows): 0.74-0.76 ms a block
with the rows cold, 0.43 ms with the same rows read just before: the update is bound by
reading the changed samples' kernel rows from L3, not by the float32 conversions; column
tiles of 1,024 samples with each row read once for all its slots: 0.72 ms (-3 %).  At
C = 256 the rows are float64 (C above 100: cache_dtype 'auto') and the 200 MB cache holds
3,250 of the 7,694 rows, so the fit computes 18,016 rows (2.3 a sample), still 1.6 % of it.

Tried (each alone, exact: every fit keeps main's iterates to the last bit unless said;
ReinforcedMSVM C = 10, main's build and the change's in alternating processes, 3 fits each,
CPU time, load 9-19; none kept):

| change | main: CPU s (median) | with it | epochs | blocks |
|---|---|---|---|---|
| (a) scans over a list of unsettled samples | 2.49-2.60 (2.52) | 2.45-2.60 (2.55) | 58 | 1,380 |
| (b) K_BB gathered half and mirrored | 2.57-2.62 (2.58) | 2.55-2.61 (2.61) | 58 | 1,380 |
| (c) the scan in C with selects, cloned | 2.52-2.56 (2.53) | 2.75-2.80 (2.76) | 58 | 1,380 |
| (c) the same, scalar | 2.61-2.65 (2.65) | 2.85-2.89 (2.85) | 58 | 1,380 |
| (d) one hot scan after each scan (moves the iterates) | 2.57 (one fit) | 2.76 | 59 | 1,665 |
| (d) two hot scans after each scan | 2.57 (one fit) | 2.86 | 59 | 1,816 |
| (e) block set-up without groups inline | 2.87-2.96 (2.92) | 2.84-2.99 (2.99) | 58 | 1,380 |

(a) The samples unsettled at a full scan listed in sample order, the list compacted as
they settle, so that a partial scan does not pass over the settled ones: the pass over
them was cheap.  (b) DenseKernelRows' K is exactly symmetric (tests/test_row_sources.py),
so the entries b >= a were gathered and mirrored: the gather's share fell from 14.4 to
13.1 % of the samples, the mirror's column writes into the q x q block costing about what
the loads saved.  (c) The sample loop of the scan in C with selects instead of branches on
each variable's state (at a bound, free, settled): +9 % (+7.5 % without vectorization);
those branches are well predicted.  (d) Between two scans, rescans of the last scan's
candidates only (a block from one counts as partial; convergence only after a real scan):
the candidate lists shrink, so the blocks get smaller and more numerous.  (e) Which of a
block's variables are settled, decided inline without groups (the rooms are the box's)
instead of by a call to _settled_variable per variable (5 % of the samples): no measurable
change at this load (run while the r8 scaling ran).

Not tried: score updates of the unsettled samples only, the settled ones brought up to date
at the full scans.  The settled samples (58 %) are spread through the rows (the split
shuffles pendigits), so an update of the other 42 % still reads nearly every cache line of
each changed row (16 floats a line), and reading the rows is what bounds the update; the
deferred part would save about half of the settled samples' terms (93 distinct changed
samples between full scans against 194 a block) and change their rounding.  What would cut
the fixed cost is an update that reads fewer row bytes: fewer changed coefficients per unit
of progress (the schedule: r6 traded them against blocks) or the active samples contiguous
in the cached rows (a permuted cache rebuilt at the full scans; not attempted here).

## r8: scaling (issue 24 item 3)

make_classification (d = 20, k = 5, C = 1), the run "r8" above (main's solver, one thread,
CPU time, load 16 at its start): ReinforcedMSVM 0.92x SVC at n = 10,000, 1.21x at 20,000,
1.51x at 40,000; fitted exponents 2.37 against SVC's 2.01 (target: at most SVC's + 0.1).
What grows is the recomputation of kernel rows: the 200 MB float32 row cache holds 5,242 /
2,621 / 1,310 rows, the working set is 256 / 512 / 512 samples (512 once the cache holds
under half the rows), and the fits compute 15,496 / 55,952 / 159,502 rows (1.55 / 2.8 /
4.0 a sample): kernel values grow as n^2.68.  At 40,000 that is 194 rows a block (821
blocks): nearly every row a block uses is computed again, the cache holding 2.6 working
sets.  perf record of the 20,000-sample fit (7.6 s, one fit): computing kernel rows is 69 %
of the samples in msvm's compiled modules (dot products 34 %, distances and float32 stores
24 %, exponentials 12 %), the score update 13.5 %, the gather 8.7 %, the scans 3 %.  libsvm
computes a kernel column over its active (unshrunk) samples only, so the same 200 MB holds
longer-lived columns and each costs less; rows over the unsettled samples only (the same
contiguous active layout as item 1 above) is the change that would address both.
"""

R9 = """## r9: the active-first column layout of the row cache (issue 24 items 1 and 3; not kept)

Built as a prototype (commit 3be2293, reverted in the next commit; _smo.pyx's Design note 5
there): the cached rows' columns permuted so that the samples the blocks need current come
first (unsettled at the last full scan, in the working set, or settled within 3x the scan's
violation of unsettling), columns [0, npre); each block's score update covers the prefix
only and the summed changes of U of each changed sample go to the suffix at a sync (before
every full scan, at the end of every inner solve, before the pending rows could leave the
cache); the solver kept its own scores in column order.  A new layout moves the columns of
every cached row (one pass over the cache), rented like a ski against the update terms
wasted on prefix samples; an unsettled sample found in the suffix widened the prefix to
every column.  Engaged for dense X, n >= 2,000 and a cache holding half the rows (pendigits
at C = 10 and the 10k scaling fit; not C = 256, whose float64 rows fill the cache at 3,250
of 7,694, nor 20k and 40k).  Exact: the same steps, blocks and epochs on every fit below,
objectives equal to 12-13 digits (pendigits ReinforcedMSVM 44540.621970826935 ->
44540.62197082698); n_threads = 2 bitwise equal to 1; fingerprint 38 of 38 identical (none
of its fits engages it).

Same build, layout engaged and not, alternating in one process, medians of 3 fits, CPU
time, load 12-13 (benchmarks/run_active_layout.py, results/active_layout.md):

| fit | without | with | ratio | relayouts | syncs | update terms (blocks + syncs) |
|---|---|---|---|---|---|---|
| pendigits ReinforcedMSVM C = 10 | 2.845 | 2.977 | 1.05 | 7 | 61 | 1.79 G + 0.13 G |
| pendigits LLW C = 10 | 4.945 | 4.966 | 1.00 | 10 | 131 | 2.74 G + 0.21 G |
| pendigits AngleBasedMSVM C = 10 | 2.914 | 3.134 | 1.08 | 7 | 77 | 1.96 G + 0.13 G |
| pendigits WestonWatkinsMSVM C = 10 | 0.177 | 0.203 | 1.15 | 5 | 4 | 0.067 G + 0.002 G |
| pendigits ReinforcedMSVM C = 256 (not engaged) | 13.14 | 12.91 | 0.98 | 0 | 0 | |
| make_classification 10k C = 1 | 1.293 | 1.387 | 1.07 | 3 | 8 | 0.53 G + 0.03 G |

Without the layout the ReinforcedMSVM fit's update is about 2.06 G float32 terms (r8's
counters: 194 changed samples a block x 1,380 blocks x 7,694 columns); with it 1.92 G in all,
7 % fewer, bought with 7 relayouts (22 ms each: one pass over the 4,579 cached rows) and the
column lookups of the scans.  Tighter settings (one ReinforcedMSVM fit each, same build):

| setting | CPU s | relayouts | syncs | update terms | epochs, steps |
|---|---|---|---|---|---|
| without the layout | 2.77 | 0 | 0 | about 2.06 G | 58, 444,057 |
| slack 0 (a new layout at any waste), near 1x | 4.04 | 57 | 111 | 1.29 G + 0.37 G | 58, 444,057 |
| slack 0, near 0 (unsettled, working set) | 4.80 | 91 | 89 | 1.39 G + 0.35 G | 58, 445,878 (a) |

(a) the rounding of the suffix's sums flipped one settling decision (per-class problems
settle a variable as soon as its z points out of its box, margin 0): another path, objective
44540.556 against 44540.622, both certified (residual 9.9e-4, gap 7.3e-5).

Why it cannot pay here, whatever the rule:
1. The score update is 35 % of the compiled time (r8) and the active samples are 42 % of n on
   average, so even a free layout leaves the suffix's share, which the syncs give back in
   part: a full scan (every SHRINK_EVERY = 10 scans, and before any convergence is
   declared, the stopping rule's check of every sample) needs every score, so the suffix
   receives each changed sample once per interval between full scans instead of once per
   block: half the terms (1.66 G of 2.06 G at best, above).  That bounds the gain at about
   0.35 x 0.2 = 7 % of the fit.
2. The active set churns: in the slack-0 run 48 of the 91 full scans found unsettled samples
   in the suffix.  Each new layout is a pass over the whole cache (141 MB here, 22 ms, the
   update of about 20 blocks), so following the churn costs more than the terms it saves
   (4.04 s); renting it (the kept rule) keeps 7 relayouts but also most of the terms.
3. Rows of length n_active (libsvm's other half, the scaling lever at 20k-40k, where kernel
   rows are 69 % of the fit) were not built: the suffix's sync needs K[changed, suffix],
   which short rows do not hold, so every full scan would compute the changed samples' rows
   over the suffix, about the rows the short rows save (at 40k, 194 of a block's rows are
   computed anew and most of them change).  libsvm gains because it reconstructs once, at
   its single unshrink near 10 eps; msvm's full scans (about 130 a fit at pendigits, 6-10 at
   the scaling sizes) keep every settled sample checked for the exact stopping rule, and a
   schedule with fewer full scans moves the iterates (r6 traded scans against blocks).

Kept: nothing in the solver (main's iterates to the last bit).  The floor ratio and the
scaling runs r9 and r9-80k above are main's solver (branch rowcache after the revert).  At
n = 80,000 (load 13-18) ReinforcedMSVM took 366 s against SVC's 62.8 s (5.8x; 4 epochs,
1,194 blocks, 255,534 kernel rows computed, 3.2 a sample, with 655 rows cached): fitted
exponents over 10k-80k 2.65 against SVC's 1.79 (3.43 against 1.55 from 40k to 80k).  The
row cache's reach, not the update, is what grows: item 3 needs rows that cost less or stay
cached longer (shorter rows over the active samples, see 3. above, or a smaller working set
once the cache holds only one or two of them).
"""


R7 = """## r7 restart: the inner-tolerance schedule of the solves restarted at the finishing budget

Pendigits ReinforcedMSVM, C = 256, gamma = 1/32, one thread, tol 1e-3 (the run "r7 restart"
above is the build kept, main's solver).  Read from verbose=2 (one epoch = n = 7,694 SMO
steps of work); rho stayed 1 in every round.  No exact finishing step is taken in this fit
(the free set is above SMALL_FREE and `_finish_due` never fires), so each budget stop
restarts `solve` from the same alpha and mu and only the schedule starts over.

| solve (budget) | round: eps_in, epochs | end: violation, equality, gap |
|---|---|---|
| 1 (100) | 0.1: 86; 0.01: 14 (budget) | 1.9e-1, 1.9e-3, 3.3e-2 |
| 2 (100) | 0.1: 0.06 (465 steps); 1e-3: 100 (budget) | 4.9e-2, 8.8e-4, 7.3e-3 |
| 3 (200) | 0.1: 5 steps; 1e-3: 200 (budget) | 6.4e-3, 3.5e-4, 6.4e-4 |
| 4 (400) | 0.1: 1 step; 1e-3: 57 (converged) | 9.8e-4, 3.2e-4, 1.5e-4 |

Why the restarted solves land at 1e-3: not `_gap_verdict` (the KKT rule is never met before
a budget stop, so no gap is evaluated and the KKT tolerance stays tol) and not the certify
step (certify_start is off on restarts), but `_next_round`.  A restart begins at EPS_START =
0.1, which the iterate already meets within a few steps; then eps_in = 0.1 x 0.1 = 0.01, and
since the equality residual (4.4e-4, 5.6e-4, 3.5e-4 after that first round) is below it,
eps_in drops to max(equality residual, KKT tolerance) = 1e-3.  An uninterrupted solve applies
the same rule; the budget stops only bring the 1e-3 round one round earlier.

Tried (a temporary `schedule` in/out argument of `solve`, eps_in and rho carried from one
run to the next by `_solve_and_finish`; and FINISH_AFTER = 10^6 for one uninterrupted
solve, rounds at 0.1, 0.01, 1e-3).  CPU of whole fits, alternating in one session, the
machine shared (load 3.7-5.6); settled = settled visits:

| schedule | fits | CPU s (median) | epochs | steps | blocks | settled | objective |
|---|---|---|---|---|---|---|---|
| main (restart at 0.1) | 5 | 12.34-13.95 (12.47) | 457 | 3.51M | 1,506 | 6.53M | 507214.269 |
| resume the last eps_in | 5 | 12.27-13.00 (12.66) | 412 | 3.17M | 1,772 | 7.73M | 507214.369 |
| no budget stop | 3 | 12.51-12.77 (12.74) | 416 | 3.19M | 1,773 | 7.73M | 507218.682 |

Not kept: resuming cuts 10 % of the epochs (the steps) but adds 18 % blocks and settled
visits, and the fit costs the same (the r6 fit CPU = 0.8 s + 1.3 us per step + 1.0 ms per
block predicts -0.45 s for the steps and +0.27 s for the blocks; the measured difference is
within the spread of repeats).  The uninterrupted schedule costs the same too: the restarts
and their schedule are not where the C = 256 fit's CPU goes; its ~400 epochs at eps_in 0.01
and 1e-3 are (blocks of 5-10k steps over 2-3k violators, r6 above).
"""

R10_SCALING = """## r10: the kernel SMO at large n (issue 24 item 3)

make_classification (d = 20, k = 5, C = 1, RBF gamma = 'scale'), ReinforcedMSVM against SVC,
one thread, CPU time; the machine was shared with the other engineers' work (load 1.6-13).

1. Counted first (counters of the full scans kept in the verbose report: full scans, the
samples they leave unsettled, the settled samples they unsettle, the distinct samples
changed between two of them), main's solver:

| n | full scans | blocks | unsettled (i) | settled since (ii) | changed (iii) | rows (iv) |
|---|---|---|---|---|---|---|
| 10,000 | 42 | 397 | 5,287 (53 %) | 3,398 | 867 | 369 |
| 20,000 | 48 | 465 | 9,625 (48 %) | 6,545 | 1,505 | 1,166 |
| 40,000 | 81 | 821 | 18,653 (47 %) | 12,610 | 1,717 | 1,969 |
| 80,000 | 114 | 1,194 | 24,456 (31 %) | 12,279 | 1,816 | 2,242 |

Per full scan: (i) the samples it leaves unsettled, (ii) of them, those settled at some scan
since the last full one, (iii) the distinct samples changed since the last full scan, (iv)
the kernel rows computed since.  A full scan comes every 10 blocks (SHRINK_EVERY) and before every
convergence check; the
zero settling margin of the per-class hinges settles samples quickly and two thirds of the
samples a full scan finds unsettled were settled at some partial scan since the last one.
The rows computed between two full scans are about the distinct samples changed between
them: nearly every changed sample's row is computed once per interval.

Rows over the unsettled samples only (libsvm's), the settled samples' scores rebuilt at the
full scans from the changed samples' rows over the settled columns, at n = 40,000: the rows
over 18.7k columns instead of 40k, and twice as many of them cached (a 400 MB cache, the
same fit: 124,234 rows computed instead of 154,374), 2.3e9 kernel values, plus the rebuild
(1,717 rows over 21.3k settled columns at each of 81 full scans) 3.0e9: 5.3e9 against
6.2e9 now, 15 % of the kernel work, itself 73 % of the fit (perf, below), and that before
the cost of short rows that lose or need columns whenever a full scan moves 12.6k samples in
or out.  With full scans only where the rules need them (start of a solve, before a
convergence check; measured with a temporary knob): 50 full scans instead of 81, but 1,225
blocks instead of 821, 20.8k unsettled and 2,310 changed samples an interval, 5.4e9 against
6.1e9, the fit 40.9 s against 33-38 s.  At 80,000 (31 % unsettled): 1.6-1.8e10 against
2.0e10.  So not built: at most 10 % of a fit for the largest change to the solver's state.

2. What was kept instead (each exact unless said; the fingerprint's 38 fits and the
pendigits fits identical to the last bit):

* (a) the score update in column tiles of 1,024 samples where the cache cannot hold every
  row (a changed row read from memory once for all its slots; _row_updates.h): a 512-sample
  working set's update 42.2 -> 25.7 ms at n = 80,000, 17.7 -> 13.5 ms at 40,000;
* (b) a batch of kernel rows computed in tiles of 1,024 samples (its dot products, kernel
  values and stores while the tile is in L1/L2), and the RBF exponent pass and the float32
  store as cloned C loops (AVX-512 / AVX2, no contraction: the baseline's values) instead of
  Cython's baseline loops, which perf put at 25 % of the 40,000-sample fit: 4.89 -> 2.79 ns
  a kernel value at n = 40,000 (float32 rows, batches of 13);
* (c) the rows of settled samples evicted first (RowSource.demote): 15,496 -> 11,542 rows
  computed at n = 10,000, 159,502 -> 154,374 at 40,000;
* (d) moves the iterates, only where the cache holds under half the rows (n >= 20,000 at
  these settings): a candidate whose row is cached counts with 4x its violation in the
  choice of a block's new samples.  n = 40,000: 154,374 -> 98,781 rows, 821 -> 790 blocks
  (factor 2: 112,345 rows, 811 blocks; 11: 92,487, 857; one fit each, 20.4-21.7 s against
  27.7 s); n = 20,000: 49,617 -> 34,357 rows, 465 -> 494 blocks.  Objectives within 1e-6
  relative of the plain choice's (40,000: 69513.442 against 69513.405, both converged).

* (e) the dot products of a batch's last rows (fewer than four) through the four-row loop of
  _dense_dots.h (the missing places take the first row again and are not stored; each stored
  sum the same terms in the same order).  Its loop over the remaining rows ran about 7-11x
  slower per value than the four-row loop, and batches are 16 rows at most and at most
  4 MB of values: 13 rows (4 + 4 + 4 + 1) at n = 40,000, 7 at 66,000-70,000 and 6 at
  80,000, where a kernel value cost 11-13 ns against 3 ns at 60,000 (8 rows).  After:
  3.1 ns at 80,000, 3.0 ns at 40,000.  Found at the end of the round, from the 80,000-sample
  fit's time that rows and updates did not explain.

perf of the 40,000-sample fit after (a)-(c) (shares of the samples): dot products 36 %,
exponent pass 15.5 %, exponentials 12 %, float32 stores 9 % (the last two then rewritten,
(b)), score update 11 %, gather of K_BB 4.4 %, scans 2.8 %.  The dot products keep their
order of operations (no fused multiply-adds: the kernel matrix stays exactly symmetric),
which leaves them at about 1.5 ns a value.

Not kept: a 256-sample working set at n = 80,000 (the cache holds 655 rows, 1.3 working
sets of 512): 407 s, 2,536 blocks against 352 s, 1,194 blocks (main's solver, the same
session).

3. The scaling, before and after (same session, same machine, SVC in the same run; r10-untiled
and r10 ran 4d54eef's build, the first with --untiled and an earlier script that summed the
full-scan counters over progress lines too (dropped from its table); r10-final and r10-80k
ran 2954c32's solver, r10-final before that commit, hence its "4d54eef-dirty"):

| run | n | ReinforcedMSVM s | SVC s | x SVC | rows computed | blocks |
|---|---|---|---|---|---|---|
| r10-untiled (main's loops, (c) only) | 10,000 | 1.16 | 1.54 | 0.76 | 11,542 | 397 |
| | 20,000 | 6.26 | 6.16 | 1.02 | 49,617 | 465 |
| | 40,000 | 33.85 | 22.13 | 1.53 | 154,374 | 821 |
| r10 ((a)-(c)) | 10,000 | 1.09 | 1.49 | 0.73 | 11,542 | 397 |
| | 20,000 | 5.58 | 6.11 | 0.91 | 49,617 | 465 |
| | 40,000 | 27.66 | 20.81 | 1.33 | 154,374 | 821 |
| r10-final ((a)-(d)) | 10,000 | 1.00 | 1.47 | 0.68 | 11,542 | 397 |
| | 20,000 | 4.79 | 6.14 | 0.78 | 34,357 | 494 |
| | 40,000 | 21.54 | 21.19 | 1.02 | 98,781 | 790 |
| r10-80k ((a)-(d)) | 80,000 | 277.5 | 60.3 | 4.60 | 214,482 | 1,082 |
| r10-dots ((a)-(e), kept) | 10,000 | 0.91 | 1.45 | 0.63 | 11,542 | 397 |
| | 20,000 | 3.97 | 5.62 | 0.71 | 34,357 | 494 |
| | 40,000 | 18.40 | 19.35 | 0.95 | 98,781 | 790 |
| | 80,000 | 97.26 | 62.16 | 1.56 | 214,482 | 1,082 |

At 80,000 before: main's solver 352.5 s (this session, with the counters; 255,534 rows,
1,194 blocks), r9-80k 366.0 s against SVC's 62.8 s (5.82x).
Fitted exponents over 10,000-40,000: ReinforcedMSVM 2.21 against SVC's 1.92 (r9: 2.32
against 1.91; r10-untiled 2.43 against 1.92).  Over 10,000-80,000: r10-dots 2.24 against
SVC's 1.81 (40,000 to 80,000:
2.40 against 1.68); r10-final and r10-80k 2.65 against 1.79, as in r9, the 80,000-sample
fit's rows then costing 4x a value (e).  80,000 is the one size where the cluster start
engages (CLUSTER_MIN_SAMPLES = 60,000; the table's rows and blocks include its solves); without
it (plan override, (a)-(d), one fit) the fit took 355 s, 1,621 blocks, 320,497 rows.

Pendigits (C = 10, gamma = 1/16), the runs r10-untiled and r10 above: every fit the same
epochs, steps, blocks, rows and objective as main's (ReinforcedMSVM 44540.621970826935, 58
epochs, 1,380 blocks); CPU 2.46 and 2.60 s (19.3x and 20.1x SVC), within the spread of
repeats at this load: kernel rows are under 7 % of these fits and (a), (c), (d) do not
engage (the cache holds every row).  After (e) (run r10-dots-pendigits, load 0.2): the same
objectives to the last digit, ReinforcedMSVM 2.42 s (19.1x SVC, 3.94x the floor), LLW 4.47 s
(35.3x), AngleBasedMSVM 2.75 s (21.7x), WestonWatkinsMSVM 0.147 s (1.16x),
WeightedRobustMSVM(truncation=None) 0.194 s (1.53x).

Left: item 3's targets, narrowly: 1.56x SVC at 80,000 (target 1.5x) and an exponent of
2.24 against SVC's 1.81 + 0.1 (r10-dots, load 1.6, one run).  Rows computed per sample still
grow with n (1.15 / 1.72 / 2.47 / 2.68 a sample at 10k / 20k / 40k / 80k) while the cache's
rows fall (5,242 / 2,621 / 1,310 / 655).  What is left in a
row is its dot products, bound by their fixed order of operations; a cheaper row there
(fused multiply-adds or a BLAS product for the rows of a batch) gives up the kernel
matrix's exact symmetry, which the solver's tests rely on today.
"""

R12_ROWS = """## r12: the dot products of a batch of kernel rows (issue 24 item 3)

make_classification (d = 20, k = 5, C = 1, RBF gamma = 'scale'), ReinforcedMSVM against SVC,
one thread, CPU time, the machine shared with the other engineers' work (load 2-9).
"Before" is main's build (the project's shared venv, commit 0fabfea, whose src/ is
3a47b86's), run from this branch's benchmarks/ alternately with this branch's build.

1. The reading checked first (a C loop timing msvm_dots_rows alone, d = 20, the AVX-512
clone, not committed): with the data in L1 (n = 256) r10's loop took 1.39 ns a value, so it
was not bound by memory there: GCC kept its 4 x 16 sums on the stack, a load and a store a
sum and feature.  At n = 80,000, the caches flushed between batches (as a fit's row stores
do), 3.5 ns a value in batches of 6 rows (4 + 2, the two padded to four: a third of the
work thrown away) and 2.6 in batches of 16: X^T's 20 strided streams of a tile come from
memory once a batch (the tile then serves the batch's other blocks of four from L2).  Each
measured fix: the sums in vector registers 3.5 -> 2.2 ns (1.39 -> 1.03 in L1), X in panels
of 16 samples (one contiguous stretch of 16 d values a block) 2.2 -> 1.5, batches of 16
rows 1.5 -> 1.2.  The floor of the fixed order of operations is one multiply and one add a
feature and value: about 1.0 ns a value at d = 20 (a product rounded, then added; fused
multiply-adds would halve it and give up the exact symmetry).  Eight rows a block instead
of four (AVX-512 has the registers; tried on X^T in the C loop): no faster in L1 (1.02
against 1.03 ns), slower from memory (2.2 against 1.7 ns), not built.

2. Built (exact: every value the same operations in the same order; fingerprint 38 of 38
identical, every fit below the same epochs, steps, blocks, rows and objective):

* X laid out in panels of 16 samples (_dense_dots.h: msvm_panels, replacing X^T: the same
  memory), the dot products of a batch four rows against a panel, the samples outside whole
  panels one at a time from X;
* the 4 x 16 sums in vector registers: GCC vector types of 4 doubles in the AVX2 and AVX-512
  clones, of 2 doubles in the baseline clone (SSE2) and on other GCC/clang targets (vectors
  of 4 doubles there GCC keeps in memory, 10x slower), a plain loop for other compilers;
* batches of up to 16 MB of values (16 rows at n = 80,000, was 6; 16 at 40,000, was 13),
  rounded down to a multiple of four rows: the rows' claims on the cache happen in the same
  order whatever the batch, so which rows are cached, and every value, is unchanged.

3. Per kernel value (benchmarks/run_row_batches.py, results/row_batches.md: batches of 192
missing rows, float32 store of 200 MB, medians of 6 rounds in two alternating invocations
each, load 5-6): RBF rows 2.97 -> 2.52 ns at n = 10,000, 3.50 -> 2.63 at 20,000, 4.43 ->
2.79 at 40,000, 5.91 -> 2.85 at 80,000; linear-kernel rows (dot products and stores only)
2.42 -> 1.85, 2.80 -> 1.86, 3.56 -> 2.09, 5.56 -> 2.19.  ROW_TILE 256 / 512 / 1,024 / 2,048
after: 3.43 / 2.95 / 2.81 / 2.81 ns at 80,000 (1,024 kept).

4. The fits (runs r12-before and r12-rowtiles above, one size at a time alternating, before
first; loads 2.0 / 2.1 / 3.3 / 4.8 and 2.1 / 2.9 / 4.4 / 7.0 at their starts):

| n | before s | SVC s | x SVC | after s | SVC s | x SVC | rows computed | blocks |
|---|---|---|---|---|---|---|---|---|
| 10,000 | 0.93 | 1.38 | 0.67 | 0.85 | 1.44 | 0.59 | 11,542 | 397 |
| 20,000 | 4.74 | 5.22 | 0.91 | 4.51 | 5.30 | 0.85 | 34,357 | 494 |
| 40,000 | 25.87 | 21.60 | 1.20 | 17.22 | 19.68 | 0.87 | 98,781 | 790 |
| 80,000 | 136.26 | 107.92 | 1.26 | 88.51 | 125.09 | 0.71 | 214,482 | 1,082 |

Fitted exponents over 10,000-80,000: before 2.40 against SVC's 2.09, after 2.20 against
SVC's 2.12.  SVC's own time moves with the load (62 s at 80,000 in r10-dots at load 1.6, 108
and 125 s here), so read the ratios of one run; at 80,000 the kernel rows are 1.7e10 values,
2.85 ns a value after (49 s of the 88.5 s) against 5.9 before.

Three more pairs at 80,000, after first (runs r12-rowtiles-80k-2 / r12-before-80k-2 at
loads 6.7 / 4.2, -3 at 2.5 / 3.1, -4 at 1.0 / 1.4): after 88.05 s against SVC's 87.07 s
(1.01x), 85.65 s against 59.96 s (1.43x), 83.63 s against 52.97 s (1.58x); before 127.29 s
against 63.86 s (1.99x), 125.65 s against 59.15 s (2.12x), 138.40 s against 57.01 s
(2.43x).  The same rows, blocks and objective (124593.07309814476) in all eight
80,000-sample fits.  Main's build took 126-138 s here against the 97.3 s r10-dots measured
at load 1.6 (3ccd3e1), and 5.9 ns a kernel value against r10's 3.1: not explained in this
round (the rows at 80,000 are bound by memory, which the other engineers' work shares).
The before runs -2 to -4 ran main's Python at 0fabfea and ec469b3 (main moved during the
session; its compiled core is the same build, and these fits' traces are identical).  So
after / before is 0.60-0.70 at every load, while SVC's own time moves with the load (53-125
s here, 62 s in r10-dots at load 1.6): the ratio to SVC is lowest when the machine is
busiest.

Pendigits (C = 10, gamma = 1/16; runs r12-before-pendigits and r12-rowtiles-pendigits):
every model the same epochs, steps, blocks, rows computed and objective to the last digit
(ReinforcedMSVM 44540.621970826935, 58 epochs, 1,380 blocks, 4,579 rows); CPU 2.53 / 2.61 s
(ReinforcedMSVM), 4.46 / 4.58 (LLW), 2.83 / 2.85 (AngleBasedMSVM), at load 7: within the
spread of repeats (kernel rows are under 7 % of these fits, all of them cached).

5. The exponent pass, the exponentials and the float32 stores, per value (a C loop over a
batch of 16 rows at n = 80,000 in tiles of 1,024, AVX-512 clones, load 5-7): exponent pass
0.25 ns (two loads, a store and four operations: bound by L1, nothing to take out),
exponentials 0.9 ns (16 fused multiply-adds a vector of 8: the degree-13 polynomial's
throughput; a shorter polynomial or a table would change the values, so not exact), float32
stores 0.6 ns on top of the two (a 200 MB store: each line read for ownership, then
written).  Streaming (non-temporal) stores took the three from 1.64 to 1.32 ns a value in
that loop; not built: the rows are read right after their batch (the working set's block,
the score update), which streaming stores would send to memory first, and a fit-level
measurement did not fit in the round.

Targets (item 3): 80,000 at most 1.5x SVC: met at loads 2.5-7 (0.71x, 1.01x, 1.43x),
missed on the nearly idle machine (1.58x at load 1.0: SVC 53 s); before 1.26x, 1.99x,
2.12x, 2.43x in the same pairs.  Exponent at most SVC's + 0.1: met narrowly in the one scaling run,
2.20 against 2.12 + 0.1 (before 2.40 against 2.09), at a load rising from 2 to 7 (which
inflates SVC's 80,000-sample time, hence its exponent); the rows per sample still grow with
n (1.15 / 1.72 / 2.47 / 2.68), which the rows' speed does not change.
"""


R13_ROWS = """## r13: cheaper kernel rows at large n (issue 24 items 3 and 4)

make_classification (d = 20, k = 5, C = 1, RBF gamma = 'scale'), ReinforcedMSVM against SVC,
one thread, CPU time, the machine shared with the other engineers' work (load 3-5 most of the
session, 0.6-1.6 at its end).  "Before" is main 3e071a4 built a second time (its own build
directory, a venv whose msvm is that build), run from this branch's benchmarks/ alternately
with "after", this branch's build.  The final pair (runs r13-final-after and r13-final-before
above, loads 0.6 and 1.0) ran 570b837, where (a) below is off; the runs r13-after* before it
ran b02eece or 2e740d8 with (a) on for the RBF rows (their "Commit" line names the branch head
they ran from: a89c8b9-dirty is b02eece's compiled core).

1. Built (src/msvm/_core; each measured on its own, in the same process through a switch of
msvm._core._rows, or alternating with the previous build):

* (a) built, measured and left off by default (msvm._core._rows._fused_dots(True), --fused-dots
  here, turned it on; both removed in round 14 with _fused_dots.h, as the gain was small):
  dot products by fused multiply-adds where the machine has them
  (_fused_dots.h: AVX2 + FMA, chosen at load time), the RBF and polynomial kernels' rows.
  Every value is the chain acc = fma(x_i[f], x_r[f], acc) over the features in order from 0.0,
  and fma(a, b, c) = fma(b, a, c) to the last bit, so K(x_i, x_r) and K(x_r, x_i) are the same
  chain through every path (a row alone, the panels of a batch, the samples outside whole
  panels, tiles, threads): the kernel matrix stays exactly symmetric with its diagonal exactly
  1 (tests/test_fused_dots.py, against an exact rational evaluation of the chain), the values
  within 2 d u sum |x_i[f] x_r[f]| of NumPy's.  Gain small on this machine: RBF rows 2.53 ->
  2.39 ns a value at n = 80,000 (linear-kernel rows 1.90 -> 1.78); AMD Zen 4 runs a multiply
  and an add on separate pipes as fast as one FMA, and at 80,000 the panel loop waits on
  reading X.  Off because the iterates move with the values and two tests' cases sit on the
  plain rounding's path: with (a) on for the linear kernel's rows,
  tests/test_finish_budget.py's 1e150-scaled case no longer reached its finishing step (and 8
  of the fingerprint's 38 fits, small 'linear rows' fits in float64, moved by their tolerance:
  relative objective differences 1.3e-4 adaptive-linear, 1.8e-4 weston_watkins-linear, 1.3e-5
  robust-linear, 4.8e-6 angle-linear, 3.4e-6 reinforced-linear, 1.2e-6 weighted_robust-linear,
  1.4e-2 weighted_robust-utility (a DC model: 4 steps instead of 3, 33.63 against 34.12),
  targeted other epochs; at tol 1e-8 the Weston-Watkins, adaptive and reinforced fits agree to
  2.3e-9, 1.6e-9 and 1.2e-11); with it on for the RBF rows only,
  tests/test_intercept_solver.py's WeightedRobustMSVM RBF case (a DC model at tol 1e-8 between
  two local minima) ended at 159.745 against the exact search's 159.675.
* (b) the exponentials by a polynomial of degree 11 interpolating exp at Chebyshev nodes
  (coefficients solved in exact rational arithmetic, 1.6e-17 relative) instead of the degree-13
  Taylor polynomial: two fused multiply-adds fewer a value, still within 2 ulp of NumPy's exp
  (tests/test_exp_row.py over 40,000 arguments; degree 10 would be 3.3e-16, not kept).  Values
  move by an ulp at most; no fit measured here moved.
* (c) a dense X's batch computes its dot products into one buffer of m x ROW_TILE values per
  part (512 KB at 64 rows) instead of a batch x n block (10 MB at n = 80,000), so that batches
  grow from 16 to 64 rows (X read once per 64 rows): RBF rows at 80,000 2.29-2.44 -> 2.16-2.21
  ns a value (32 rows 2.21-2.26, 96 rows 2.10-2.19, 128 rows in tiles of 512 2.19-2.23; 64
  kept).
* (d) an RBF row stored in float32 from its dot products in one pass (_exp_row.h:
  msvm_rbf_row32: exponent, exponential, shift, rounding to float32 per value) instead of three
  passes over a double row: 80,000 2.16-2.19 -> 1.80-2.15 ns a value, 10,000 2.05-2.13 ->
  1.75-1.82.
* (e) a working set's kernel block gathered on and above its diagonal and mirrored where the
  source is exactly symmetric by construction (dense X): half the reads of rows mostly out of
  the core's caches (perf, n = 40,000 after (a)-(c): the gather was 10.5 % of the fit, the
  score update 20 %, dot products 19 %, exponentials 16 %, float32 stores 9 %, scans 5 %,
  exponent pass 4.5 %).  The 40,000-sample fit, same process alternating: 15.80 / 16.14 s ->
  15.12 / 15.09 s.

(c)-(e) are exact: every value and fit the same (the fingerprint's 38 fits, the 40,000- and
80,000-sample fits' rows, blocks and objectives, with and without each).  Fingerprint at
570b837: 38 of 38 identical to main's, and every fit of the final pair below the same blocks,
rows and objective as main's.

2. Per kernel value, final (run_row_batches, sections "r13 final before (main 3e071a4)" and
"r13 final after" of results/row_batches.md, 570b837, one invocation each, load 1.0): RBF rows
2.35 -> 2.01 ns at n = 10,000, 2.36 -> 1.93 at 20,000, 2.42 -> 1.95 at 40,000, 2.70 -> 1.99 at
80,000; linear-kernel rows 1.72 -> 1.70, 1.66 -> 1.78, 1.70 -> 1.88, 1.99 -> 1.86 (at 20,000
and 40,000 the batches of 64 cost the plain linear rows a little: left).  With (a) on for the
RBF rows (sections "r13 before (main 3e071a4)" and "r13 after", 2e740d8, medians of 6 rounds in
two alternating invocations each, load 1.5-3): RBF rows 2.35 -> 1.79, 2.36 -> 1.80, 2.50 ->
1.85, 2.68 -> 1.84.

3. The fits.  The final pair (570b837 against main, alternating, loads 0.6 / 1.0; every fit the
same blocks, rows and objective in both):

| n | before s | SVC s | x SVC | after s | SVC s | x SVC | rows | blocks |
|---|---|---|---|---|---|---|---|---|
| 10,000 | 0.86 | 1.41 | 0.61 | 0.80 | 1.41 | 0.57 | 11,542 | 397 |
| 20,000 | 4.12 | 4.93 | 0.84 | 3.59 | 4.95 | 0.72 | 34,357 | 494 |
| 40,000 | 17.11 | 17.68 | 0.97 | 14.91 | 17.49 | 0.85 | 98,781 | 790 |
| 80,000 | 84.85 | 53.25 | 1.59 | 71.64 | 58.58 | 1.22 | 214,482 | 1,082 |

Fitted exponents over 10,000-80,000: after 2.15 against SVC's 1.79, before 2.19 against 1.76.
After / before at 80,000: 0.84 (71.64 s is 1.35x the before run's SVC, 53.25 s).

Earlier pairs with (a) on for the RBF rows (other iterates at 40,000 and 80,000: 844 and 1,136
blocks, objectives within 5.2e-7 and 1.3e-8 of main's): r13-after / r13-before (loads 4.1 /
3.0) 80,000 70.00 s against SVC's 57.55 s (1.22x), before 84.04 s against 65.27 s (1.29x),
exponents 2.11 against 1.77 and 2.19 against 1.85; -80k-2 (loads 4.2 / 4.3) 68.54 s against
80.52 s (0.85x), before 85.24 s against 67.20 s (1.27x); -80k-3 (loads 1.5 / 1.6) 69.62 s
against 54.13 s (1.29x), before 87.22 s against 63.81 s (1.37x).  After / before 0.83, 0.80,
0.80.

Targets (item 3): 80,000 at most 1.5x SVC in the same run: met in all four pairs (final, load
0.6: 1.22x, main 1.59x in the same session; with (a): 1.22x, 0.85x, 1.29x).  Exponent at most
SVC's + 0.1: missed, 2.15 against 1.79 + 0.1 (main 2.19 against 1.76): the kernel rows got
cheaper at every n, but rows per sample still grow with n (1.15 / 1.72 / 2.47 / 2.68) at the
fixed 200 MB cache while SVC's one-against-one subproblems are smaller; SVC's exponent here
(1.76-1.85) is lower than r12's 2.12, which the rising load of that run inflated.

Item 4 (no loss elsewhere), measured with (a) on for the RBF rows (b02eece; the pendigits fits'
iterates are main's either way): pendigits (C = 10, gamma = 1/16; runs r13-before-pendigits,
r13-after-pendigits and their -2 repeats, load 3.8-4.0): every model the same epochs, steps,
blocks and objective; CPU before -> after ReinforcedMSVM 2.340 / 2.421 -> 2.345 / 2.408 s, LLW
4.153 / 4.370 -> 4.101 / 4.136, AngleBasedMSVM 2.477 / 2.641 -> 2.570 / 2.569,
WestonWatkinsMSVM 0.139 / 0.149 -> 0.148 / 0.139, WeightedRobustMSVM(truncation=None) 0.194 /
0.199 -> 0.195 / 0.186: within the spread of repeats.  Linear path (n = 100,000, d = 50,
weights, not kernel rows; runs r13-*-linear): 1.934 / 1.961 -> 1.911 / 1.940 s, the same
objective.  Ctrl-C (SIGINT 3 s into a 20,000-sample fit, wall time, load 3-4; runs r13-*-checks
and 8 more each alternating): KeyboardInterrupt every time, before 0.23-0.68 s (median 0.35 of
11), after 0.20-0.59 s (median 0.39 of 11).  Memory: a child fitting 40,000 samples peaked at
471.6 MB before, 470.0 MB after (the batch's 5 MB block at 40,000, 10 MB at 80,000, now a 512
KB buffer a part).

Tried, not kept: the working set's preference for cached rows (CACHED_BOOST, r10 (d)) at 80,000
with (a) and (b), one fit each: factor 4 (kept) 78.06 s, 1,136 blocks, 216,945 rows; 8: 81.80
s, 1,177, 216,057; 16: 80.78 s, 1,188, 212,719 (more blocks for as many rows).
"""

SMO_LINE = re.compile(r"\[msvm\] smo: steps (\d+), blocks (\d+).*kernel rows computed (\d+)")
# the full-scan counters of the SMO path's verbose report (from r10 on)
SCAN_LINE = re.compile(r"full scans (\d+), unsettled at full scans (\d+), unsettling (\d+), "
                       r"changed between full scans (\d+)")


def _models():
    from msvm import (AngleBasedMSVM, ReinforcedMSVM, WeightedRobustMSVM,
                      WestonWatkinsMSVM)
    return {
        "ReinforcedMSVM": lambda **kw: ReinforcedMSVM(reinforcement=0.5, **kw),
        "LLW (reinforcement=0)": lambda **kw: ReinforcedMSVM(reinforcement=0.0, **kw),
        "AngleBasedMSVM": lambda **kw: AngleBasedMSVM(**kw),
        "WestonWatkinsMSVM": lambda **kw: WestonWatkinsMSVM(**kw),
        "WeightedRobustMSVM(truncation=None)":
            lambda **kw: WeightedRobustMSVM(truncation=None, **kw),
    }


def _cpu(fn):
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def _msvm_fit(est, X, y):
    """CPU time of est.fit and the SMO counters summed over its solves."""
    buf = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(buf):
        warnings.simplefilter("always")
        cpu, _ = _cpu(lambda: est.fit(X, y))
    steps = blocks = rows = 0
    scans = [0, 0, 0, 0]
    for m in SMO_LINE.finditer(buf.getvalue()):
        steps += int(m.group(1))
        blocks += int(m.group(2))
        rows += int(m.group(3))
    for line in buf.getvalue().splitlines():
        # the final report of each solve only (progress lines carry running counts)
        m = SCAN_LINE.search(line) if SMO_LINE.search(line) else None
        if m:
            scans = [a + int(b) for a, b in zip(scans, m.groups())]
    return {"cpu_s": cpu, "epochs": int(est.n_iter_), "smo_steps": steps,
            "blocks": blocks, "rows_computed": rows, "full_scans": scans[0],
            "unsettled_at_full": scans[1], "unsettling": scans[2],
            "changed_between_full": scans[3],
            "objective": float(est.objective_), "converged": bool(est.converged_),
            "warnings": len(caught)}


def _floor(X, k, gamma=1 / 16):
    """CPU time of the whole RBF matrix (float64, BLAS) plus one K V pass (V: n x k)."""
    from sklearn.metrics.pairwise import rbf_kernel
    t_k, K = _cpu(lambda: rbf_kernel(X, gamma=gamma))
    V = np.random.default_rng(0).standard_normal((X.shape[0], k))
    t_kv, _ = _cpu(lambda: K @ V)
    return t_k, t_kv


def _pendigits_train():
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from msvm.datasets import load_pendigits
    X, y = load_pendigits(return_X_y=True)
    Xtr, _, ytr, _ = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    return StandardScaler().fit(Xtr).transform(Xtr), ytr


def pendigits(repeats, C=10.0, gamma=1 / 16, models=None):
    """The pendigits table at (C, gamma): SVC, the floor and the models named (all by
    default)."""
    from sklearn.svm import SVC
    Xtr, ytr = _pendigits_train()
    k = len(np.unique(ytr))
    svc = min(_cpu(lambda: SVC(C=C, gamma=gamma).fit(Xtr, ytr))[0] for _ in range(3))
    floors = [_floor(Xtr, k, gamma) for _ in range(2)]
    t_k, t_kv = min(f[0] for f in floors), min(f[1] for f in floors)
    floor = t_k + t_kv
    rows = []
    for name, make in _models().items():
        if models is not None and name not in models:
            continue
        fits = [_msvm_fit(make(C=C, gamma=gamma, random_state=0, verbose=2), Xtr, ytr)
                for _ in range(repeats)]
        best = min(fits, key=lambda r: r["cpu_s"])
        best.update(model=name, x_svc=best["cpu_s"] / svc, x_floor=best["cpu_s"] / floor)
        rows.append(best)
        print(name, {c: best[c] for c in ("cpu_s", "x_svc", "epochs", "smo_steps", "blocks")},
              flush=True)
    return {"svc_s": svc, "kernel_s": t_k, "kv_s": t_kv, "floor_s": floor, "rows": rows,
            "C": C, "gamma": gamma}


def scaling(ns):
    from sklearn.datasets import make_classification
    from sklearn.svm import SVC

    from msvm import ReinforcedMSVM, _plan
    out = []
    for n in ns:
        X, y = make_classification(n_samples=n, n_features=20, n_informative=10, n_classes=5,
                                   random_state=0)
        X = (X - X.mean(0)) / X.std(0)
        est = ReinforcedMSVM(C=1.0, random_state=0, verbose=2)
        fit = _msvm_fit(est, X, y)
        svc, _ = _cpu(lambda: SVC(C=1.0, gamma=est.gamma_).fit(X, y))
        # the rows the row cache holds (float32 rows at this C and tol: msvm/_plan.py)
        cache_rows = min(n, _plan.cache_rows(est.cache_size, "float32", n))
        fit.update(n=n, svc_s=svc, x_svc=fit["cpu_s"] / svc,
                   rows_per_n=round(fit["rows_computed"] / n, 2), cache_rows=cache_rows)
        out.append(fit)
        print(n, fit, flush=True)
    _fit_exponents(out)
    return out


def _fit_exponents(rows):
    """The exponents of CPU time in n (least squares on logs), ReinforcedMSVM's and SVC's,
    kept in the last row (rows sorted by n)."""
    for r in rows:
        r.pop("exponent_cpu_s", None)
        r.pop("exponent_svc_s", None)
    if len(rows) >= 2:
        ln = np.log([r["n"] for r in rows])
        for key in ("cpu_s", "svc_s"):
            slope = np.polyfit(ln, np.log([r[key] for r in rows]), 1)[0]
            rows[-1]["exponent_" + key] = float(slope)


def _merged_scaling(old, new):
    """The scaling rows of an earlier invocation of the same tag with this one's (a size
    measured again replaced), sorted by n, exponents fitted again."""
    rows = {r["n"]: r for r in old}
    rows.update({r["n"]: r for r in new})
    out = [rows[n] for n in sorted(rows)]
    _fit_exponents(out)
    return out


MEMORY_FIT = """
import resource, sys
from sklearn.datasets import make_classification
from msvm import ReinforcedMSVM
n = int(sys.argv[1])
X, y = make_classification(n_samples=n, n_features=20, n_informative=10, n_classes=5,
                           random_state=0)
X = (X - X.mean(0)) / X.std(0)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if len(sys.argv) > 3:
    from msvm._core import _rows
    _rows._huge_store(int(sys.argv[2]), int(sys.argv[3]))
ReinforcedMSVM(C=1.0, random_state=0).fit(X, y)
print(before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _latency():
    """Ctrl-C latency: run_reliability_benchmarks' interrupt section (3 children of this
    interpreter, SIGINT 3 s into a 20,000-sample fit)."""
    import signal

    from benchmarks.run_reliability_benchmarks import interrupt_section
    # Python's handler here, so that the children start with SIGINT's default action even
    # when this process was started with SIGINT ignored (in the background of a shell)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return interrupt_section(3)


def checks(n):
    """Ctrl-C latency (run_reliability_benchmarks' interrupt section, children of this
    interpreter) and the peak resident memory of a child fitting n samples (MB: at the fit's
    start, after it)."""
    import subprocess
    import sys
    out = {"latency": _latency()}
    from msvm._core import _rows
    rss = subprocess.run([sys.executable, "-c", MEMORY_FIT, str(n),
                          *(str(v) for v in _rows._huge_store())],
                         capture_output=True, text=True, check=True).stdout.split()
    out["memory"] = {"n": n, "start_mb": int(rss[0]) / 1024, "peak_mb": int(rss[1]) / 1024}
    print("checks", out, flush=True)
    return out


def linear():
    from sklearn.datasets import make_classification

    from msvm import ReinforcedMSVM
    X, y = make_classification(n_samples=100_000, n_features=50, n_informative=20,
                               n_classes=10, random_state=0)
    fit = _msvm_fit(ReinforcedMSVM(kernel="linear", C=0.01, random_state=0), X, y)
    print("linear", fit, flush=True)
    return fit


def r10():
    """The round-10 measurements (benchmarks/per_class_large_c.py): the traced C = 256 fit,
    its iterate at the first finishing call against the converged solution, the face step and
    FISTA from there, and the tuning run's fits at gamma = 1/32."""
    from sklearn.metrics.pairwise import rbf_kernel

    from benchmarks import per_class_large_c as lc
    Xtr, ytr = _pendigits_train()
    make = _models()["ReinforcedMSVM"]
    est, cpu, stops, problem, iterate, final = lc.traced_fit(
        lambda: make(C=256.0, gamma=1 / 32, random_state=0), Xtr, ytr)
    out = {"fit": {"cpu_s": cpu, "stops": stops, "epochs": int(est.n_iter_)},
           "objective": float(est.objective_)}
    print("traced", out, flush=True)
    dual = lc._Dual(problem, rbf_kernel(Xtr, gamma=1 / 32))
    out["iterate"] = lc.compare_iterate(dual, iterate, final)
    print(out["iterate"], flush=True)
    out["face"] = lc.face_steps(dual, iterate, final)
    print(out["face"], flush=True)
    out["fista"] = lc.fista(dual, iterate, final)
    print(out["fista"], flush=True)
    out["pdas"] = lc.pdas(dual, iterate, final)
    print(out["pdas"], flush=True)
    del dual
    out["working_sets"] = lc.working_sets(
        lambda: make(C=256.0, gamma=1 / 32, random_state=0, verbose=2), Xtr, ytr)
    out["tuning"] = lc.tuning_fits()
    print(out["tuning"], flush=True)
    return out


def _render(runs):
    lines = ["# Per-class-hinge models on the SMO path: CPU time (issue 24)", "",
             "One process per run, one BLAS thread, CPU time (time.process_time); the machine "
             "was shared with other engineers' work (load average at the start given), so "
             "read the ratios measured within one run.  Floor = the whole training RBF matrix "
             "once (float64, BLAS) + one K V pass (V: n x k).", ""]
    cols = ["model", "cpu_s", "x_svc", "x_floor", "epochs", "smo_steps", "blocks",
            "rows_computed", "objective", "converged"]
    for tag, run in runs.items():
        load = (f"{run['load']:.1f} at the start" if "loads" not in run else
                f"{min(run['loads']):.1f}-{max(run['loads']):.1f} at the starts of its "
                f"{len(run['loads'])} invocations")
        lines += [f"## {tag}", "", f"Commit {run['commit']}, load average {load}.", ""]
        if run.get("note"):
            lines += [run["note"], ""]
        if run.get("plain_store"):
            lines += ["Every row store malloc'd in 4 KB pages (--plain-store: main 38cd666's; "
                      "the same values).", ""]
        if run.get("huge_store"):
            lines += ["Row stores of 16 MB or more mapped in 2 MB pages whatever n "
                      "(--huge-store; the same values as 4 KB pages).", ""]
        if run.get("pages"):
            from benchmarks.per_class_pages import render_pages
            lines += render_pages(run["pages"])
        if run.get("r15"):
            from benchmarks.per_class_floor import render
            lines += render(run["r15"])
        if "load_end" in run:
            lines[-2] = lines[-2][:-1] + f", {run['load_end']:.1f} at the end."
        if run.get("r16"):
            from benchmarks.per_class_floor import R16_MODES, render
            lines += render(run["r16"], R16_MODES)
        if run.get("r16_base"):
            from benchmarks.per_class_floor import render
            lines += [f"'base': main {run['r16_base']['base_commit']} installed apart "
                      f"(pip install --target, its own build), 'this': this commit's build; "
                      f"the same script, fresh processes alternating.", ""]
            lines += render(run["r16_base"], ("base", "this"))
        if run.get("grouped_plain"):
            lines += ["The grouped SMO blocks' plain loops (--grouped-plain: main 10578f8's; "
                      "the same values as the vectorized passes).", ""]
        for pd in (run.get("pendigits"), run.get("large_c")):
            if not pd:
                continue
            at = f", C = {pd['C']:g}, gamma = {pd['gamma']:g}" if "C" in pd else ""
            lines += [f"Pendigits (7,694 x 16, k = 10{at}): SVC {pd['svc_s']:.3f} s; kernel "
                      f"matrix {pd['kernel_s']:.3f} s + K V {pd['kv_s']:.3f} s = floor "
                      f"{pd['floor_s']:.3f} s.", ""]
            fmt = {"cpu_s": "{:.3f}", "x_svc": "{:.1f}", "x_floor": "{:.2f}",
                   "objective": "{:.6f}"}
            lines.append(markdown_table(cols, [[fmt.get(c, "{}").format(r[c]) for c in cols]
                                               for r in pd["rows"]]))
            lines.append("")
        if run.get("scaling"):
            sc = ["n", "cpu_s", "svc_s", "x_svc", "epochs", "smo_steps", "blocks"]
            if all("rows_per_n" in r for r in run["scaling"]):
                # runs from r8 on: the kernel rows computed, per sample (the row cache)
                sc += ["rows_computed", "rows_per_n", "cache_rows"]
            if all(r.get("full_scans") for r in run["scaling"]):
                # runs from r10 on: per full scan, the samples left unsettled, the settled
                # samples unsettled and the distinct samples changed since the last one
                for r in run["scaling"]:
                    r["unsettled/full"] = round(r["unsettled_at_full"] / r["full_scans"])
                    r["unsettling/full"] = round(r["unsettling"] / r["full_scans"])
                    r["changed/full"] = round(r["changed_between_full"] / r["full_scans"])
                sc += ["full_scans", "unsettled/full", "unsettling/full", "changed/full"]
            lines += ["make_classification (d = 20, k = 5, C = 1), ReinforcedMSVM vs SVC:", "",
                      markdown_table(sc, [[round(r[c], 3) if isinstance(r[c], float) else r[c]
                                           for c in sc] for r in run["scaling"]]), ""]
            last = run["scaling"][-1]
            if "exponent_cpu_s" in last:
                lines += [f"Fitted exponents: ReinforcedMSVM {last['exponent_cpu_s']:.2f}, "
                          f"SVC {last['exponent_svc_s']:.2f}.", ""]
        if run.get("r10"):
            from benchmarks.per_class_large_c import render_r10, render_tuning
            lines += render_r10(run["r10"]) + render_tuning(run["r10"]["tuning"],
                                                            "Tuning fits")
        if run.get("r17_profile"):
            from benchmarks.per_class_r17 import render_profile
            lines += render_profile(run["r17_profile"])
        if run.get("r17_compare"):
            from benchmarks.per_class_r17 import render_compare
            lines += render_compare(run["r17_compare"])
        if run.get("checks"):
            ch = run["checks"]
            lat = ", ".join(f"{r['latency']:.3f}" for r in ch["latency"]["rows"])
            lines += [f"Ctrl-C: SIGINT 3 s into a 20,000-sample fit, KeyboardInterrupt after "
                      f"{lat} s.", ""]
            if "memory" in ch:
                mem = ch["memory"]
                lines[-2] += (f"  Peak resident memory of a child fitting {mem['n']:,} "
                              f"samples: {mem['peak_mb']:.0f} MB ({mem['start_mb']:.0f} MB "
                              f"before the fit).")
        if run.get("linear"):
            li = run["linear"]
            lines += [f"Linear path (ReinforcedMSVM, n = 100k, d = 50, k = 10, C = 0.01): "
                      f"{li['cpu_s']:.2f} s, {li['epochs']} epochs.", ""]
    return ("\n".join(lines) + "\n" + TRIED + "\n" + R5 + "\n" + R6 + "\n" + R7 + "\n"
            + R8 + "\n" + R9 + "\n" + R10 + "\n" + R10_SCALING + "\n" + R12_ROWS + "\n"
            + R13_ROWS + "\n" + R14_PAGES + "\n" + R15_TEXT + "\n" + R16_TEXT + "\n"
            + R17_TEXT)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tag", default="current")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--no-pendigits", action="store_true")
    parser.add_argument("--scaling", type=int, nargs="*", default=[])
    parser.add_argument("--linear", action="store_true")
    parser.add_argument("--large-c", action="store_true",
                        help="also ReinforcedMSVM and SVC at C = 256, gamma = 1/32 (the C a "
                             "tuning run selects)")
    parser.add_argument("--untiled", action="store_true",
                        help="kernel rows and score updates in one pass instead of column "
                             "tiles (the same values; main's loops before r10)")
    parser.add_argument("--checks", action="store_true",
                        help="also Ctrl-C latency (SIGINT 3 s into a 20,000-sample fit, 3 "
                             "children: run_reliability_benchmarks' interrupt section) and the "
                             "peak memory of a child process fitting --checks-n samples")
    parser.add_argument("--checks-n", type=int, default=40_000)
    add_row_switches(parser)
    parser.add_argument("--huge-store", action="store_true",
                        help="row stores of 16 MB or more mapped in 2 MB pages whatever n "
                             "(the default: from n = 20,000 on; the same values)")
    parser.add_argument("--plain-store", action="store_true",
                        help="every row store malloc'd in 4 KB pages (main 38cd666's; the "
                             "same values)")
    parser.add_argument("--pages", type=int, metavar="ROUNDS",
                        help="only the page-fault comparison (benchmarks/per_class_pages.py): "
                             "ROUNDS fresh processes per store mode, alternating, on "
                             "pendigits and the --scaling sizes")
    parser.add_argument("--pages-modes", nargs="+", choices=("plain", "huge", "glibc"),
                        default=["plain", "huge", "glibc"], help="the store modes of --pages")
    parser.add_argument("--pages-in-process", type=int, metavar="ROUNDS",
                        help="only the page-fault comparison within this process: pendigits, "
                             "the store plain and huge in turn, ROUNDS times")
    parser.add_argument("--r15", type=int, metavar="ROUNDS",
                        help="only round 15's before/after (benchmarks/per_class_floor.py): "
                             "pendigits in ROUNDS fresh processes per mode and ROUNDS rounds "
                             "in this process, modes 'main' (every round-15 switch off) and "
                             "'r15' alternating")
    parser.add_argument("--r15-checks", type=int, metavar="ROUNDS",
                        help="with --r15: also n = 20,000 ReinforcedMSVM, the grouped dual "
                             "at n = 4,000, C = 1e4, Ctrl-C latency (ROUNDS each per mode) "
                             "and the peak memory of a pendigits fit per mode")
    parser.add_argument("--r15-in-process", type=int, metavar="ROUNDS",
                        help="only round 15's in-process comparison, of WestonWatkinsMSVM "
                             "and WeightedRobustMSVM(truncation=None) (SVC's fits between), "
                             "ROUNDS rounds")
    parser.add_argument("--r15-latency", type=int, metavar="ROUNDS",
                        help="only round 15's Ctrl-C latency per mode (ROUNDS children each, "
                             "per_class_floor.latency), into the --tag run's checks")
    parser.add_argument("--r16", type=int, metavar="ROUNDS",
                        help="round 16: the pendigits models in this process, modes 'r15' "
                             "(round 16's switches off) and 'r16' alternating, SVC's fits "
                             "between (per_class_floor.in_process)")
    parser.add_argument("--r16-base", metavar="SITE",
                        help="round 16: fresh children alternating between the msvm "
                             "installed in SITE (pip install --target of the base commit) "
                             "and this build (per_class_floor.build_fresh)")
    parser.add_argument("--base-commit", help="with --r16-base: the commit installed there")
    parser.add_argument("--grouped-plain", action="store_true",
                        help="the grouped SMO blocks' plain loops (main 10578f8's) instead "
                             "of the vectorized passes of round 14 (the same values)")
    parser.add_argument("--r10", action="store_true",
                        help="also the round-10 trace and analysis of the C = 256 fit and "
                             "the tuning fits at gamma = 1/32 (benchmarks/per_class_large_c.py)")
    from benchmarks.per_class_r17 import add_arguments as add_r17_arguments
    add_r17_arguments(parser)
    parser.add_argument("--render-only", action="store_true",
                        help="rewrite the .md from the .json without fitting")
    parser.add_argument("--merge-from", metavar="JSON",
                        help="copy the run --tag of another per_class_speed.json (a run of "
                             "another build, e.g. main's, on the same machine) into this "
                             "one, without fitting")
    parser.add_argument("--merge-commit", help="the commit of the merged run, if it has none")
    parser.add_argument("--append", action="store_true",
                        help="add this invocation's --scaling sizes to the tag's earlier "
                             "ones (so that two builds' fits can alternate, one size at a "
                             "time), instead of replacing them")
    args = parser.parse_args(argv)
    path = os.path.join(RESULTS, "per_class_speed.json")
    runs = {}
    if os.path.exists(path):
        with open(path) as fh:
            runs = json.load(fh).get("runs", {})
    if args.merge_from:
        with open(args.merge_from) as fh:
            run = json.load(fh)["runs"][args.tag]
        run["commit"] = run.get("commit") or args.merge_commit
        runs.pop(args.tag, None)               # the merged run goes last
        runs[args.tag] = run
        write_json(path, {"runs": runs})
        args.render_only = True
    if args.render_only:
        with open(os.path.join(RESULTS, "per_class_speed.md"), "w") as fh:
            fh.write(_render(runs) + "\n")
        return
    from threadpoolctl import threadpool_limits
    # the commit of the msvm measured (another build's venv may run this script)
    run = {"commit": build_commit() or git_commit(), "load": os.getloadavg()[0],
           "machine": machine_info()}
    if args.untiled:
        from msvm._core import _rows
        _rows._tiles(row_tile=1 << 40, update_tile=0)
        run["untiled"] = True
    run.update({name: True for name in apply_row_switches(args)})
    if args.huge_store:
        from benchmarks.per_class_pages import HUGE_MIN
        from msvm._core import _rows
        _rows._huge_store(HUGE_MIN, 0)
        run["huge_store"] = True
    if args.plain_store:
        from msvm._core import _rows
        _rows._huge_store(0)
        run["plain_store"] = True
    if args.pages or args.pages_in_process:
        from benchmarks.per_class_pages import in_process, pages
        with threadpool_limits(1):
            run["pages"] = {"rounds": args.pages, "fits": pages(
                args.pages, args.scaling, args.pages_modes, not args.no_pendigits)} \
                if args.pages else {"rounds": args.pages_in_process, "in_process": True,
                                    "fits": in_process(args.pages_in_process)}
        runs[args.tag] = run
        write_json(path, {"runs": runs})
        with open(os.path.join(RESULTS, "per_class_speed.md"), "w") as fh:
            fh.write(_render(runs) + "\n")
        return
    if args.r15_latency:
        from benchmarks import per_class_floor
        checks = runs[args.tag]["r15"]["checks"]
        checks["latency"] = per_class_floor.latency(args.r15_latency)
        checks["latency_after"] = 1.5
        checks["latency_load"] = os.getloadavg()[0]
        write_json(path, {"runs": runs})
        with open(os.path.join(RESULTS, "per_class_speed.md"), "w") as fh:
            fh.write(_render(runs) + "\n")
        return
    if args.r15 or args.r15_in_process:
        from benchmarks import per_class_floor
        with threadpool_limits(1):
            run["r15"] = {"fresh": per_class_floor.fresh(args.r15),
                          "in_process": per_class_floor.in_process(args.r15)} if args.r15 \
                else {"in_process": per_class_floor.in_process(
                    args.r15_in_process, per_class_floor.PENDIGITS[:2])}
            if args.r15_checks:
                run["r15"]["checks"] = per_class_floor.checks(args.r15_checks)
        runs[args.tag] = run
        write_json(path, {"runs": runs})
        with open(os.path.join(RESULTS, "per_class_speed.md"), "w") as fh:
            fh.write(_render(runs) + "\n")
        return
    if args.r16_base or args.r16:
        from benchmarks import per_class_floor
        if args.r16_base:
            run["r16_base"] = {"fresh": per_class_floor.build_fresh(args.repeats,
                                                                    args.r16_base),
                               "base_commit": args.base_commit}
        else:
            run["r16"] = {"in_process": per_class_floor.in_process(
                args.r16, per_class_floor.PENDIGITS, per_class_floor.R16_MODES,
                per_class_floor.set_r16_mode)}
        run["load_end"] = os.getloadavg()[0]
        runs[args.tag] = run
        write_json(path, {"runs": runs})
        with open(os.path.join(RESULTS, "per_class_speed.md"), "w") as fh:
            fh.write(_render(runs) + "\n")
        return
    if args.grouped_plain:
        from msvm._core import _smo
        _smo._grouped_vector(False)
        run["grouped_plain"] = True
    with threadpool_limits(1):
        if not args.no_pendigits:
            run["pendigits"] = pendigits(args.repeats)
        if args.large_c:
            run["large_c"] = pendigits(args.repeats, C=256.0, gamma=1 / 32,
                                       models=["ReinforcedMSVM"])
        if args.scaling and not args.r17_compare:
            run["scaling"] = scaling(args.scaling)
        if args.linear:
            run["linear"] = linear()
        if args.r10:
            run["r10"] = r10()
        if args.r17_profile or args.r17_compare:
            from benchmarks import per_class_r17
            if args.r17_profile:
                run["r17_profile"] = per_class_r17.profile()
            if args.r17_compare:
                cases = [(m, 256.0, 1 / 32, "pendigits") for m in args.r17_large_c_models]
                if not args.r17_no_small_c:
                    cases += [(m, 10.0, 1 / 16, "pendigits") for m in _models()]
                cases += [("ReinforcedMSVM", 1.0, None, n) for n in args.scaling]
                run["r17_compare"] = per_class_r17.compare(args.r17_compare, cases)
            run["load_end"] = os.getloadavg()[0]
    if args.checks:
        run["checks"] = checks(args.checks_n)
    earlier = runs.get(args.tag, {})
    if args.append and earlier.get("scaling") and run.get("scaling"):
        run["scaling"] = _merged_scaling(earlier["scaling"], run["scaling"])
        run["loads"] = earlier.get("loads", [earlier["load"]]) + [run["load"]]
    runs[args.tag] = {**earlier, **run}
    write_json(path, {"runs": runs})
    with open(os.path.join(RESULTS, "per_class_speed.md"), "w") as fh:
        fh.write(_render(runs) + "\n")


if __name__ == "__main__":
    main()
