"""Ray Serve: an opbridge model served by replicas spread over a Ray cluster.

    pip install "opbridge[serve]"            # ray[serve]

    from opbridge.serve import deploy, infer

    handle = deploy("/models/frcnn.onnx", name="frcnn", replicas=2, cpus=2)   # serve.run of OpbridgeModel
    outputs = infer(handle, {"images_0": image})   # {output name: numpy array}

(`OpbridgeModel` is the deployment class itself, for `.options(...).bind(...)` in applications of
your own.)

Each replica holds one ONNX Runtime session with the opbridge library, created when the replica
starts (a library or model that cannot load fails the deployment then, naming the path, not the
first request). It computes one request at a time (a lock around the session; Serve hands it at most
two, max_ongoing_requests 2, so that the next one's arguments arrive while the current one runs;
more wait in the callers' handles for whichever replica frees first), with the replica's CPU share
as threads
(`ray_actor_options={"num_cpus": k}`: k intra-op threads); with `device="cuda"` and
`ray_actor_options={"num_gpus": 1}` the session runs on the GPU Ray gave the replica (onnxruntime-gpu
and a CUDA build of the library; a replica whose ORT has no CUDA provider fails at start rather than
running on the CPU). Requests are dicts of numpy arrays, as `InferenceSession.run` takes them; a
request ORT refuses (a wrong shape or dtype) gets ORT's error, opbridge's messages included, and the
replica keeps serving.

A replica that dies (its node lost, the process killed) fails the requests it was running; Ray
Serve sends later requests to the other replicas and starts a replacement. `infer` sends a request
that failed that way once more by default (inference has no side effects, so a retry is safe; a
request that itself brings its replica down costs at most two replicas); an error the model raised
is not retried.

The model and library paths are read on the replicas' nodes: use paths every node has (a shared
file system, or the same installation everywhere). This module imports ray: it needs the serve extra.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import numpy as np
import ray
from ray import serve

from opbridge.check import session_values
from opbridge.triton import shared_batch_axis

DEFAULT_MAX_BATCH_SIZE = 8

# What a request fails with when its replica died under it: these are retried.
REPLICA_LOST = tuple(getattr(ray.exceptions, name) for name in
                     ("ActorDiedError", "ActorUnavailableError", "RayActorError", "WorkerCrashedError")
                     if hasattr(ray.exceptions, name))


class ReplicaSession:
    """One replica's ORT session of `model` with the opbridge library (see the module docstring)."""

    def __init__(self, model: str, library: str | None = None, device: str = "cpu"):
        import onnxruntime as ort

        from opbridge._library import library_path, register_library

        if device not in ("cpu", "cuda"):
            raise ValueError(f"opbridge.serve: device must be 'cpu' or 'cuda', got {device!r}")
        library = library if library is not None else library_path()
        if not Path(library).is_file():
            raise FileNotFoundError(f"opbridge.serve: the opbridge library {library} does not exist on this node")
        if not Path(model).is_file():
            raise FileNotFoundError(f"opbridge.serve: the model {model} does not exist on this node")
        options = ort.SessionOptions()
        register_library(options, library)
        options.intra_op_num_threads = replica_threads()
        options.inter_op_num_threads = 1
        providers = ["CPUExecutionProvider"]
        if device == "cuda":
            providers = [("CUDAExecutionProvider", {"device_id": replica_gpu()}), "CPUExecutionProvider"]
        self.session = ort.InferenceSession(model, options, providers=providers)
        if device == "cuda" and "CUDAExecutionProvider" not in self.session.get_providers():
            raise RuntimeError(f"opbridge.serve: device 'cuda', but ONNX Runtime {ort.__version__} on this node has "
                               f"no CUDA execution provider ({ort.get_available_providers()}): install "
                               "onnxruntime-gpu there")
        self.output_names = [o.name for o in self.session.get_outputs()]
        # Serve runs requests on a thread pool: one session.run at a time keeps the replica to its threads.
        self.lock = threading.Lock()

    def run(self, inputs: dict) -> dict:
        feeds = {name: np.asarray(value) for name, value in inputs.items()}
        with self.lock:
            outputs = self.session.run(None, feeds)
        return dict(zip(self.output_names, outputs))

    def threads(self) -> int:
        return self.session.get_session_options().intra_op_num_threads

    def batch_axis_problem(self) -> str:
        """"" when requests can be concatenated along the inputs' first axis and the outputs split
        along it (triton.shared_batch_axis), else why not."""
        return shared_batch_axis(session_values(self.session))[1]


