"""opbridge's PyTorch ops and their ONNX export mappings, one module per op.

Adding an op: a module here with its torch side (when torch has none) and an ``EXPORT`` mapping,
listed in ``EXPORT_MAPPINGS`` (an op the manifest marks ``no_export`` has neither).
"""

from opbridge.ops import deform_conv as _deform_conv
from opbridge.ops import grid_sample as _grid_sample
from opbridge.ops import group_norm as _group_norm
from opbridge.ops import heatmaps_to_keypoints as _heatmaps_to_keypoints
from opbridge.ops import instance_norm as _instance_norm
from opbridge.ops import inverse as _inverse
from opbridge.ops import multi_scale_deformable_attention as _multi_scale_deformable_attention
from opbridge.ops import multi_scale_roi_align as _multi_scale_roi_align
from opbridge.ops import nms as _nms
from opbridge.ops import nms_match as _nms_match
from opbridge.ops import nms_rotated as _nms_rotated
from opbridge.ops import paste_masks as _paste_masks
from opbridge.ops import roi_align as _roi_align
from opbridge.ops import roi_align_rotated as _roi_align_rotated
from opbridge.ops import soft_nms as _soft_nms
from opbridge.ops import trt_batched_nms as _trt_batched_nms
from opbridge.ops import rotated_feature_align as _rotated_feature_align
from opbridge.ops import multi_level_roi_align as _multi_level_roi_align
from opbridge.ops import multi_level_rotated_roi_align as _multi_level_rotated_roi_align
from opbridge.ops import cummax as _cummax
from opbridge.ops import corner_pool as _corner_pool
from opbridge.ops.roi_align import roi_align, roi_align_reference
from opbridge.ops.roi_align_rotated import roi_align_rotated
from opbridge.ops.heatmaps_to_keypoints import heatmaps_to_keypoints
from opbridge.ops.multi_scale_roi_align import multi_scale_roi_align
from opbridge.ops.nms import batched_nms, multiclass_nms
from opbridge.ops.nms_match import nms_match
from opbridge.ops.nms_rotated import batched_nms_rotated, multiclass_nms_rotated, nms_rotated
from opbridge.ops.paste_masks import paste_masks
from opbridge.ops.soft_nms import soft_nms
from opbridge.ops.trt_batched_nms import trt_batched_nms, trt_batched_rotated_nms
from opbridge.ops.rotated_feature_align import rotated_feature_align
from opbridge.ops.multi_level_roi_align import multi_level_roi_align
from opbridge.ops.multi_level_rotated_roi_align import multi_level_rotated_roi_align
from opbridge.ops.corner_pool import corner_pool
from opbridge.ops.multi_scale_deformable_attention import MultiScaleDeformableAttention, multi_scale_deformable_attention

EXPORT_MAPPINGS = (_roi_align.EXPORT, _grid_sample.EXPORT, _soft_nms.EXPORT, _deform_conv.EXPORT, _nms.EXPORT,
                   _multi_scale_roi_align.EXPORT, _nms_rotated.EXPORT, _paste_masks.EXPORT,
                   _heatmaps_to_keypoints.EXPORT, _nms_match.EXPORT, _trt_batched_nms.EXPORT,
                   _roi_align_rotated.EXPORT, _rotated_feature_align.EXPORT, _multi_level_roi_align.EXPORT,
                   _multi_level_rotated_roi_align.EXPORT, _cummax.EXPORT, _corner_pool.EXPORT, _instance_norm.EXPORT,
                   _group_norm.EXPORT, _inverse.EXPORT, _multi_scale_deformable_attention.EXPORT)

__all__ = ["MultiScaleDeformableAttention", "batched_nms", "batched_nms_rotated", "corner_pool", "heatmaps_to_keypoints", "multi_level_roi_align",
           "multi_level_rotated_roi_align", "multi_scale_deformable_attention",
           "multi_scale_roi_align", "multiclass_nms", "multiclass_nms_rotated", "nms_match", "nms_rotated",
           "paste_masks", "roi_align", "roi_align_reference", "roi_align_rotated", "rotated_feature_align", "soft_nms",
           "trt_batched_nms", "trt_batched_rotated_nms", "EXPORT_MAPPINGS"]
