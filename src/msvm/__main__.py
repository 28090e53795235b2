"""Command line entry point: ``python -m msvm demo`` and ``python -m msvm --version``."""

import argparse
import sys


def demo(seed=0):
    """Run the demo (:func:`msvm._demo.demo`): msvm's models and SVC on pendigits."""
    from ._demo import demo as run_demo

    return run_demo(seed=seed)


def main(argv=None):
    from msvm import __version__

    parser = argparse.ArgumentParser(prog="python -m msvm",
                                     description="msvm: multicategory support vector machines")
    parser.add_argument("--version", action="version", version=f"msvm {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="command")
    demo_parser = commands.add_parser(
        "demo", help="msvm's models side by side with sklearn's SVC on pendigits",
        description="Fit msvm's models and sklearn.svm.SVC on subsamples of the bundled "
                    "pendigits data and print, measured in this run: fit times and test "
                    "accuracies at the defaults, class probabilities, a fit under label "
                    "noise; then a utility-weighted fit on simulated overlapping classes "
                    "(a few seconds of CPU).")
    demo_parser.add_argument("--seed", type=int, default=0,
                             help="seed of the subsamples and of the flipped labels "
                                  "(default: 0)")
    args = parser.parse_args(argv)

    if args.command == "demo":
        demo(seed=args.seed)
        return 0
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