@serve.deployment(max_ongoing_requests=2)
class OpbridgeModel:
    """One ORT session of `model` per replica. `library`: the opbridge library's path on the replica's
    node (default: the installed package's); `device`: "cpu" or "cuda"."""

    def __init__(self, model: str, library: str | None = None, device: str = "cpu"):
        self.replica = ReplicaSession(model, library, device)

    def __call__(self, inputs: dict) -> dict:
        return self.replica.run(inputs)

    def threads(self) -> int:
        """The session's intra-op threads (the replica's CPU share)."""
        return self.replica.threads()


@serve.deployment(max_ongoing_requests=2 * DEFAULT_MAX_BATCH_SIZE)
class OpbridgeBatchedModel:
    """A model with a batch axis (every input and output shares one symbolic first axis, as a
    batched detector export has: opbridge.export of a detector on an [N, 3, H, W] batch), whose
    replica runs the requests waiting for it together: Serve's @serve.batch gathers up to
    `max_batch_size` requests (waiting at most `batch_wait_timeout_s` for more), the replica
    concatenates each input along the first axis, runs the session once, and gives each request
    its rows of every output. A request may hold several images (its own first axis); all must
    share the other dims. Each request's answer is the one it gets alone (bit for bit: the kernels
    compute each image on its own)."""

    def __init__(self, model: str, library: str | None = None, device: str = "cpu",
                 max_batch_size: int = DEFAULT_MAX_BATCH_SIZE, batch_wait_timeout_s: float = 0.005):
        self.replica = ReplicaSession(model, library, device)
        problem = self.replica.batch_axis_problem()
        if problem:
            raise ValueError(f"opbridge.serve: {model} cannot be batched: {problem}; deploy it with max_batch_size=0")
        self._run_batch.set_max_batch_size(max_batch_size)
        self._run_batch.set_batch_wait_timeout_s(batch_wait_timeout_s)
        self.batch_sizes = []  # the rows of each run, for observing the batching

    async def __call__(self, inputs: dict) -> dict:
        result = await self._run_batch(inputs)
        if isinstance(result, Exception):  # this request's own error (see _run_batch)
            raise result
        return result

    @serve.batch(max_batch_size=DEFAULT_MAX_BATCH_SIZE, batch_wait_timeout_s=0.005)
    async def _run_batch(self, requests: list[dict]) -> list:
        """The requests' outputs, each request's rows of one run; when that run fails (a request
        of a wrong shape or type, which would fail the whole batch), each request runs alone, so
        that only a bad request gets an error (returned, raised by __call__)."""
        try:
            names = list(requests[0])
            rows = [len(np.asarray(request[names[0]])) for request in requests]
            feeds = {name: np.concatenate([np.asarray(request[name]) for request in requests]) for name in names}
            # In a worker thread, so that the next requests arrive (and form the next batch) meanwhile.
            outputs = await asyncio.to_thread(self.replica.run, feeds)
        except Exception:  # noqa: BLE001 - every request is answered below, alone
            return [await self._run_alone(request) for request in requests]
        self.batch_sizes.append(sum(rows))
        ends = np.cumsum(rows)
        return [{name: value[end - n:end] for name, value in outputs.items()} for n, end in zip(rows, ends)]

    async def _run_alone(self, request: dict):
        try:
            outputs = await asyncio.to_thread(self.replica.run, request)
        except Exception as error:  # noqa: BLE001 - ORT's error for this request
            return error
        self.batch_sizes.append(len(np.asarray(next(iter(request.values())))))
        return outputs

    def threads(self) -> int:
        return self.replica.threads()

    def runs(self) -> list[int]:
        """The rows (images) of each session run so far."""
        return list(self.batch_sizes)


def replica_gpu() -> int:
    """The CUDA device of this replica's GPU: 0, as Ray makes the replica's GPU the only one visible,
    unless RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES keeps every GPU visible."""
    if os.environ.get("RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"):
        return int(ray.get_gpu_ids()[0])
    return 0


