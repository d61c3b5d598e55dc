"""Serving an opbridge model with Ray Serve, and its throughput beside one in-process session.

    .venv/bin/python tests/serve/make_model.py /tmp/served            # the demo detector, 8 requests (PyTorch)
    pip install "opbridge[serve]"                                    # or ./run.sh's .cache/venv-serve
    python examples/serve_ray.py /tmp/served [--replicas 2] [--requests 200] [--clients 4]

Starts a local Ray instance, deploys the model with opbridge.serve.deploy (one ORT session per
replica, one CPU each) and sends the requests from several client threads; then sends the same
requests from as many threads to one ORT session in this process (every core). Prints requests per
second of both, side by side. On a cluster, connect with ray.init(address="auto") instead: the
replicas then spread over its nodes (the model and library paths must exist on every node).
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import ray

import opbridge
from opbridge.serve import deploy, throughput


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="holds detector.onnx and requests.npz (tests/serve/make_model.py)")
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    arrays = np.load(args.folder / "requests.npz")
    distinct = [{"image": arrays[f"image_{k}"], "proposals": arrays[f"proposals_{k}"],
                 "proposal_scores": arrays[f"scores_{k}"]} for k in range(8)]
    requests = [distinct[k % len(distinct)] for k in range(args.requests)]
    cpus = os.cpu_count() or 1

    ray.init(num_cpus=max(cpus, args.replicas), include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    handle = deploy(args.folder / "detector.onnx", name="detector", replicas=args.replicas, cpus=1)
    throughput(handle, requests[:args.clients * 2], args.clients)  # warm-up
    served = throughput(handle, requests, args.clients)
    ray.shutdown()

    session = opbridge.create_session(str(args.folder / "detector.onnx"), intra_op_threads=cpus)
    session.run(None, requests[0])
    start = time.perf_counter()
    with ThreadPoolExecutor(args.clients) as pool:
        list(pool.map(lambda r: session.run(None, r), requests))
    local = len(requests) / (time.perf_counter() - start)

    print(f"{args.requests} requests from {args.clients} client threads, {cpus} CPUs:")
    print(f"  Ray Serve, {args.replicas} replicas of 1 CPU : {served:8.1f} requests/s")
    print(f"  one in-process ORT session, {cpus} threads : {local:8.1f} requests/s")
    print(f"  ratio (Ray Serve / in-process): {served / local:.2f}x")


if __name__ == "__main__":
    main()
