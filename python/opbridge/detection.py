"""torchvision's detectors on a batch of images: one graph for N images, outputs padded per image.

torchvision's detection models take a list of images and post-process each image in a Python loop,
so an export carries one copy of the loop body per example image and the batch size is baked in.
``BatchedDetector`` runs the same model (its transform, backbone, heads and thresholds, read at
every call) on a batch ``[N, 3, H, W]`` of images of one size, with every per-image step done for
all images at once:

* the kept candidates of all images are one flat list with each one's image index, and NMS runs
  once with the image in the category (opbridge::BatchedNms: ``image * classes + label``), so one
  image's boxes never suppress another's;
* "the first k of each image" (RPN's post_nms_top_n, detections_per_img) is each kept candidate's
  rank within its image (a cumulative count over the candidates in descending score order);
* RoIAlign pools every image's RoIs in one opbridge::MultiScaleRoiAlign node (their batch index);
* the outputs are padded to K = the model's detections_per_img rows per image.

No loop over images and no If or Loop node: N is a dynamic axis of one file. Outputs (layout
"torchvision", the default), in this order:

    boxes [N, K, 4] float32        (x1, y1, x2, y2) in the input image's pixels
    scores [N, K] float32
    labels [N, K] int64            torchvision's labels (0 is the background, never output)
    masks [N, K, 1, H, W] float32  Mask R-CNN: the pasted mask probabilities
    keypoints [N, K, 17, 3]        Keypoint R-CNN: (x, y, 1)
    keypoints_scores [N, K, 17]    Keypoint R-CNN
    num_detections [N] int64       how many of image i's K rows are detections

Row k < num_detections[i] of image i is torchvision's k-th detection of ``model([images[i]])``
(descending score). Padding rows are zeros (boxes, scores, masks, keypoints) with label -1.

Layout "mmdeploy" writes mmdeploy's detection outputs instead: ``dets [N, K, 5]`` (x1, y1, x2, y2,
score), ``labels [N, K]`` and, for Mask R-CNN, ``masks [N, K, H, W]``, padded as above (score 0,
label -1), followed by ``num_detections [N]``, which mmdeploy lacks (its consumers drop rows by
score). Keypoint R-CNN has no mmdeploy layout.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import torch
import torch.nn.functional as F
import torchvision
from torch import Tensor
from torchvision.models.detection import FCOS, RetinaNet, transform
from torchvision.models.detection.backbone_utils import BackboneWithFPN
from torchvision.models.detection.ssd import SSD
from torchvision.models.detection.generalized_rcnn import GeneralizedRCNN
from torchvision.models.detection.image_list import ImageList
from torchvision.models.detection.rpn import concat_box_prediction_layers
from torchvision.ops import boxes as box_ops
from torchvision.ops import poolers
from torchvision.ops.feature_pyramid_network import FeaturePyramidNetwork

from opbridge.ops.heatmaps_to_keypoints import heatmaps_to_keypoints
from opbridge.ops.multi_scale_roi_align import multi_scale_roi_align, pooler_arguments
from opbridge.ops.nms import batched_nms
from opbridge.ops.paste_masks import paste_masks

LAYOUTS = ("torchvision", "mmdeploy")
BATCH_AXIS = "batch"
PAD_LABEL = -1


def is_detector(model) -> bool:
    """Whether `model` is one of torchvision's detectors BatchedDetector takes."""
    return isinstance(model, (GeneralizedRCNN, RetinaNet, FCOS, SSD))


