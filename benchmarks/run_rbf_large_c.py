"""The per-class-hinge, DC and grouped-margin models on small RBF problems at large C (issue
23 item 1).

Run from the repository root:
``python -m benchmarks.run_rbf_large_c --tag after [--n 700,1000] [--C 1e4,1e6,1e8]
[--models A,B] [--seed S] [--batch B] [--before TAG [--switch face|stuck|r13|r14]]``.
Each run records, under its tag (the build it measured: 'before' from another checkout's
environment, 'after' from this one), every fit's CPU time, whether it converged, its epochs
and objective, and merges them into benchmarks/results/rbf_large_c.json; the Markdown page
puts the tags side by side, one table per round (SECTIONS).  ``--before TAG`` also measures
the grouped models (GROUPED) with one switch of msvm._finish_groups off (SWITCHES, picked
by ``--switch``: 'face', USE_FACE = False, the behaviour of main b9f36a5; 'stuck',
STUCK_IF_STILL and PROJECT_FACTOR_STEP False, the grouped finishing step of main 3a47b86;
'r13', the releases, proposals and face of main 3e071a4; 'r14', the face steps of main
10578f8: the equalities' residual in the face's system, no descent guard, the face left
below FACE_MIN free variables, the scores' entries gathered at every step),
alternating with the measurement under ``--tag`` in the same process, and records it under
TAG.  make_blobs (3 overlapping classes, d = 3, cluster_std = 2, random_state 0), RBF at
gamma='scale', default tol and max_iter, one BLAS thread; the machine may be shared: CPU
times, ratios within a row.  ``--seed S`` draws the data with random_state S (rows marked
'seed S'), ``--batch B`` sets msvm._finish_groups.RELEASE_BATCH to B for both tags and
suffixes them '-bB'.
"""

import argparse
import json
import pathlib
import time
import warnings

from benchmarks.harness import git_commit, markdown_table, write_json

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
MD_PATH, JSON_PATH = RESULTS / "rbf_large_c.md", RESULTS / "rbf_large_c.json"
MODELS = ("ReinforcedMSVM", "LLW", "WestonWatkinsMSVM", "AngleBasedMSVM", "RobustMSVM",
          "WeightedRobustMSVM", "AdaptiveWeightedSVM")
# the models whose dual has group caps ('WeightedRobustMSVM' is fitted with truncation=None)
GROUPED = ("WeightedRobustMSVM", "AdaptiveWeightedSVM")
# ``--switch``: the msvm._finish_groups constants that ``--before`` sets, and their values
# there (the behaviour of an earlier main)
SWITCHES = {"face": {"USE_FACE": False},
            "stuck": {"STUCK_IF_STILL": False, "PROJECT_FACTOR_STEP": False},
            "r13": {"RELEASE_BATCH": None, "CAP_BATCH": False, "RETURN_REACHED": False,
                    "ELIMINATE_CAPS": False},
            "r14": {"SPLIT_RESIDUAL": False, "DESCENT_GUARD": False, "FACE_LEAVE": 50,
                    "BLOCK_ROWS": False}}
