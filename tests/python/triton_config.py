"""Triton's own model configuration schema for the tests: model_config_pb2, the compiled
model_config.proto the tritonclient package carries. ./run.sh setup installs tritonclient (without
its dependencies, which only its network clients need) into .cache/tritonclient-<version>; the
module is loaded from its file, as importing the tritonclient.grpc package would import grpc."""

from __future__ import annotations

import importlib.util

from google.protobuf import text_format

from conftest import REPO

_MODULE = None


def model_config_pb2():
    global _MODULE
    if _MODULE is None:
        # The version is run.sh's (TRITONCLIENT_VERSION): the newest installed one.
        def version(path):
            return tuple(int(part) for part in path.parents[2].name.split("-", 1)[1].split(".") if part.isdigit())

        found = sorted((REPO / ".cache").glob("tritonclient-*/tritonclient/grpc/model_config_pb2.py"), key=version)
        assert found, f"no {REPO / '.cache'}/tritonclient-*: ./run.sh setup installs tritonclient there"
        path = found[-1]
        spec = importlib.util.spec_from_file_location("triton_model_config_pb2", path)
        _MODULE = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_MODULE)
    return _MODULE


def parse(text: str):
    """config.pbtxt's text as Triton reads it (a ModelConfig); raises on anything the schema lacks."""
    return text_format.Parse(text, model_config_pb2().ModelConfig())


def check_entry(entry, session_values) -> None:
    """Asserts that a written entry parses with Triton's schema and says what the session says: the
    platform, every input and output with its type and dims, the library."""
    config = parse((entry.folder / "config.pbtxt").read_text())
    assert config.name == entry.folder.name
    assert config.platform == "onnxruntime_onnx"
    assert (entry.folder / "1" / "model.onnx").is_file()
    assert list(config.model_operations.op_library_filename) == [entry.config.split('op_library_filename: "')[1]
                                                                  .split('"')[0]]
    pb = model_config_pb2()
    skip = 1 if config.max_batch_size > 0 else 0
    for kind, tensors in (("input", config.input), ("output", config.output)):
        values = [v for v in session_values if v.kind == kind]
        assert [t.name for t in tensors] == [v.name for v in values]
        for t, v in zip(tensors, values):
            assert pb.DataType.Name(t.data_type) == {"tensor(float)": "TYPE_FP32", "tensor(int64)": "TYPE_INT64",
                                                    "tensor(int32)": "TYPE_INT32", "tensor(uint8)": "TYPE_UINT8",
                                                    "tensor(bool)": "TYPE_BOOL"}[v.type]
            expected = [d if isinstance(d, int) else -1 for d in v.shape[skip:]] or [1]
            assert list(t.dims) == expected, (t.name, list(t.dims), v.shape)
