"""python -m opbridge.bench [workloads] [--runs N] [--threads 1 2] [--no-memory]"""

import argparse
import sys

from opbridge.bench import main

parser = argparse.ArgumentParser(prog="python -m opbridge.bench", description="opbridge benchmarks")
parser.add_argument("workloads", nargs="*", help="workload ids or prefixes (default: all)")
parser.add_argument("--runs", type=int, default=10, help="timed runs per engine and thread count")
parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory child processes")
args = parser.parse_args()
sys.exit(main(args.workloads, args.runs, args.threads, memory=False if args.no_memory else None))