def replica_threads() -> int:
    """The intra-op threads for this replica: its share of CPUs from Ray (at least 1)."""
    cpus = ray.get_runtime_context().get_assigned_resources().get("CPU", 1.0)
    return max(1, int(cpus))


def deploy(model, *, name: str = "opbridge", replicas: int = 1, cpus: float = 1, gpus: float = 0,
           library: str | None = None, device: str | None = None, max_batch_size: int = 0,
           batch_wait_timeout_s: float = 0.005, **options):
    """Runs an application of OpbridgeModel on the connected Ray cluster: `replicas` replicas of
    `cpus` CPUs (their session's threads) and `gpus` GPUs each (device "cuda" when gpus > 0), and
    returns its handle (no HTTP route: where deploy starts Serve, it starts it without proxies). `model` is made absolute here (the replicas read it on their nodes);
    `options` are further Serve deployment options (max_ongoing_requests, ...). When the replicas
    fail to start, the RuntimeError says why in the replicas' own words (the library or model path
    that failed), which serve.run alone leaves in serve.status().

    max_batch_size > 0 deploys OpbridgeBatchedModel: each replica runs up to that many waiting
    requests in one session run (a model with a batch axis only; the replicas refuse others)."""
    device = device or ("cuda" if gpus else "cpu")
    if device == "cuda" and not gpus:
        raise ValueError("opbridge.serve.deploy: device 'cuda' needs gpus > 0 (a replica without a GPU from Ray sees "
                         "none)")
    for taken in ("num_replicas", "ray_actor_options"):
        if taken in options:
            raise TypeError(f"opbridge.serve.deploy: {taken} comes from replicas, cpus and gpus")
    if max_batch_size < 0:
        raise ValueError(f"opbridge.serve.deploy: max_batch_size must be >= 0, got {max_batch_size}")
    resources = {"num_replicas": replicas, "ray_actor_options": {"num_cpus": cpus, "num_gpus": gpus}}
    path = str(Path(model).absolute())
    if max_batch_size:
        # A batch forms from the requests a replica holds: it must be let hold that many.
        options.setdefault("max_ongoing_requests", 2 * max_batch_size)
        application = OpbridgeBatchedModel.options(**resources, **options).bind(path, library, device, max_batch_size,
                                                                                batch_wait_timeout_s)
    else:
        application = OpbridgeModel.options(**resources, **options).bind(path, library, device)
    # The application is reached by handle only (no route): Serve needs no HTTP proxy, whose start
    # (an actor given 60 s) failed on a loaded 2-core machine. Where Serve already runs, as the user
    # started it (with its proxies), this connects to it unchanged.
    serve.start(proxy_location="Disabled")
    try:
        return serve.run(application, name=name, route_prefix=None)
    except RuntimeError as error:
        raise RuntimeError(f"{error} {_replica_error(name)}".rstrip()) from error


def _replica_error(app: str) -> str:
    """The last line of the error that stopped the app's replicas (serve.status()), or ""."""
    try:
        deployments = serve.status().applications[app].deployments.values()
    except Exception:  # noqa: BLE001 - the status is a courtesy; the original error stands
        return ""
    lines = [line for d in deployments for line in (d.message or "").splitlines() if line.strip()]
    return f"The replicas said: {lines[-1].strip()}" if lines else ""


def infer(handle, inputs: dict, retries: int = 1, method: str | None = None) -> dict:
    """Sends `inputs` through a deployment handle and waits for the outputs, sending the request
    again (at most `retries` times) when the replica running it died; other errors propagate (a
    request the model refuses raises ORT's error, wrapped by Ray)."""
    target = getattr(handle, method) if method else handle
    for attempt in range(retries + 1):
        try:
            return target.remote(inputs).result()
        except REPLICA_LOST:
            if attempt == retries:
                raise
            time.sleep(0.1 * (attempt + 1))  # let Serve drop the dead replica from its routing
    raise AssertionError("unreachable")


def throughput(handle, requests: list[dict], clients: int = 4) -> float:
    """Requests per second through `handle` from `clients` threads, each waiting for its replies."""
    from concurrent.futures import ThreadPoolExecutor

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(lambda r: infer(handle, r), requests))
    return len(requests) / (time.perf_counter() - start)
