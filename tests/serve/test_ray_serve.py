"""Ray Serve (opbridge.serve): two replicas of an exported detector on a local Ray instance.

./run.sh test runs these in .cache/venv-serve (ray[serve], onnxruntime, onnx, numpy, pytest: the
serve extra, no PyTorch) on what tests/serve/make_model.py wrote into $OPBRIDGE_SERVE_MODEL: the
demo detector (deformable convolution, grid sampler, soft-NMS, RoIAlign) and eight requests.
"""

from __future__ import annotations

import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
import ray
from ray import serve

import opbridge
from opbridge.serve import deploy, infer

REQUESTS = 240
CLIENTS = 6
KILL_AFTER = 80  # answers before one replica is killed


@pytest.fixture(scope="module")
def model_dir() -> Path:
    folder = os.environ.get("OPBRIDGE_SERVE_MODEL")
    assert folder, "OPBRIDGE_SERVE_MODEL is not set: ./run.sh test writes the model (tests/serve/make_model.py)"
    return Path(folder)


@pytest.fixture(scope="module")
def requests(model_dir) -> list[dict]:
    arrays = np.load(model_dir / "requests.npz")
    return [{"image": arrays[f"image_{k}"], "proposals": arrays[f"proposals_{k}"],
             "proposal_scores": arrays[f"scores_{k}"]} for k in range(8)]


@pytest.fixture(scope="module")
def expected(model_dir, requests) -> list[dict]:
    """Each request's outputs from a local session with one thread, as each replica has."""
    session = opbridge.create_session(str(model_dir / "detector.onnx"), intra_op_threads=1)
    names = [o.name for o in session.get_outputs()]
    return [dict(zip(names, session.run(None, r))) for r in requests]


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    serve.shutdown()
    ray.shutdown()


def _replicas(app: str) -> list[str]:
    return sorted(a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
                  if a["name"].startswith(f"SERVE_REPLICA::{app}#"))


def _deploy(model_dir, app: str, replicas: int = 2, cpus: float = 1, **kwargs):
    return deploy(model_dir / "detector.onnx", name=app, replicas=replicas, cpus=cpus, **kwargs)


def test_two_replicas_answer_every_request_as_a_local_session_even_when_one_dies(cluster, model_dir, requests,
                                                                                 expected):
    handle = _deploy(model_dir, "detector")
    assert len(_replicas("detector")) == 2
    results, lock, retried = {}, threading.Lock(), []
    killed = threading.Event()

    def send(request_id: int) -> None:
        attempts = []

        def counted(inputs):
            attempts.append(1)
            return handle.remote(inputs)

        class Counting:  # infer() with the attempts counted
            remote = staticmethod(counted)

        outputs = infer(Counting, requests[request_id % 8])
        with lock:
            assert request_id not in results, f"request {request_id} answered twice"
            results[request_id] = outputs
            if len(attempts) > 1:
                retried.append(request_id)

    def kill_one() -> None:
        """After KILL_AFTER answers, at a moment unrelated to any one answer: with 6 clients for 2
        replicas, the victim is almost always running a request."""
        while len(results) < KILL_AFTER:
            time.sleep(0.003)
        killed.victim = _replicas("detector")[0]
        ray.kill(ray.get_actor(killed.victim, namespace="serve"), no_restart=True)
        killed.set()

    killer = threading.Thread(target=kill_one)
    killer.start()
    with ThreadPoolExecutor(CLIENTS) as pool:
        list(pool.map(send, range(REQUESTS)))
    killer.join()
    assert killed.is_set()
    assert sorted(results) == list(range(REQUESTS)), "requests lost"
    for request_id, outputs in results.items():
        want = expected[request_id % 8]
        assert outputs.keys() == want.keys()
        for name in want:
            np.testing.assert_array_equal(outputs[name], want[name], err_msg=f"request {request_id}, {name}")
    # Serve replaces the killed replica.
    deadline = time.monotonic() + 180  # generous: ./run.sh runs this beside the main test lane
    while time.monotonic() < deadline and (killed.victim in _replicas("detector") or len(_replicas("detector")) < 2):
        time.sleep(0.5)
    assert killed.victim not in _replicas("detector") and len(_replicas("detector")) == 2
    print(f"\n{REQUESTS} requests from {CLIENTS} clients, one replica killed after {KILL_AFTER} answers: "
          f"{len(retried)} requests retried by the client (opbridge.serve.infer), none lost or answered twice")


def test_infer_resends_a_request_whose_replica_died_and_nothing_else():
    """opbridge.serve.infer's rule, on a stand-in handle: a lost replica's request is sent again
    (`retries` times at most), an error the model raised is not."""

    class Handle:
        def __init__(self, *failures):
            self.failures, self.calls = list(failures), 0

        def remote(self, inputs):
            self.calls += 1
            failure = self.failures.pop(0) if self.failures else None
            outer = self

            class Response:
                def result(self):
                    if failure is not None:
                        raise failure
                    return {"calls": outer.calls}

            return Response()

    died = ray.exceptions.ActorDiedError()
    assert infer(Handle(died), {}) == {"calls": 2}
    with pytest.raises(ray.exceptions.ActorDiedError):
        infer(Handle(died, died), {})
    assert infer(Handle(died, ray.exceptions.ActorUnavailableError("gone", None)), {}, retries=2) == {"calls": 3}
    model_error = ray.exceptions.RayTaskError("__call__", "Traceback: InvalidArgument", ValueError("bad input"))
    refused = Handle(model_error)
    with pytest.raises(ray.exceptions.RayTaskError):
        infer(refused, {})
    assert refused.calls == 1