R14_TEXT = (
    "'r14': the grouped finishing step's face solved without the equalities' residual "
    "(removed by the least change, SPLIT_RESIDUAL), a face step that raised the dual "
    "objective undone and solved again on a fresh factorization (DESCENT_GUARD), and the "
    "free samples' scores updated through the entries among them gathered once between "
    "two exact updates (BLOCK_ROWS: the same steps), and the face left for the factor's "
    "steps only below FACE_LEAVE (25) free variables instead of FACE_MIN (50); "
    "'r14-before': all four off (`--switch r14`: main 10578f8's steps), measured "
    "alternately in the same process, "
    "grouped models only, 2026-11-28, CPU time, load 5-7 on 2 cores (three other "
    "engineers' builds, tests and benchmarks), at the commit the Commits line above "
    "gives for 'r14' ('-dirty': these results files), the compiled core as on branch "
    "activeset (main 10578f8's: the groupedepoch branch's SMO changes not in it). "
    "n = 4,000, C = 1e8 'r14' only: main's fit stopped "
    "at max_iter after about 300 s and five finishing steps (round 13), not run again. "
    "'-bB': RELEASE_BATCH = B for both, data seeds 0, 2 and 5. "
    "Diagnosis (the finishing step alone, from the iterate and kernel columns a fit hands "
    "it at its first budget stop, 100 epochs; counters and the dual objective tracked "
    "exactly through the kernel by a wrapper of the loop's functions; main's steps): "
    "every step is a ratio-test step (cut at the first bound or cap, or a full Newton step "
    "followed by a check), but a kept step was not guaranteed to lower the objective. "
    "n = 600, C = 1e6, seed 0 (79 free variables, class-sum residual 23): 303 steps (235 "
    "cut, 81 of them of length 0; 68 full), 56 checks releasing 424 variables and 1 cap, "
    "302 of those variables fixed again by a later step, 13 factorizations of 54 rows on "
    "average, 0.30 s; 13 steps raised the objective, by up to 4.7 times its size: the "
    "first 32 steps removed the residual through the face's regularized system (steps of "
    "3.3e6 where the caps are 1e6, cut at t = 0.01-0.02, two not even descent directions), "
    "the later ones followed 27-58 bordered changes (descent directions whose curvature "
    "was far from the Newton step's: drifted solves). That start settles in 303-320 "
    "steps at RELEASE_BATCH 25, 50, 100 and unlimited: at 10578f8 the seed-0 fit shows "
    "no chaos (0.37-0.47 s at 25/50/100); fits at n = 600, 800, 1,000, seeds 0-5, "
    "found it at n = 800: seed 5 5.3 / 11.7 / 6.8 s and seed 2 5.1 / 0.8 / 0.8 s at "
    "25 / 50 / 100. From seed 5's stop the loop took 5,160 steps (7.6 s), with the "
    "residual split off 3,459 (3.0 s), with the guard as well 404 (0.38 s). With those "
    "two, n = 600, seed 5 from its fit's stop still took 2,729 steps at batch 50 (97 and "
    "92 at 25 and 100): 1,338 checks each releasing about one variable onto the face "
    "(the free set at 49-50, FACE_MIN), a step of length 0 fixing it again (1,341 of "
    "them) and the factor's full step below FACE_MIN going on to the next check, half the "
    "steps on either route; with the face kept down to 25 free variables (FACE_LEAVE) "
    "97-103 steps at every batch. n = 4,000, "
    "C = 1e8, from its stop: the loop ran its 10,000-step budget (7,696 cut, 2,630 of "
    "length 0; 1,273 checks releasing 17,725 variables and 437 caps, 13,926 of those "
    "variables fixed again; 1,040 factorizations of 176 rows on average): 835 steps "
    "raised the objective (by up to 38 times its size), which went from -2.4e7 to "
    "+3.2e12, and that is the point RETURN_REACHED proposed: the loop did not cycle, it "
    "wandered, its path set by rounding (hence the sensitivity to the batch). Its cost: "
    "28.3 s CPU for the 10,000 steps (2.8 ms a step; of the 89.6 s with the counters the "
    "face's solves took 8.3 s and its factorizations 0.4 s), the rest Python and the "
    "gathers of kernel entries for the free samples' scores (a profile: 24 % in "
    "_Columns.entries). With the round's loop the "
    "same start settles: 5,062 steps (3,845 cut, 999 of length 0; 635 checks releasing "
    "6,228 variables and 324 caps, 4,534 fixed again), 808 factorizations of 226 rows; "
    "269 steps raised the objective, 264 of them were undone and solved again on a fresh "
    "factorization (the others: rises left by a fresh factorization's solve, kept); "
    "13.5-17.1 s CPU (RELEASE_BATCH 25: 5,488 steps, 20.0 s; 100: 4,904, 18.0 s; "
    "unlimited: 5,269, 18.3 s). Checks: n = 300, C = 1e6 and 1e8, both models against "
    "cvxpy + Clarabel (oracle/, the dual with K scaled by C and unit caps, the final "
    "weights for AdaptiveWeightedSVM): relative differences 1.6e-9-2.5e-7; "
    "WeightedRobustMSVM n = 4,000 against a fit at tol 1e-5: 5e-11 (C = 1e4), 4.5e-9 "
    "(1e6), 3.4e-6 (1e8). WestonWatkinsMSVM is not the same model (docs/models.md: with "
    "U = identity and no truncation WeightedRobustMSVM is the Crammer-Singer-type MSVM): "
    "its objectives are 0.43 % (C = 1e4), 0.013 % (1e6) and 7e-6 (1e8) above. Tried and "
    "not kept: refactoring wherever a step's gradients after it showed a drifted solve "
    "(the part of z1 - (1 - t) z0 off the constraints' normals above 1e-3 or 1e-6 of "
    "z0's): n = 600-800 starts 404-481 -> 404-463 steps, but the n = 4,000, C = 1e8 "
    "start returned nothing after 324 steps.")


