"""python -m opbridge.bench [workloads] [--runs N] [--threads 1 2] [--no-memory] [--device cuda] [--smoke]:
the same as `python -m opbridge bench` (one set of options, in opbridge/cli.py)."""

import sys

from opbridge.cli import main

sys.exit(main(["bench", *sys.argv[1:]]))
