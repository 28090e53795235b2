"""Command line entry point: ``python -m msvm demo`` and ``python -m msvm --version``."""

import argparse
import sys
import time


def _gamma(value):
    if value in ("scale", "auto", "median"):
        return value
    try:
        gamma = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"gamma must be 'scale', 'auto', 'median' or a positive float; got {value!r}"
        ) from None
    if not gamma > 0:
        raise argparse.ArgumentTypeError(f"gamma must be positive; got {value!r}")
    return gamma


def _positive_float(value):
    number = float(value)
    if not number > 0:
        raise argparse.ArgumentTypeError(f"must be positive; got {value!r}")
    return number


def demo(C=10.0, gamma="scale", kernel="rbf"):
    """Fit ReinforcedMSVM and sklearn's SVC side by side on pendigits and print a table."""
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from msvm import ReinforcedMSVM
    from msvm.datasets import load_pendigits

    X, y = load_pendigits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=0)
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    print(f"pendigits: {len(X_train)} training and {len(X_test)} test samples, "
          f"{X.shape[1]} features, {len(set(y))} classes (standardized, stratified 70/30)")

    msvm_est = ReinforcedMSVM(kernel=kernel, C=C, gamma=gamma)
    start = time.perf_counter()
    msvm_est.fit(X_train, y_train)
    msvm_time = time.perf_counter() - start
    msvm_acc = msvm_est.score(X_test, y_test)

    # SVC gets the same C and the kernel coefficient msvm resolved (gamma_).
    svc_gamma = msvm_est.gamma_ if msvm_est.gamma_ is not None else "scale"
    svc = SVC(kernel=kernel, C=C, gamma=svc_gamma)
    start = time.perf_counter()
    svc.fit(X_train, y_train)
    svc_time = time.perf_counter() - start
    svc_acc = svc.score(X_test, y_test)

    gamma_text = "" if msvm_est.gamma_ is None else f", gamma={msvm_est.gamma_:.6g}"
    print(f"kernel={kernel}, C={C:g}{gamma_text}\n")
    rows = [("model", "fit time (s)", "test accuracy"),
            ("ReinforcedMSVM", f"{msvm_time:.3f}", f"{msvm_acc:.4f}"),
            ("sklearn SVC (one-vs-one)", f"{svc_time:.3f}", f"{svc_acc:.4f}")]
    widths = [max(len(row[c]) for row in rows) for c in range(3)]
    for i, row in enumerate(rows):
        print("  ".join(cell.ljust(w) if c == 0 else cell.rjust(w)
                        for c, (cell, w) in enumerate(zip(row, widths))))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print(f"\nfit time ratio ReinforcedMSVM / SVC: {msvm_time / svc_time:.2f}")
    return {"msvm_time": msvm_time, "msvm_accuracy": msvm_acc,
            "svc_time": svc_time, "svc_accuracy": svc_acc}


def main(argv=None):
    from msvm import __version__

    parser = argparse.ArgumentParser(prog="python -m msvm",
                                     description="msvm: multicategory support vector machines")
    parser.add_argument("--version", action="version", version=f"msvm {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="command")
    demo_parser = commands.add_parser(
        "demo", help="fit ReinforcedMSVM and sklearn SVC on pendigits and compare",
        description="Fit ReinforcedMSVM and sklearn.svm.SVC (same C, same gamma value) on the "
                    "bundled pendigits data and print fit times and test accuracies.")
    demo_parser.add_argument("--C", type=_positive_float, default=10.0,
                             help="loss weight C of both models (default: 10)")
    demo_parser.add_argument("--gamma", type=_gamma, default="scale",
                             help="'scale', 'auto', 'median' or a positive float "
                                  "(default: scale)")
    demo_parser.add_argument("--kernel", choices=("rbf", "linear", "poly"), default="rbf",
                             help="kernel of both models (default: rbf)")
    args = parser.parse_args(argv)

    if args.command == "demo":
        demo(C=args.C, gamma=args.gamma, kernel=args.kernel)
        return 0
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