# the page's tables: (heading, text, tags)
SECTIONS = (
    ("Round 10: the per-class finishing step",
     "'before': main before the round-10 finishing step change (fresh factorizations up to "
     "600 free variables), 'after': the Schur-updated face above FRESH_FREE.",
     ("after", "before")),
    ("Round 11: the grouped finishing step on the free set's m x m block",
     "'r11': the grouped finishing step's steps on the m x m block of the free variables "
     "(msvm/_grouped_face.py) where the kernel's factor is as wide as the free set; "
     "'r11-before': the same run with that face off (USE_FACE = False, main b9f36a5's "
     "grouped finishing step), measured alternately in the same process, grouped models "
     "only (the other five models' code is unchanged by that round). Measured 2026-11-27 "
     "at load 7-8 on 2 cores (other engineers' jobs), CPU time; n = 700 and 1,000 at "
     "c05d6c4 (FACE_FLOPS 1e10), n = 2,000 'r11' only, at 397cd28 (FACE_FLOPS 1e11; with "
     "1e10 the C = 1e6 fits took 86-90 s; a 'before' fit there runs to max_iter for "
     "minutes; AdaptiveWeightedSVM at C = 1e8 not measured: stopped at the deadline). "
     "Open: n = 2,000, C = 1e8 still stops at max_iter (270 s CPU). Diagnosis: at "
     "n = 1,000, C = 1e6 and 1e8 every budget stop left 143-192 free variables whose "
     "factor had rank 170-310; "
     "the factor's SVD steps (4.6 ms each) ran out of their work bound after 95-165 of the "
     "800-850 steps the loop needed, every finishing step returned nothing, and the solver "
     "crawled (finishing steps 2.7 s of the 35 s at C = 1e6).",
     ("r11", "r11-before")),
    ("Round 11: the per-class finishing step releases bounds in batches",
     "n = 2,000 and 4,000; 700 and 1,000 again: 'before-r11' is main b9f36a5, 'after-r11' "
     "the finishing step that releases the RELEASE_BATCH most violating bounds a step, with "
     "LAST_STEPS_PER_FREE steps per free variable, tried at every budget stop up to MAX_FREE "
     "free variables (msvm/_finish.py, msvm/_sequence.py); n = 4,000 for ReinforcedMSVM only "
     "(`--models`); load 6-9, the before and after runs one after the other (n = 700/1,000: "
     "the same half hour). Why main's proposals at n = 2,000, C = 1e8 were not certified: "
     "they were the points where MAX_STEPS (3,000 steps, one bound released a step) ran "
     "out, exact on their faces (free reduced gradients 7e-7, equalities 1e-6, float64 "
     "rows: bounds above FLOAT32_MAX_BOUND) but with 1,114 and 445 bounds still violated "
     "(largest 43 and 1.6 against tol / 100); unbounded steps from the first stop took "
     "14,547 steps and 33 s CPU without settling, 50 bounds a step 5,114 steps (5.9 s) to "
     "the optimum, which the solver certifies in one epoch. Tried from that stop and not "
     "kept: releasing every bound within half of the largest violation (16.4 s), all "
     "violated bounds (the flops ran out at once), 5 / 20 / 200 a step (13.5 s unsettled / "
     "10.0 s / 3.2 s unsettled); projected cut steps (`_projected_step`) on the plain face "
     "(70 s, unsettled); gradients of the free variables only between full steps (5.1 s "
     "instead of 5.9 s; 19 s instead of 23 s from ReinforcedMSVM n = 4,000's first stop), "
     "which must keep the fixed base variables' entries exact: set to 0 (they cancel in "
     "exact arithmetic) the bordered solves lost the step.",
     ("after-r11", "before-r11")),
    ("Round 12: releases marked stuck only where nothing moved",
     "'r12': the grouped finishing step marks a release stuck only where the steps after "
     "it moved nothing (msvm._finish_groups.STUCK_IF_STILL) and restores the factor's "
     "steps onto the active caps and equalities (PROJECT_FACTOR_STEP); 'r12-before': both "
     "off (`--switch stuck`: main 3a47b86's grouped finishing step), measured alternately "
     "in the same process, grouped models only, 2026-11-27, load 4-7 on 2 cores (the test "
     "suite and other engineers' jobs), CPU time, src at 9449870 (n = 700, 1,000) and "
     "89e269a (n = 2,000; the same code; n = 4,000 'r12' only), '-dirty' being the "
     "results files. Diagnosis "
     "(WeightedRobustMSVM, n = 2,000, C = 1e8, main): each of the six finishing steps "
     "returned a proposal (6.2-9.8 s, 4,538-5,641 active-set steps, 506-851 "
     "factorizations of the face system, 465-805 of them after a drifted bordered solve), "
     "the solver certified none and ran 100-3,200 epochs between them, to max_iter. From "
     "the iterate at 100 epochs the proposal came out of MAX_RESETS with 73 variables and "
     "8 caps marked stuck, worst violation 4.2 margin units (tol / 100 = 1e-5), relative "
     "duality gap 0.071 (n = 1,000: 0.99): a release was marked stuck where the worst "
     "violation at the next check was not lower, but an active-set release lowers the "
     "objective, not necessarily the worst violation. Marked only where nothing moved, the "
     "same start gives relative gap 2e-7 in 4.6-5.0 s, certified in one epoch. Found with "
     "it: the factor's SVD steps held the rows that the caps' projection zeroed only to "
     "rounding, times 1 / S^2 (AdaptiveWeightedSVM n = 700, C = 1e6: 2.8e21 on the only "
     "free member of an active cap, its sum 7.3e5 over the cap, relative gap 1.0). The "
     "refactorizations are real but cheap: 90 % of the bordered full steps at C = 1e8 "
     "(35 % at 1e6) fail the tol / 100 check, each refactorization 1-2 ms at up to 400 "
     "free variables, about 0.5 s of a 4-5 s finishing step; a bordered solve differs "
     "from a fresh factorization's by a median 3e-8 of the step at 1-5 changes, 2e-7 at "
     "5-20, 4e-4 at 20-60 and 18 at 60-130 (C = 1e8; C = 1e6: 4e-10, 1e-8, 2e-6, 2.1). "
     "Tried and not kept (finishing steps from the iterate at 100 epochs unless a fit is "
     "named): the fixed base variables' gradients in the base solve's right-hand side, as "
     "msvm._finish does (n = 700, C = 1e8: 0.65 -> 3.9 s); the system solved for the "
     "multipliers' changes (that start cycled, 10,000 steps, no proposal); refactoring "
     "only where the free residual exceeds 0.1 of the worst violation left (fits, "
     "n = 2,000, C = 1e6: WeightedRobustMSVM 5.1 -> 39.5 s, 2,005 refactorizations, "
     "AdaptiveWeightedSVM 8.5 -> 50.5 s); REFACTOR 30 (n = 2,000, C = 1e6: 10,000 steps, "
     "no proposal) and 10 (3.7 -> 3.0 s at C = 1e6, 5.4 -> 4.4 s at 1e8; not measured "
     "further). Open: n = 4,000, C = 1e6 stops at max_iter after 499 s (the other three "
     "n = 4,000 fits not run: stopped at the deadline).",
     ("r12", "r12-before")),
    ("Round 13: the grouped finishing step at n = 4,000",
     "'r13': the grouped finishing step releasing at most RELEASE_BATCH (50) violations a "
     "check, the active caps' among them (CAP_BATCH), proposing the point of its last check "
     "where its budgets run out (RETURN_REACHED), and solving its face on the moves that "
     "keep the active caps (msvm._grouped_face.MoveFace, ELIMINATE_CAPS); 'r13-before': "
     "all four off (`--switch r13`: main 3e071a4's grouped finishing step), measured "
     "alternately in the same process, grouped models only, 2026-11-27, load 4-5 on 2 cores "
     "(other engineers' jobs and this round's other runs), CPU time; n = 1,000 and 2,000 at "
     "1f7ea82, n = 4,000 'r13' only at 1f7ea82 ('-dirty': a docstring; main's C = 1e6 fit "
     "stopped at max_iter after 499 s, round 12). Diagnosis (WeightedRobustMSVM, n = 4,000, "
     "C = 1e6, main): 100 epochs take 4.0 s (WestonWatkinsMSVM on the same data: 0.39 s, "
     "the same SMO with working set 256; not investigated, msvm/_core/_smo.pyx) and leave "
     "815 free variables, relative gap 0.996. The finishing step's factor reached MAX_RANK "
     "(400) and MAX_WORK, its face then ran 3,645 steps freeing every violation above half "
     "the worst at once (the free set grew to 1,762), spent FACE_FLOPS (1e11) in 13.1 s and "
     "returned nothing with 2,526 violations left (worst 4.9e4); the stops at 200 and 400 "
     "epochs the same (990 and 1,075 free, 14.5 s and 14.0 s, nothing). With releases in "
     "batches the face still spent its flops: 261 factorizations of 730 rows on average, "
     "up to 428 of them active caps' multiplier rows, 257 after a drifted bordered solve. "
     "WestonWatkinsMSVM's per-class finishing step on the same data settles from 934 free "
     "variables in 3,454 steps, 200 factorizations of 200 rows on average, 6.3 s (C = 1e6) "
     "and 8.1 s (C = 1e8), and its fits converge in 6.8 s and 8.6 s: its face has no cap "
     "rows and its proposals are kept where its budget runs out. On the moves that keep "
     "the caps the n = 4,000, C = 1e6 face settles from that stop in 5,500-5,800 steps, "
     "3.4-3.7e9 flops, 16.5-18.3 s, certified in one epoch. Open: C = 1e8 at n = 4,000 "
     "(not in the table: stopped after 3,200 epochs and five finishing steps, about 300 s, "
     "relative gap 0.90, max_iter estimated at 600 s or more; its loop needs more than "
     "30,000 steps from the stops at 100-800 "
     "epochs, 81 s for 30,000, the worst violation falling to about 1 and jumping back by "
     "1e2-1e5 as releases change the face), and n = 2,000, C = 1e8 is slower "
     "(WeightedRobustMSVM 8.1 against 6.1 s: 5,819 active-set steps against 3,733, the "
     "releases limited to 50 a check). Tried and not kept (finishing steps from the Gram "
     "solver's iterate at 100 epochs, n = 4,000, C = 1e8, relative gap of the proposal): "
     "the cap rows kept (GroupedFace) with batched releases 23.2 s, 0.74; with one step of "
     "iterative refinement (REFINE_STEPS 1) 25.7 s, 0.61; RELEASE_BATCH 10: 25.8 s, 0.69; "
     "200: 17.0 s, 1.0; FACE_FLOPS 1e12: 36.7 s, 0.058 (10,000 steps); on the moves "
     "RELEASE_BATCH 200: 14.8 s, 1.0; RELEASE_SHARE 0.9: 22.3 s, 0.95; msvm._finish's rule "
     "that a variable a step of length 0 fixes again is not released until a step moves: "
     "no change (the same 10,000 steps, 2,550 of length 0); RELEASE_BATCH 100 (fits, "
     "alternating as in the table: n = 2,000, C = 1e8 WeightedRobustMSVM 6.7 against "
     "6.9 s, C = 1e6 4.8 against 5.0 s; n = 4,000, C = 1e6 15.8 s; but n = 4,000, C = 1e4 "
     "61.6-64.5 s against 9.8-10.6 s: two finishing steps ended unsettled at the step "
     "budget where 50 settled in 1,924 steps). Checks: n = 300, C = 1e6 and 1e8, both "
     "models against cvxpy + Clarabel (oracle/, the dual with K scaled by C and unit "
     "caps): relative differences 3.2e-9-3.9e-7; n = 4,000 against a fit at tol 1e-6: "
     "3.6e-10 (C = 1e4), 2.9e-8 (C = 1e6). Once each (CPU, one BLAS thread): "
     "WeightedRobustMSVM(truncation=None) n = 8,000, C = 1e6 converges in 63.0 s (two "
     "finishing steps); WeightedRobustMSVM with its default truncation, C = 1e6: n = 2,000 "
     "11.9 s, 5 convex steps, n = 4,000 38.0 s, 6 convex steps, every step converged.",
     ("r13", "r13-before")),
    ("Round 13: the grouped SMO's epoch cost",
     "Written by hand this once (the diagnosis; the table below and "
     "grouped_smo_cost.md are written by benchmarks/run_grouped_smo_cost.py). "
     "'r13-smo': the grouped Newton step's block products (msvm/_core/_smo.pyx, _hmul) "
     "over the block samples holding a free variable and those where the direction is "
     "nonzero (SPARSE_HMUL); 'r13-smo-before': over the whole q x q block (the switch "
     "off: main 05e27d6), alternating in the same process, one fit each, 2026-11-27, load "
     "1.5-2 on 2 cores (the test suite running beside it), CPU time, at 4e3102f. Every "
     "objective, n_iter_ and fingerprint fit (38 of 38) identical: the same sums less "
     "their zero terms. Diagnosis (make_blobs n = 4,000, C = 1e6 and 1e4, max_iter = 100 "
     "epochs, main): both models take the same 400,001 local SMO steps; WeightedRobustMSVM"
     "(truncation=None) in 49 blocks, 5 full scans, 2,549 kernel rows computed of 19,340 "
     "requested (C = 1e4: 69, 7, 2,821 of 25,752), WestonWatkinsMSVM in 55 blocks, 6 full "
     "scans, 2,612 of 21,335 (64, 6, 2,651 of 24,355): the blocks, scans and rows are "
     "alike, each local step costs 10x. perf (4 kHz samples of the whole process, whose "
     "Python start and data take about 1.2 s in both; C = 1e6): the compiled SMO took 4.26 "
     "s for the grouped model, 3.40 s of it in the Newton step's products with the block "
     "(_hmul), 0.86 s in the pair steps and block scans (_partner 0.29, _bucket_extremes "
     "0.20, _group_steps 0.12, _group_violation 0.09: plain loops, the vectorized "
     "_block_scan.h passes serve blocks without groups only), against 0.33 s for "
     "WestonWatkinsMSVM's whole SMO (C = 1e4: 4.11 s, _hmul 3.32 s, against 0.32 s); "
     "kernel rows, score updates and cap handling (_group_steps, _group_violation) are "
     "small. Cause: _block_smo takes a Newton step on a grouped block every "
     "min(nb, 100) q^2 k / 8192 = 2,400 local steps (q = 256, k = 3), up to 166 in 100 "
     "epochs, each up to 101 products of a direction with the q x q block (q^2 k = "
     "196,608 multiply-adds): up to 3.3e9 multiply-adds, about 3.4 s; the schedule counts "
     "a local step as 8,192 of them, while a grouped local step costs about 2 us (0.86 s "
     "for 400,001), so the Newton steps took 80 % of the SMO. The direction is zero "
     "outside the free variables and only their rows are read, yet every product ran "
     "over all q samples. With the products over the samples that take part: _hmul 1.29 s "
     "(C = 1e6) and 1.05 s (C = 1e4), the compiled SMO 2.14 and 1.83 s; 100 epochs (best "
     "of 3, alternating, grouped_smo_cost.md) WeightedRobustMSVM 4.07 -> 2.11 s (C = 1e6), "
     "3.95 -> 1.85 s (C = 1e4), AdaptiveWeightedSVM 8.05 -> 4.21 s, 7.87 -> 3.59 s; "
     "WestonWatkinsMSVM 0.41 and 0.45 s. Pendigits WeightedRobustMSVM(truncation=None) C = "
     "10: 0.165-0.172 s either way (its fit takes few Newton steps). The rest of the 5x "
     "gap to WestonWatkinsMSVM: the remaining products (1.3 s) and the grouped blocks' "
     "plain loops (0.8 s). The full fit at n = 4,000, C = 1e6 is now 2.1 s of SMO and "
     "about 12 s of finishing step (_finish_groups.py); at n = 600, C = 1e6 the fit takes "
     "0.37 s (100 epochs, then one finishing step). Tried and not kept (branch "
     "groupedsmo-newton-schedule, a switch for the schedule's 8,192; it moves the "
     "iterates): a Newton step every 4x fewer local steps (2,048), full fits, CPU, one "
     "each in one process, WeightedRobustMSVM n = 4,000 C = 1e4 10.60 -> 5.97 s, C = 1e6 "
     "15.10 -> 12.80 s (512: 8.13 and 14.37 s; 32,768: 100 epochs 6.6 s instead of 2.1), "
     "AdaptiveWeightedSVM 12.02 -> 11.01 s and 21.36 -> 19.46 s, n = 1,000 C = 1e4 and 1e6 "
     "10-20 % faster, but C = 1e8 slower: n = 1,000 WeightedRobustMSVM 2.44 -> 4.61 s, "
     "AdaptiveWeightedSVM 3.93 -> 6.04 s, n = 2,000 5.20 -> 5.82 s; every fit converged, "
     "relative objective differences up to 7e-8. Open: a schedule by the cost of the "
     "sparse products actually taken, a smaller CG cap, vectorized grouped block passes.",
     ("r13-smo", "r13-smo-before")),
    ("Round 14: the grouped finishing step keeps only steps that lower the objective",
     R14_TEXT, ("r14", "r14-before")),
    ("Round 14: the release batch",
     "As above (the same runs' conditions), RELEASE_BATCH 25, 50 and 100 for both tags: "
     "make_blobs n = 600 (seed 0) and n = 800 (seeds 2 and 5, where main's fits were "
     "sensitive to the batch), C = 1e6.",
     ("r14-b25", "r14-before-b25", "r14-b50", "r14-before-b50", "r14-b100",
      "r14-before-b100")),
)