class BatchedDetector(torch.nn.Module):
    """A torchvision detector (Faster, Mask or Keypoint R-CNN, RetinaNet, FCOS, SSD, SSDlite) on a
    batch of images [N, 3, H, W]; see the module docstring for what it computes and returns.

    The detector is shared, not copied: its thresholds and sizes are read at each call.
    ``reference()`` is the same model run by torchvision image by image, padded the same way: what
    ``opbridge.verify`` compares the export with.
    """

    def __init__(self, detector: torch.nn.Module, layout: str = "torchvision"):
        super().__init__()
        if not is_detector(detector):
            raise TypeError(f"BatchedDetector takes one of torchvision's detectors (Faster, Mask or Keypoint R-CNN, "
                            f"RetinaNet, FCOS, SSD, SSDlite), got {type(detector).__name__}")
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
        if layout == "mmdeploy" and _has_keypoints(detector):
            raise ValueError("layout 'mmdeploy': mmdeploy has no output layout for keypoints; use 'torchvision'")
        self.detector = detector
        self.layout = layout
        # A new module is in training mode, and exporters restore the mode they found, recursively:
        # the wrapper takes the detector's.
        self.train(detector.training)

    @property
    def detections_per_image(self) -> int:
        return _detections_per_image(self.detector)

    @property
    def output_names(self) -> list[str]:
        names = ["boxes", "scores", "labels"] if self.layout == "torchvision" else ["dets", "labels"]
        if _has_masks(self.detector):
            names.append("masks")
        if _has_keypoints(self.detector):
            names += ["keypoints", "keypoints_scores"]
        return names + ["num_detections"]

    def forward(self, images: Tensor) -> dict[str, Tensor]:
        check_images(images)
        if self.detector.training:
            raise ValueError("BatchedDetector runs a detector in eval mode (call .eval() first)")
        if isinstance(self.detector, GeneralizedRCNN):
            found = _rcnn(self.detector, images)
        elif isinstance(self.detector, (RetinaNet, FCOS)):
            found = _dense(self.detector, images)
        else:
            found = _ssd(self.detector, images)
        return self._layout(found)

    def reference(self, memoize: bool = False) -> "PerImageReference":
        """torchvision's own model run on each image, padded as forward() pads. memoize: each
        distinct image (by its bytes) runs once, for as long as the reference lives, which assumes
        that the model does not change meanwhile (verify's batches repeat the example's images)."""
        return PerImageReference(self, memoize)

    def _layout(self, found: dict[str, Tensor]) -> dict[str, Tensor]:
        if self.layout == "torchvision":
            return found
        out = {"dets": torch.cat([found["boxes"], found["scores"][..., None]], dim=-1), "labels": found["labels"]}
        if "masks" in found:
            out["masks"] = found["masks"].squeeze(2)
        out["num_detections"] = found["num_detections"]
        return out

    def output_shapes(self, batch: str | int, height: str | int, width: str | int) -> dict[str, list]:
        """The outputs' dims (a name where dynamic) for images [batch, 3, height, width]."""
        k = self.detections_per_image
        shapes = {"boxes": [k, 4], "scores": [k], "labels": [k], "dets": [k, 5],
                  "masks": [k, 1, height, width] if self.layout == "torchvision" else [k, height, width],
                  "keypoints": [k, _num_keypoints(self.detector), 3], "keypoints_scores": [k, _num_keypoints(self.detector)],
                  "num_detections": []}
        return {name: [batch] + shapes[name] for name in self.output_names}


class PerImageReference(torch.nn.Module):
    """The eager reference of a BatchedDetector: ``detector([image])`` for each image of the batch
    (torchvision's code, image by image), padded to the batched outputs' layout."""

    def __init__(self, batched: BatchedDetector, memoize: bool = False):
        super().__init__()
        self.batched = batched
        self.memo = {} if memoize else None

    def detect(self, image: Tensor) -> dict[str, Tensor]:
        """torchvision's detections for one image [3, H, W]."""
        if self.memo is None:
            return self.batched.detector([image])[0]
        key = (tuple(image.shape), str(image.dtype), str(image.device),
               hashlib.sha1(image.detach().cpu().contiguous().numpy().tobytes()).hexdigest())
        if key not in self.memo:
            self.memo[key] = self.batched.detector([image])[0]
        return self.memo[key]

    def forward(self, images: Tensor) -> dict[str, Tensor]:
        check_images(images)
        k = self.batched.detections_per_image
        detector = self.batched.detector
        results = [self.detect(image) for image in images]
        height, width = images.shape[-2:]
        keys = {"boxes": ((4,), 0.0), "scores": ((), 0.0), "labels": ((), PAD_LABEL)}
        if _has_masks(detector):
            keys["masks"] = ((1, height, width), 0.0)
        if _has_keypoints(detector):
            keys["keypoints"] = ((_num_keypoints(detector), 3), 0.0)
            keys["keypoints_scores"] = ((_num_keypoints(detector),), 0.0)
        found = {}
        for key, (shape, fill) in keys.items():
            dtype = torch.int64 if key == "labels" else images.dtype
            padded = torch.full((len(results), k) + tuple(shape), fill, dtype=dtype, device=images.device)
            for i, result in enumerate(results):
                rows = result[key][:k]
                padded[i, :len(rows)] = rows
            found[key] = padded
        found["num_detections"] = torch.tensor([min(len(r["boxes"]), k) for r in results], dtype=torch.int64,
                                               device=images.device)
        return self.batched._layout(found)


