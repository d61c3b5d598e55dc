"""Float64 references for rotated boxes (cx, cy, w, h, theta in radians), written from the
geometry and independent of the kernels' algorithm (mmcv's): vertices, IoU by clipping one
rectangle with the other (Sutherland-Hodgman) and the shoelace area, and a plain greedy NMS.

Convention (mmcv's): the width axis points along (cos theta, sin theta), the height axis along
(-sin theta, cos theta).

mmcv's float32 algorithm, which the kernels reproduce bit for bit, is not accurate where edges
of the two boxes lie on one line (boxes of equal angle side by side in a row, integer boxes at
multiples of 45 degrees, near-duplicates): there it can be off by up to the whole IoU. Compare
against this reference on boxes with independent random angles, or expect such differences."""

from __future__ import annotations

import math

import numpy as np


def rotated_box_vertices(box):
    """The four corners of box (cx, cy, w, h, theta) as a float64 array [4, 2], counter-clockwise
    (in a y-up frame) for w, h > 0, starting at the corner at -w/2 along the width axis and
    -h/2 along the height axis."""
    cx, cy, w, h, theta = (float(v) for v in box)
    c, s = math.cos(theta), math.sin(theta)
    local = [(-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)]
    return np.array([(cx + c * u - s * v, cy + s * u + c * v) for u, v in local], dtype=np.float64)


def _clip(polygon, a, b):
    """The part of a convex polygon (list of points) left of the directed line a -> b."""

    def side(p):
        return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])

    out = []
    for i, p in enumerate(polygon):
        q = polygon[(i + 1) % len(polygon)]
        sp, sq = side(p), side(q)
        if sp >= 0:
            out.append(p)
        if (sp >= 0) != (sq >= 0):
            t = sp / (sp - sq)
            out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
    return out


def _polygon_area(polygon):
    twice = 0.0
    for i, p in enumerate(polygon):
        q = polygon[(i + 1) % len(polygon)]
        twice += p[0] * q[1] - q[0] * p[1]
    return abs(twice) / 2


def rotated_intersection_area(a, b):
    """Area of the intersection of two rotated boxes with w, h > 0, in float64."""
    polygon = [tuple(p) for p in rotated_box_vertices(a)]
    clip = rotated_box_vertices(b)
    for k in range(4):
        if not polygon:
            return 0.0
        polygon = _clip(polygon, clip[k], clip[(k + 1) % 4])
    return _polygon_area(polygon) if len(polygon) >= 3 else 0.0


def rotated_iou(a, b):
    """IoU of two rotated boxes with w, h > 0: intersection / (area_a + area_b - intersection)."""
    inter = rotated_intersection_area(a, b)
    return inter / (float(a[2]) * float(a[3]) + float(b[2]) * float(b[3]) - inter)


def _valid(box):
    return all(math.isfinite(float(v)) for v in box) and float(box[2]) > 0 and float(box[3]) > 0


def greedy_nms_rotated(boxes, scores, iou_threshold, strict=True, categories=None):
    """Greedy NMS over rotated boxes [n, 5]. Visits boxes by descending score (NaN first, as
    torch.sort orders it; ties, -0 and +0 included, by lower index) and keeps a box unless a kept
    box of the same category (all one category when categories is None) suppresses it: IoU > thr
    with strict=True, IoU >= thr with strict=False. A box with a non-finite value or w <= 0 or
    h <= 0 never suppresses and is never suppressed. Returns the kept indices (int64) in visiting
    order."""
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 5)
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    n = len(scores)
    cats = np.zeros(n, dtype=np.int64) if categories is None else np.asarray(categories).reshape(-1)

    def visit_key(i):
        s = scores[i]
        return (0, 0.0, i) if math.isnan(s) else (1, -s, i)

    order = sorted(range(n), key=visit_key)
    valid = [_valid(b) for b in boxes]
    kept = []
    for j in order:
        suppressed = False
        if valid[j]:
            for i in kept:
                if not valid[i] or cats[i] != cats[j]:
                    continue
                iou = rotated_iou(boxes[i], boxes[j])
                if iou > iou_threshold if strict else iou >= iou_threshold:
                    suppressed = True
                    break
        if not suppressed:
            kept.append(j)
    return np.array(kept, dtype=np.int64)


