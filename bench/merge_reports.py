#!/usr/bin/env python3
"""Merges bench JSON reports of one run into DIR/results.json, prints the
tessel-vs-peer table and draws DIR/results.{png,svg} (bench/run_all.py's
comparison and chart, for reports a device script wrote one by one).

  python3 bench/merge_reports.py --out bench/results/run gemm.json cublas.json

A tessel record may carry a `variant_suffix` through --tag FILE=SUFFIX
(e.g. --tag gemm_blocks.json=blocks) to keep two tessel configurations of
the same size apart; tagged records are compared under their own variant.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_all  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--tag", action="append", default=[],
                   help="FILE=SUFFIX: that file's records get impl "
                   "tessel:SUFFIX (shown, not compared)")
    p.add_argument("reports", nargs="+")
    args = p.parse_args()
    tags = dict(t.split("=", 1) for t in args.tag)
    records = []
    for path in args.reports:
        with open(path) as f:
            report = json.load(f)
        for r in report.get("records", []):
            suffix = tags.get(os.path.basename(path))
            if suffix and r.get("impl") == "tessel":
                r = dict(r, impl="tessel:" + suffix)
            records.append(r)
    os.makedirs(args.out, exist_ok=True)
    comparisons = run_all.compare(records)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"records": records, "comparisons": comparisons}, f,
                  indent=1)
    run_all.print_table(records, comparisons)
    print(run_all.draw(records, args.out))


if __name__ == "__main__":
    main()