def check_images(images) -> None:
    """The input BatchedDetector takes: one float tensor [N, 3, H, W] with N >= 1."""
    if not isinstance(images, Tensor) or images.dim() != 4:
        what = f"a tensor of shape {list(images.shape)}" if isinstance(images, Tensor) else type(images).__name__
        raise ValueError(f"a batched detector takes images as one tensor [N, 3, H, W] (images of one size); got {what}. "
                         "Images of different sizes: resize or pad them to one size first, or export the "
                         "single-image model (a list of [3, H, W] images)")
    if not images.is_floating_point():
        raise TypeError(f"images must be floating point (in [0, 1]), got {images.dtype}")
    if not torch.jit.is_tracing() and not torch.compiler.is_compiling():
        if images.shape[1] != 3:
            raise ValueError(f"images must have 3 channels (RGB), got {images.shape[1]} in [N, C, H, W] = "
                             f"{list(images.shape)}")
        if images.shape[0] == 0:
            raise ValueError("a batch of 0 images: give at least one image")


# --- the pieces every family shares ------------------------------------------------------------


def _transform(t: transform.GeneralizedRCNNTransform, images: Tensor) -> tuple[Tensor, tuple, tuple]:
    """GeneralizedRCNNTransform on a batch of images of one size: normalize, resize every image by
    the same factor (torchvision's _resize_image_and_masks on the batch, one interpolation), pad
    to a multiple of size_divisible. Returns (batch, resized size, original size)."""
    original_size = images.shape[-2:]
    images = t.normalize(images)
    size = scale_factor = recompute = None
    if t.fixed_size is not None:
        size = [t.fixed_size[1], t.fixed_size[0]]
    else:
        self_min, self_max = float(t.min_size[-1]), float(t.max_size)
        if torchvision._is_tracing():  # torchvision's tracing path: the factor is a traced tensor
            shape = transform._get_shape_onnx(images)
            scale = torch.min(self_min / torch.min(shape).to(torch.float32), self_max / torch.max(shape).to(torch.float32))
            scale_factor = transform._fake_cast_onnx(scale)
        else:
            scale_factor = min(self_min / min(original_size), self_max / max(original_size))
        recompute = True
    images = F.interpolate(images, size=size, scale_factor=scale_factor, mode="bilinear",
                           recompute_scale_factor=recompute, align_corners=False)
    image_size = images.shape[-2:]
    stride = t.size_divisible
    if torchvision._is_tracing():
        shape = transform._get_shape_onnx(images)
        padded = (torch.ceil(shape.to(torch.float32) / stride) * stride).to(torch.int64)
        pad = (0, padded[1] - shape[1], 0, padded[0] - shape[0])
    else:
        pad = (0, -(-image_size[1] // stride) * stride - image_size[1], 0, -(-image_size[0] // stride) * stride - image_size[0])
    return F.pad(images, pad), image_size, original_size


def _features(model, batch: Tensor) -> OrderedDict:
    backbone = model.backbone
    if isinstance(backbone, BackboneWithFPN) and isinstance(backbone.fpn, FeaturePyramidNetwork):
        return _pyramid(backbone.fpn, backbone.body(batch), batch, model.transform.size_divisible)
    features = backbone(batch)
    return OrderedDict([("0", features)]) if isinstance(features, Tensor) else features


def _pyramid(fpn: FeaturePyramidNetwork, x: OrderedDict, batch: Tensor, size_divisible: int) -> OrderedDict:
    """FeaturePyramidNetwork.forward, whose top-down path doubles each level with a nearest resize
    to the next level's size. Where that size is always exactly twice the level's (the levels halve
    the padded image, whose size is a multiple of the coarsest level's stride), the resize doubles
    with a scale factor of 2 instead, the same values: the exporters then write constant scales, not
    sizes computed from the batch's shape at run time, and ORT fuses the resize and the addition into
    its convolutions (5-7 % of a batched Faster R-CNN's time on the CPU)."""
    names, x = list(x.keys()), list(x.values())
    doubling = _doubles(x, batch, size_divisible)
    last_inner = fpn.get_result_from_inner_blocks(x[-1], -1)
    results = [fpn.get_result_from_layer_blocks(last_inner, -1)]
    for idx in range(len(x) - 2, -1, -1):
        inner_lateral = fpn.get_result_from_inner_blocks(x[idx], idx)
        if doubling:
            inner_top_down = F.interpolate(last_inner, scale_factor=2.0, mode="nearest")
        else:
            inner_top_down = F.interpolate(last_inner, size=inner_lateral.shape[-2:], mode="nearest")
        last_inner = inner_lateral + inner_top_down
        results.insert(0, fpn.get_result_from_layer_blocks(last_inner, idx))
    if fpn.extra_blocks is not None:
        results, names = fpn.extra_blocks(results, x, names)
    return OrderedDict(zip(names, results))


def _doubles(levels: list[Tensor], batch: Tensor, size_divisible: int) -> bool:
    """Whether each level is exactly twice the next at every image size the transform makes: in the
    example (its sizes), and the coarsest level's stride divides size_divisible, so that every
    padded size halves evenly down to it."""
    sizes = [[_example_size(d) for d in level.shape[-2:]] for level in levels]
    side = [_example_size(d) for d in batch.shape[-2:]]
    if any(s % (2 * t) or s // t != 2 for a, b in zip(sizes, sizes[1:]) for s, t in zip(a, b)):
        return False
    if any(s % t for s, t in zip(side, sizes[-1])):
        return False
    stride = side[0] // sizes[-1][0]
    return stride == side[1] // sizes[-1][1] and size_divisible % stride == 0


def _example_size(d) -> int:
    """A size's value in the example: a traced size (legacy exporter) or a symbolic one (dynamo) too."""
    if isinstance(d, torch.SymInt):
        return d.node.hint
    return int(d)


def _anchors(anchor_generator, batch: Tensor, image_size, features: list[Tensor]) -> Tensor:
    """The anchors of one image: every image of the batch has the same."""
    return anchor_generator(ImageList(batch, [(image_size[0], image_size[1])]), features)[0]


def _image_index(num_images, per_image: int | Tensor, device) -> Tensor:
    """[num_images * per_image]: 0, ..., 0, 1, ..., 1, ...: the image of each element of a flattened
    [num_images, per_image] tensor."""
    return torch.arange(num_images, device=device)[:, None].expand(num_images, per_image).reshape(-1)


# An upper bound for the count of a data-dependent selection (proposals, detections). torch.export
# gives such counts the range [0, 2^63 - 1], and a tensor sized count x classes then has a bound
# past int64 that the dynamo exporter fails to write (its runtime check of the bound).
MAX_COUNT = 2**31 - 1


def _bound_count(selection: Tensor) -> None:
    if not torch.jit.is_tracing():  # (the legacy exporter's sizes are tensors, and unbounded)
        torch._check(selection.shape[0] <= MAX_COUNT)


class _FirstPerImage:
    """The first `capacity` of each image's kept candidates, and the padded [N, capacity] layout.

    `image` holds the image of each kept candidate, in descending score order (as BatchedNms
    returns them). A candidate's rank in its image is the count of its image's candidates up to
    it. ``chosen`` indexes the candidates within capacity in (image, rank) order, as torchvision's
    per-image lists would concatenate them; ``pad(x)`` lays x (one row per chosen candidate) out as
    [N, capacity, ...], padding with `fill`."""

    def __init__(self, image: Tensor, num_images, capacity: int):
        member = (image[:, None] == torch.arange(num_images, device=image.device)[None, :]).to(torch.int64)
        rank = member.cumsum(0).gather(1, image[:, None]).squeeze(1) - 1
        within = rank < capacity
        slots = num_images * capacity
        slot = (image * capacity + rank)[within]
        kept = image.shape[0]
        table = torch.full((slots,), kept, dtype=torch.int64, device=image.device)
        table = table.scatter(0, slot, torch.arange(kept, device=image.device)[within])
        occupied = table < kept
        self.chosen = table[occupied]
        # Where each slot's row lies among the chosen (the chosen count: the padding row).
        position = occupied.to(torch.int64).cumsum(0) - 1
        self.table = torch.where(occupied, position, self.chosen.shape[0])
        self.count = occupied.reshape(-1, capacity).to(torch.int64).sum(1)
        self.capacity = capacity

    def pad(self, x: Tensor, fill: float | int = 0) -> Tensor:
        padding = torch.full((1,) + tuple(x.shape[1:]), fill, dtype=x.dtype, device=x.device)
        padded = torch.cat([x, padding])[self.table]
        return padded.reshape((-1, self.capacity) + tuple(x.shape[1:]))


def _detections(first: _FirstPerImage, boxes: Tensor, scores: Tensor, labels: Tensor) -> dict[str, Tensor]:
    return {"boxes": first.pad(boxes), "scores": first.pad(scores), "labels": first.pad(labels, PAD_LABEL)}


def _not_small(boxes: Tensor, min_size: float) -> Tensor:
    """torchvision's remove_small_boxes as a mask."""
    return ((boxes[:, 2] - boxes[:, 0]) >= min_size) & ((boxes[:, 3] - boxes[:, 1]) >= min_size)


# --- Faster, Mask and Keypoint R-CNN -----------------------------------------------------------


def _rcnn(model: GeneralizedRCNN, images: Tensor) -> dict[str, Tensor]:
    batch, image_size, original_size = _transform(model.transform, images)
    num_images = batch.shape[0]
    features = _features(model, batch)
    proposals, proposal_image = _proposals(model.rpn, batch, image_size, features)
    heads = model.roi_heads
    rois = torch.cat([proposal_image[:, None].to(proposals.dtype), proposals], dim=1)
    box_features = heads.box_head(_pool(heads.box_roi_pool, features, rois, image_size))
    class_logits, box_regression = heads.box_predictor(box_features)

    # RoIHeads.postprocess_detections for all images: every (proposal, class) but the background.
    num_classes = class_logits.shape[-1]
    boxes = heads.box_coder.decode_single(box_regression, proposals).reshape(proposals.shape[0], -1, 4)
    boxes = box_ops.clip_boxes_to_image(boxes, image_size)[:, 1:].reshape(-1, 4)
    scores = F.softmax(class_logits, -1)[:, 1:].reshape(-1)
    labels = torch.arange(1, num_classes, device=boxes.device)[None, :].expand(proposals.shape[0], num_classes - 1).reshape(-1)
    image = proposal_image[:, None].expand(proposals.shape[0], num_classes - 1).reshape(-1)
    candidates = torch.where((scores > heads.score_thresh) & _not_small(boxes, 1e-2))[0]
    boxes, scores, labels, image = boxes[candidates], scores[candidates], labels[candidates], image[candidates]
    keep = batched_nms(boxes, scores, image * num_classes + labels, heads.nms_thresh)
    first = _FirstPerImage(image[keep], num_images, heads.detections_per_img)
    chosen = keep[first.chosen]
    boxes, scores, labels, image = boxes[chosen], scores[chosen], labels[chosen], image[chosen]
    rois = torch.cat([image[:, None].to(boxes.dtype), boxes], dim=1)  # the detections, for the mask and keypoint heads

    found = _detections(first, transform.resize_boxes(boxes, image_size, original_size), scores, labels)
    if heads.has_mask():
        mask_logits = heads.mask_predictor(heads.mask_head(_pool(heads.mask_roi_pool, features, rois, image_size)))
        masks = mask_logits.sigmoid()[torch.arange(labels.shape[0], device=labels.device), labels][:, None]
        # Padded before pasting, not after: a zero mask pastes as zeros wherever its (zero) box is,
        # and the full-size masks (2.56 MB each at 800 x 800) are written once instead of three
        # times (the pasted rows, a padding row appended, the gather).
        small = first.pad(masks)  # [N, K, 1, M, M]
        pasted = paste_masks(small.reshape((-1,) + tuple(masks.shape[1:])), found["boxes"].reshape(-1, 4),
                             (original_size[0], original_size[1]))
        found["masks"] = pasted.reshape(tuple(small.shape[:2]) + tuple(pasted.shape[1:]))
    if heads.has_keypoint():
        keypoint_logits = heads.keypoint_predictor(
            heads.keypoint_head(_pool(heads.keypoint_roi_pool, features, rois, image_size)))
        keypoints, keypoint_scores = heatmaps_to_keypoints(keypoint_logits, boxes)
        found["keypoints"] = first.pad(transform.resize_keypoints(keypoints, image_size, original_size))
        found["keypoints_scores"] = first.pad(keypoint_scores)
    found["num_detections"] = first.count
    return found


def _proposals(rpn, batch: Tensor, image_size, features: OrderedDict) -> tuple[Tensor, Tensor]:
    """RegionProposalNetwork.forward and filter_proposals for all images: the proposals [R, 4] of
    every image, image after image, and the image of each."""
    features = list(features.values())
    num_images = batch.shape[0]
    objectness, deltas = rpn.head(features)
    anchors = _anchors(rpn.anchor_generator, batch, image_size, features)
    num_anchors_per_level = [o[0].shape[0] * o[0].shape[1] * o[0].shape[2] for o in objectness]
    objectness, deltas = concat_box_prediction_layers(objectness, deltas)
    proposals = rpn.box_coder.decode_single(deltas.detach(), anchors.repeat(num_images, 1)).reshape(num_images, -1, 4)

    objectness = objectness.detach().reshape(num_images, -1)
    levels = torch.cat([torch.full((n,), level, dtype=torch.int64, device=batch.device)
                        for level, n in enumerate(num_anchors_per_level)])
    top = rpn._get_top_n_idx(objectness, num_anchors_per_level)  # [N, P], the top of each level
    rows = torch.arange(num_images, device=batch.device)[:, None]
    scores = torch.sigmoid(objectness[rows, top]).reshape(-1)
    levels = levels[top].reshape(-1)
    boxes = box_ops.clip_boxes_to_image(proposals[rows, top], image_size).reshape(-1, 4)
    image = _image_index(num_images, top.shape[1], batch.device)
    candidates = torch.where(_not_small(boxes, rpn.min_size) & (scores >= rpn.score_thresh))[0]
    boxes, scores, levels, image = boxes[candidates], scores[candidates], levels[candidates], image[candidates]
    keep = batched_nms(boxes, scores, image * len(num_anchors_per_level) + levels, rpn.nms_thresh)
    chosen = keep[_FirstPerImage(image[keep], num_images, rpn.post_nms_top_n()).chosen]
    _bound_count(chosen)
    return boxes[chosen], image[chosen]


def _pool(pool: poolers.MultiScaleRoIAlign, features: OrderedDict, rois: Tensor, image_size) -> Tensor:
    """torchvision's MultiScaleRoIAlign on RoIs (image index, x1, y1, x2, y2) of every image."""
    x = poolers._filter_input(features, pool.featmap_names)
    if pool.scales is None or pool.map_levels is None:  # its first call: as torchvision's forward does
        pool.scales, pool.map_levels = poolers._setup_scales(x, [(int(image_size[0]), int(image_size[1]))],
                                                             pool.canonical_scale, pool.canonical_level)
    return multi_scale_roi_align(x, rois, *pooler_arguments(x, pool.output_size, pool.sampling_ratio, pool.scales,
                                                            pool.map_levels))


# --- RetinaNet and FCOS ------------------------------------------------------------------------


def _dense(model, images: Tensor) -> dict[str, Tensor]:
    """RetinaNet's and FCOS's forward and postprocess_detections for all images."""
    batch, image_size, original_size = _transform(model.transform, images)
    num_images = batch.shape[0]
    features = list(_features(model, batch).values())
    head = model.head(features)
    anchors = _anchors(model.anchor_generator, batch, image_size, features)
    spatial = [f.shape[2] * f.shape[3] for f in features]
    per_location = head["cls_logits"].shape[1] // sum(spatial)
    per_level = [n * per_location for n in spatial]
    fcos = isinstance(model, FCOS)
    all_boxes, all_scores, all_labels, all_valid = [], [], [], []
    for level, (logits, regression, level_anchors) in enumerate(zip(
            head["cls_logits"].split(per_level, 1), head["bbox_regression"].split(per_level, 1), anchors.split(per_level))):
        num_classes = logits.shape[-1]
        probabilities = torch.sigmoid(logits)
        if fcos:
            probabilities = torch.sqrt(probabilities * torch.sigmoid(head["bbox_ctrness"].split(per_level, 1)[level]))
        scores = probabilities.flatten(1)  # [N, anchors * classes]
        top, top_scores, valid = top_above(scores, model.score_thresh, model.topk_candidates)
        anchor_index = torch.div(top, num_classes, rounding_mode="floor")
        rows = torch.arange(num_images, device=batch.device)[:, None]
        codes, reference = regression[rows, anchor_index].reshape(-1, 4), level_anchors[anchor_index].reshape(-1, 4)
        if fcos:
            boxes = model.box_coder.decode(codes, reference)
        else:
            boxes = model.box_coder.decode_single(codes, reference)
        all_boxes.append(box_ops.clip_boxes_to_image(boxes, image_size).reshape(num_images, -1, 4))
        all_scores.append(top_scores)
        all_labels.append(top % num_classes)
        all_valid.append(valid)
    return _nms_and_pad(model, num_images, image_size, original_size, torch.cat(all_boxes, 1), torch.cat(all_scores, 1),
                        torch.cat(all_labels, 1), torch.cat(all_valid, 1), num_classes)


def top_above(scores: Tensor, threshold: float, k: int) -> tuple[Tensor, Tensor, Tensor]:
    """torchvision's "the top k of the scores above the threshold" along the last axis, for every
    row at once: the top k of all scores with those below the threshold out of the way (the same
    set, in the same order). Returns their indices, their scores, and which are above it (a row
    with fewer than k above fills up with others)."""
    above = scores > threshold
    ranked = torch.where(above, scores, torch.full_like(scores, -1.0))
    top = ranked.topk(torchvision.models.detection._utils._topk_min(ranked, k, -1), dim=-1)[1]
    return top, scores.gather(-1, top), above.gather(-1, top)


def _nms_and_pad(model, num_images, image_size, original_size, boxes, scores, labels, valid, num_classes):
    """The candidates [N, T] of every image -> NMS per image and class -> the first
    detections_per_img of each image, padded."""
    image = _image_index(num_images, boxes.shape[1], boxes.device)
    candidates = torch.where(valid.reshape(-1))[0]
    boxes, scores = boxes.reshape(-1, 4)[candidates], scores.reshape(-1)[candidates]
    labels, image = labels.reshape(-1)[candidates], image[candidates]
    keep = batched_nms(boxes, scores, image * num_classes + labels, model.nms_thresh)
    first = _FirstPerImage(image[keep], num_images, model.detections_per_img)
    chosen = keep[first.chosen]
    found = _detections(first, transform.resize_boxes(boxes[chosen], image_size, original_size), scores[chosen],
                        labels[chosen])
    found["num_detections"] = first.count
    return found


# --- SSD and SSDlite ---------------------------------------------------------------------------


def _ssd(model: SSD, images: Tensor) -> dict[str, Tensor]:
    """SSD's forward and postprocess_detections for all images: per class, the top-k scores above
    the threshold of each image."""
    batch, image_size, original_size = _transform(model.transform, images)
    num_images = batch.shape[0]
    features = list(_features(model, batch).values())
    head = model.head(features)
    anchors = _anchors(model.anchor_generator, batch, image_size, features)
    num_anchors = anchors.shape[0]
    boxes = model.box_coder.decode_single(head["bbox_regression"].reshape(-1, 4), anchors.repeat(num_images, 1))
    boxes = box_ops.clip_boxes_to_image(boxes, image_size).reshape(num_images, num_anchors, 4)
    probabilities = F.softmax(head["cls_logits"], dim=-1)
    num_classes = probabilities.shape[-1]
    scores = probabilities[:, :, 1:].transpose(1, 2)  # [N, classes - 1, anchors]: class after class
    top, top_scores, valid = top_above(scores, model.score_thresh, model.topk_candidates)
    rows = torch.arange(num_images, device=batch.device)[:, None, None]
    labels = torch.arange(1, num_classes, device=batch.device)[None, :, None].expand_as(top)
    return _nms_and_pad(model, num_images, image_size, original_size, boxes[rows, top].reshape(num_images, -1, 4),
                        top_scores.reshape(num_images, -1), labels.reshape(num_images, -1),
                        valid.reshape(num_images, -1), num_classes)


# --- what the families have --------------------------------------------------------------------


def _detections_per_image(model) -> int:
    return model.roi_heads.detections_per_img if isinstance(model, GeneralizedRCNN) else model.detections_per_img


def _has_masks(model) -> bool:
    return isinstance(model, GeneralizedRCNN) and model.roi_heads.has_mask()


def _has_keypoints(model) -> bool:
    return isinstance(model, GeneralizedRCNN) and model.roi_heads.has_keypoint()


def _num_keypoints(model) -> int:
    return model.roi_heads.keypoint_predictor.kps_score_lowres.out_channels if _has_keypoints(model) else 0
