"""opbridge's PyTorch ops and their ONNX export mappings, one module per op.

Adding an op: a module here with its torch side (when torch has none) and an ``EXPORT`` mapping,
listed in ``EXPORT_MAPPINGS``.
"""

from opbridge.ops import deform_conv as _deform_conv
from opbridge.ops import grid_sample as _grid_sample
from opbridge.ops import nms as _nms
from opbridge.ops import roi_align as _roi_align
from opbridge.ops import soft_nms as _soft_nms
from opbridge.ops.roi_align import roi_align, roi_align_reference
from opbridge.ops.nms import batched_nms, multiclass_nms
from opbridge.ops.soft_nms import soft_nms

EXPORT_MAPPINGS = (_roi_align.EXPORT, _grid_sample.EXPORT, _soft_nms.EXPORT, _deform_conv.EXPORT, _nms.EXPORT)

__all__ = ["batched_nms", "multiclass_nms", "roi_align", "roi_align_reference", "soft_nms", "EXPORT_MAPPINGS"]