def bilinear_rois_rule(plane, y, x):
    """Samples a [C, H, W] float64 plane at points (y, x) (arrays of one shape) with RoIAlign's
    rules (spec 5.1): a point outside [-1, H] x [-1, W] reads 0; otherwise negative coordinates
    clamp to 0, and a coordinate at or past the last row or column reads that row or column.
    Returns [C, *y.shape]."""
    channels, height, width = plane.shape
    out = np.zeros((channels,) + y.shape)
    if height == 0 or width == 0:
        return out
    inside = (y >= -1) & (y <= height) & (x >= -1) & (x <= width)
    y = np.clip(y, 0, height - 1)
    x = np.clip(x, 0, width - 1)
    y0 = np.floor(y).astype(np.int64)
    x0 = np.floor(x).astype(np.int64)
    y1 = np.minimum(y0 + 1, height - 1)
    x1 = np.minimum(x0 + 1, width - 1)
    ly, lx = y - y0, x - x0
    value = (plane[:, y0, x0] * (1 - ly) * (1 - lx) + plane[:, y0, x1] * (1 - ly) * lx
             + plane[:, y1, x0] * ly * (1 - lx) + plane[:, y1, x1] * ly * lx)
    return np.where(inside, value, 0.0)


def roi_align_rotated_reference(features, rois, output_size, spatial_scale=1.0, sampling_ratio=0,
                                aligned=True, clockwise=False):
    """RoIAlignRotated in float64, from the contract (spec 5.2): features [N, C, H, W], rois
    [R, 6] (batch, cx, cy, w, h, theta) -> [R, C, out_h, out_w]."""
    features = np.asarray(features, np.float64)
    rois = np.asarray(rois, np.float64)
    out_h, out_w = output_size
    out = np.zeros((len(rois), features.shape[1], out_h, out_w))
    offset = 0.5 if aligned else 0.0
    for r, (b, cx, cy, w, h, theta) in enumerate(rois):
        if not np.all(np.isfinite([cx, cy, w, h, theta])):
            out[r] = np.nan
            continue
        cx, cy = cx * spatial_scale - offset, cy * spatial_scale - offset
        w, h = w * spatial_scale, h * spatial_scale
        if not aligned:
            w, h = max(w, 1.0), max(h, 1.0)
        theta = -theta if clockwise else theta
        grid_h = sampling_ratio if sampling_ratio > 0 else max(math.ceil(h / out_h), 0)
        grid_w = sampling_ratio if sampling_ratio > 0 else max(math.ceil(w / out_w), 0)
        if grid_h == 0 or grid_w == 0:
            continue  # no samples: the bins are 0
        # Sample coordinates in the box's frame: bin start plus (i + 0.5) sub-steps.
        yy = -h / 2 + (np.arange(out_h)[:, None] * h / out_h + (np.arange(grid_h)[None, :] + 0.5) * h / out_h / grid_h)
        xx = -w / 2 + (np.arange(out_w)[:, None] * w / out_w + (np.arange(grid_w)[None, :] + 0.5) * w / out_w / grid_w)
        yy = yy.reshape(-1)[:, None]  # (out_h * grid_h, 1)
        xx = xx.reshape(-1)[None, :]  # (1, out_w * grid_w)
        y = yy * math.cos(theta) - xx * math.sin(theta) + cy
        x = yy * math.sin(theta) + xx * math.cos(theta) + cx
        samples = bilinear_rois_rule(features[int(b)], y, x)  # [C, out_h * grid_h, out_w * grid_w]
        samples = samples.reshape(features.shape[1], out_h, grid_h, out_w, grid_w)
        out[r] = samples.sum(axis=(2, 4)) / (grid_h * grid_w)
    return out