def _make(name, C):
    import msvm
    if name == "LLW":
        return msvm.ReinforcedMSVM(C=C, kernel="rbf", reinforcement=0.0)
    if name == "WeightedRobustMSVM":
        return msvm.WeightedRobustMSVM(C=C, kernel="rbf", truncation=None)
    return getattr(msvm, name)(C=C, kernel="rbf")


def measure_with(n, C, name, switch, on, seed=0, batch=None):
    """`measure` with the msvm._finish_groups constants of ``switch`` (SWITCHES) as they
    are (``on``) or at their earlier values (and RELEASE_BATCH = ``batch`` if given)."""
    import msvm._finish_groups as finish_groups
    changes = dict(SWITCHES[switch]) if not on else {}
    if batch is not None:
        changes["RELEASE_BATCH"] = batch
    saved = {c: getattr(finish_groups, c) for c in changes}
    for constant, value in changes.items():
        setattr(finish_groups, constant, value)
    try:
        return measure(n, C, name, seed)
    finally:
        for constant, value in saved.items():
            setattr(finish_groups, constant, value)


def measure(n, C, name, seed=0):
    """One fit: CPU s, converged, epochs (DC steps for RobustMSVM), objective."""
    from sklearn.datasets import make_blobs
    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits
    X, y = make_blobs(n, 3, centers=3, cluster_std=2.0, random_state=seed)
    with threadpool_limits(1), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = time.process_time()
        est = _make(name, C).fit(X, y)
        cpu = time.process_time() - start
    return dict(cpu=cpu, converged=bool(est.converged_), epochs=int(est.n_iter_),
                objective=float(est.objective_),
                warnings=sum(issubclass(w.category, ConvergenceWarning) for w in caught))


