"""The bad-input tables the multi-level RoI nodes share (opbridge::MultiLevelRoiAlign and
opbridge::MultiLevelRotatedRoiAlign, and their mmdeploy identities): the level mapping's
attributes, the output size, the feature maps and their count. Each op's test file adds its RoI
layout. (Missing attributes, attributes of another kind, the mode attributes' allowed values and the
inputs' dtypes are test_conformance.py's.)"""

from __future__ import annotations

import onnx
from onnx import helper

from graphs import one_node_model, run_error, session_error

NAN, INF = float("nan"), float("inf")


def bad_attribute_cases() -> list[tuple[dict, str]]:
    """(attributes over featmap_strides=[4, 8], the message) for every attribute rule."""
    return [
        (dict(featmap_strides=[4.0, -8.0]), "featmap_strides[1] must be a finite number > 0, got -8"),
        (dict(featmap_strides=[4.0, NAN]), "featmap_strides[1] must be a finite number > 0, got nan"),
        (dict(featmap_strides=[4.0, 1e-40]),
         "featmap_strides[1] = 9.99995e-41 is too small: 1 / stride must be a finite float"),
        (dict(featmap_strides=[4.0] * 11),
         "featmap_strides lists 11 strides; at most 10 feature maps are supported (the TensorRT plugin's limit)"),
        (dict(finest_scale=0), "finest_scale must be >= 1, got 0"),
        (dict(roi_scale_factor=INF), "roi_scale_factor must be a finite number (<= 0: boxes as given), got inf"),
        (dict(roi_scale_factor=NAN), "roi_scale_factor must be a finite number (<= 0: boxes as given), got nan"),
        (dict(output_height=0), "output_height and output_width must be >= 1, got 0 and 7"),
        (dict(output_width=2**32 + 1), "output_height and output_width must be <= 2^20 each and their product <= 2^31"),
    ]


def check_bad_attribute(identity: str, attrs: dict, message: str) -> None:
    full = dict(featmap_strides=[4.0, 8.0])
    full.update(attrs)
    full = {k: v for k, v in full.items() if v is not None}
    error = session_error(one_node_model(identity, full, ["rois", "f0", "f1"], ["output"]))
    assert f"{identity}: " in error and message in error


def check_empty_stride_list(identity: str) -> None:
    model = one_node_model(identity, {}, ["rois", "f0"], ["output"])
    empty = helper.make_attribute("featmap_strides", [], attr_type=onnx.AttributeProto.FLOATS)
    model.graph.node[0].attribute.append(empty)
    message = session_error(model)
    assert f"{identity}: featmap_strides must list one stride per feature map, got none" in message


def check_feature_map_rules(identity: str, model_of, feeds_of, pyramid, rois) -> None:
    """The feature maps' shape rules and their count against the strides. model_of(levels, identity,
    strides=...) makes the node; feeds_of(features, rois) its feeds; pyramid(levels) maps
    [2, 3, 64 >> l, 80 >> l]."""
    features = pyramid(2)
    model = model_of(2, identity)
    cases = [
        (feeds_of([features[0], features[1][:, :2]], rois),
         "feature map 1 has shape [2, 2, 32, 40]; every map must have the N and C of map 0, [2, 3, 64, 80]"),
        (feeds_of([features[0], features[1][:1]], rois),
         "feature map 1 has shape [1, 3, 32, 40]; every map must have the N and C of map 0, [2, 3, 64, 80]"),
        (feeds_of([features[0], features[1][0]], rois),
         "feature map 1 must have rank 4 [N, C, H, W], got shape [3, 32, 40]"),
    ]
    for feeds, message in cases:
        assert f"{identity}: {message}" in run_error(model, feeds)
    three = model_of(3, identity, strides=[4.0, 8.0])
    assert (f"{identity}: the node has 3 feature maps but featmap_strides lists 2 strides; they must agree "
            "(one stride per map)") in run_error(three, feeds_of(pyramid(3), rois))
    one = model_of(1, identity, strides=[4.0, 8.0])
    assert (f"{identity}: the node has 1 feature maps but featmap_strides lists 2 strides"
            in run_error(one, feeds_of(pyramid(1), rois)))