def test_a_bad_request_gets_ort_s_error_and_the_replica_keeps_serving(cluster, model_dir, requests, expected):
    handle = _deploy(model_dir, "detector")
    wrong_dtype = {**requests[0], "image": requests[0]["image"].astype(np.float64)}
    with pytest.raises(ray.exceptions.RayTaskError, match=r"Unexpected input data type. Actual: \(tensor\(double\)\)"):
        infer(handle, wrong_dtype)
    wrong_shape = {**requests[0], "proposals": np.zeros((7, 5), np.float32)}
    with pytest.raises(ray.exceptions.RayTaskError, match=r"Got invalid dimensions for input: proposals"):
        infer(handle, wrong_shape)
    for k in range(4):  # the replicas keep answering
        outputs = infer(handle, requests[k])
        for name, value in expected[k].items():
            np.testing.assert_array_equal(outputs[name], value)


def test_a_replica_that_cannot_load_the_library_fails_at_start_naming_the_path(cluster, model_dir):
    # One constructor attempt each (Serve's default is 3, each a new replica process: 100 s a deployment
    # on a loaded 2-core machine): the error is the same, only sooner.
    once = {"max_constructor_retry_count": 1}
    missing = "/nonexistent/opbridge/libopbridge_ort.so"
    started = time.monotonic()
    with pytest.raises(RuntimeError, match=re.escape(f"the opbridge library {missing} does not exist on this node")):
        _deploy(model_dir, "broken", replicas=1, cpus=0, library=missing, **once)
    not_a_library = model_dir / "requests.npz"
    with pytest.raises(RuntimeError, match=re.escape(f"ONNX Runtime cannot load the opbridge library {not_a_library}")):
        _deploy(model_dir, "broken", replicas=1, cpus=0, library=str(not_a_library), **once)
    with pytest.raises(RuntimeError, match="the model /nonexistent/detector.onnx does not exist on this node"):
        deploy("/nonexistent/detector.onnx", name="broken", replicas=1, cpus=0, **once)
    assert time.monotonic() - started < 240  # at start, not at the first request (generous: a loaded machine)
    serve.delete("broken")


def test_deploy_refuses_what_cannot_work(cluster, model_dir):
    with pytest.raises(ValueError, match="device 'cuda' needs gpus > 0"):
        deploy(model_dir / "detector.onnx", device="cuda")
    with pytest.raises(TypeError, match="num_replicas comes from replicas"):
        deploy(model_dir / "detector.onnx", num_replicas=3)


def test_a_replica_s_threads_are_its_cpu_share(cluster, model_dir, requests, expected):
    serve.delete("detector")
    handle = _deploy(model_dir, "wide", replicas=1, cpus=2)
    assert handle.threads.remote().result() == 2
    outputs = infer(handle, requests[3])
    for name, value in expected[3].items():  # 2 threads: the kernels' results do not depend on the count
        np.testing.assert_array_equal(outputs[name], value)
    serve.delete("wide")


# --- batching: a detector exported on a batch of images (tests/serve/make_model.py) -------------


@pytest.fixture(scope="module")
def images(model_dir) -> np.ndarray:
    return np.load(model_dir / "images.npz")["images"]


def test_a_batched_deployment_runs_waiting_requests_together_with_the_answers_each_gets_alone(
        cluster, model_dir, images):
    """Serve's @serve.batch gathers the requests of 8 concurrent clients into shared runs of the
    batched detector's session; every request's answer is the one a local session gives it alone,
    bit for bit: requests of one image, one of two images, images with detections and without. A
    request of a wrong shape among them gets ORT's error, and only it."""
    local = opbridge.create_session(str(model_dir / "batched.onnx"), intra_op_threads=1)
    names = [o.name for o in local.get_outputs()]
    requests = [{"images": images[k:k + 1]} for k in range(len(images))] + [{"images": images[2:4]}]
    expected = [dict(zip(names, local.run(None, r))) for r in requests]
    assert {int(n) for e in expected for n in e["num_detections"]} > {0}  # some images detect objects, some not
    handle = deploy(model_dir / "batched.onnx", name="batched", replicas=1, cpus=1, max_batch_size=4,
                    batch_wait_timeout_s=0.05)
    bad = {"images": images[:1, :2]}  # two channels
    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(infer, handle, r) for r in requests[:4]]
        refused = pool.submit(infer, handle, bad)  # sent among the others: batched with some of them
        futures += [pool.submit(infer, handle, r) for r in requests[4:]]
        answers = [f.result() for f in futures]
        with pytest.raises(ray.exceptions.RayTaskError, match="Got invalid dimensions for input: images"):
            refused.result()
    for k, (answer, want) in enumerate(zip(answers, expected)):
        assert answer.keys() == want.keys()
        for name in want:
            np.testing.assert_array_equal(answer[name], want[name], err_msg=f"request {k}, {name}")
    runs = handle.runs.remote().result()
    assert sum(runs) >= sum(len(r["images"]) for r in requests)
    assert max(runs) > 1, f"no two requests shared a run: {runs}"
    print(f"\n{len(requests)} requests ({sum(len(r['images']) for r in requests)} images) from 8 clients: "
          f"{len(runs)} session runs of {sorted(runs)} images")
    serve.delete("batched")


def test_a_model_without_a_batch_axis_is_refused_batching(cluster, model_dir):
    with pytest.raises(RuntimeError, match=r"cannot be batched: the first axis of input 'image' is fixed at 1; dynamic batching needs one "
                                           r"shared symbolic first axis on every input and output"):
        deploy(model_dir / "detector.onnx", name="unbatchable", replicas=1, cpus=0, max_batch_size=4)
    with pytest.raises(ValueError, match="max_batch_size must be >= 0"):
        deploy(model_dir / "detector.onnx", max_batch_size=-1)
    serve.delete("unbatchable")