def _table(results, tags):
    """One table: a row per (n, C, model) measured under any of ``tags``, side by side."""
    header = ["n", "C", "model"] + [f"{t}: {col}" for t in tags
                                   for col in ("CPU s", "converged", "epochs", "objective")]
    rows = []
    keys = [k for k in results if any(t in results[k]["tags"] for t in tags)]
    for key in sorted(keys, key=lambda k: (results[k]["n"], results[k]["C"],
                                           results[k].get("seed", 0),
                                           MODELS.index(results[k]["model"]))):
        r = results[key]
        model = r["model"] + (f" (seed {r['seed']})" if r.get("seed") else "")
        row = [r["n"], f"{r['C']:g}", model]
        for t in tags:
            m = r["tags"].get(t)
            row += ["", "", "", ""] if m is None else [
                f"{m['cpu']:.2f}", m["converged"], m["epochs"], f"{m['objective']:.7g}"]
        rows.append(row)
    return markdown_table(header, rows)


def render(results):
    """The page: one table per round (SECTIONS), its tags side by side."""
    commits = ", ".join(f"{t}: {c}" for t, c in sorted(
        {(t, m["git"]) for r in results.values() for t, m in r["tags"].items()}))
    lines = [
        "# RBF at large C on small problems (issue 23 item 1)",
        "",
        "`python -m benchmarks.run_rbf_large_c --tag TAG` (benchmarks/run_rbf_large_c.py). "
        "make_blobs(n, 3 features, 3 classes, cluster_std = 2, random_state = 0), RBF "
        "gamma='scale', default tol (1e-3) and max_iter (10,000 epochs), one BLAS thread, "
        "CPU time of one fit each; 'LLW' is ReinforcedMSVM(reinforcement=0), "
        "'WeightedRobustMSVM' is fitted with truncation=None; RobustMSVM's epochs column "
        "holds its DC steps, the grouped models' their solves' epochs as n_iter_ reports "
        f"them. Commits: {commits}. The machine was shared (load about 10): compare "
        "within a row.",
        ""]
    for heading, text, tags in SECTIONS:
        lines += [f"## {heading}", "", text, "", _table(results, tags), ""]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tag", required=True)
    parser.add_argument("--n", default="700,1000")
    parser.add_argument("--C", default="1e4,1e6,1e8")
    parser.add_argument("--commit", default=None,
                        help="the commit of the build measured, where msvm is imported from "
                             "another checkout (default: this checkout's)")
    parser.add_argument("--models", default=None, help="a comma-separated subset of MODELS")
    parser.add_argument("--before", default=None,
                        help="also measure the grouped models with --switch off, under this "
                             "tag, alternating in the same process")
    parser.add_argument("--switch", default="face", choices=sorted(SWITCHES))
    parser.add_argument("--seed", type=int, default=0, help="make_blobs' random_state")
    parser.add_argument("--batch", type=int, default=None,
                        help="RELEASE_BATCH for both tags (suffixed '-bB')")
    args = parser.parse_args(argv)
    commit = args.commit or git_commit()
    models = args.models.split(",") if args.models else MODELS
    for n in map(int, args.n.split(",")):
        for C in map(float, args.C.split(",")):
            for name in models:
                for tag, run in _runs(args, n, C, name):
                    m = dict(run(), git=commit)
                    print(n, C, name, tag, json.dumps(m), flush=True)
                    _record(n, C, name, tag, m, args.seed)


def _runs(args, n, C, name):
    """The (tag, measurement) pairs of one row: ``--tag`` alone, or alternating with
    ``--before`` (the grouped models), tags suffixed with ``--batch``."""
    suffix = f"-b{args.batch}" if args.batch is not None else ""
    if not (args.before and name in GROUPED):
        return [(args.tag + suffix, lambda: measure_with(n, C, name, "face", True, args.seed,
                                                         args.batch))]
    return [(tag + suffix, lambda on=on: measure_with(n, C, name, args.switch, on, args.seed,
                                                       args.batch))
            for tag, on in ((args.tag, True), (args.before, False))]


def _record(n, C, name, tag, m, seed=0):
    """Merge one measurement into the JSON file and render the page."""
    results = json.loads(JSON_PATH.read_text())["results"] if JSON_PATH.exists() else {}
    key = f"{n}-{C:g}-{name}" + (f"-seed{seed}" if seed else "")
    entry = results.setdefault(key, dict(n=n, C=C, model=name, seed=seed, tags={}))
    entry["tags"][tag] = m
    write_json(JSON_PATH, {"results": results})
    MD_PATH.write_text(render(results))


if __name__ == "__main__":
    main()
