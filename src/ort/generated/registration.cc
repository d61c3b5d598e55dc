// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.
// The registration table: every (domain, op type) opbridge answers to, and its glue class.
#include "ort/op_adapter.h"

#include "ort/ops/bicubic_interpolate.h"
#include "ort/ops/corner_pool.h"
#include "ort/ops/cummax.h"
#include "ort/ops/deform_conv.h"
#include "ort/ops/gather_topk.h"
#include "ort/ops/grid_priors.h"
#include "ort/ops/grid_sample.h"
#include "ort/ops/group_norm.h"
#include "ort/ops/heatmaps_to_keypoints.h"
#include "ort/ops/instance_norm.h"
#include "ort/ops/inverse.h"
#include "ort/ops/multi_level_roi_align.h"
#include "ort/ops/multi_level_rotated_roi_align.h"
#include "ort/ops/multi_scale_deformable_attention.h"
#include "ort/ops/multi_scale_roi_align.h"
#include "ort/ops/nms.h"
#include "ort/ops/nms_match.h"
#include "ort/ops/nms_rotated.h"
#include "ort/ops/paste_masks.h"
#include "ort/ops/roi_align.h"
#include "ort/ops/roi_align_rotated.h"
#include "ort/ops/rotated_feature_align.h"
#include "ort/ops/scaled_dot_product_attention.h"
#include "ort/ops/soft_nms.h"
#include "ort/ops/trt_batched_nms.h"

namespace opbridge::ort {

const std::vector<RegisteredOp>& RegisteredOps() {
  static const std::vector<RegisteredOp>* const ops = new std::vector<RegisteredOp>{
      CpuOp<RoiAlignOp>("opbridge", "RoiAlign", "roi_align"),
      CpuOp<RoiAlignOp>("mmcv", "MMCVRoiAlign", "roi_align"),
      CpuOp<RoiAlignRotatedOp>("opbridge", "RoiAlignRotated", "roi_align_rotated"),
      CpuOp<RoiAlignRotatedOp>("mmcv", "MMCVRoIAlignRotated", "roi_align_rotated"),
      CpuOp<RoiAlignRotatedOp>("mmdeploy", "MMCVRoIAlignRotated", "roi_align_rotated"),
      CpuOp<GridSampleOp>("opbridge", "GridSample", "grid_sample"),
      CpuOp<GridSampleOp>("mmcv", "grid_sampler", "grid_sample"),
      CpuOp<GridSampleOp>("mmdeploy", "grid_sampler", "grid_sample"),
      CpuOp<SoftNmsOp>("opbridge", "SoftNonMaxSuppression", "soft_nms"),
      CpuOp<SoftNmsOp>("mmcv", "SoftNonMaxSuppression", "soft_nms"),
      CpuOp<DeformConv2dOp>("opbridge", "DeformConv2d", "deform_conv"),
      CpuOp<DeformConvOp>("mmcv", "MMCVDeformConv2d", "deform_conv"),
      CpuOp<DeformConvOp>("mmdeploy", "MMCVDeformConv2d", "deform_conv"),
      CpuOp<ModulatedDeformConvOp>("mmcv", "MMCVModulatedDeformConv2d", "deform_conv"),
      CpuOp<ModulatedDeformConvOp>("mmdeploy", "MMCVModulatedDeformConv2d", "deform_conv"),
      CpuOp<NmsOp>("opbridge", "Nms", "nms"),
      CpuOp<BatchedNmsOp>("opbridge", "BatchedNms", "nms"),
      CpuOp<MulticlassNmsOp>("opbridge", "MulticlassNms", "nms"),
      CpuOp<NmsOp>("mmcv", "NonMaxSuppression", "nms"),
      CpuOp<MultiScaleRoiAlignOp>("opbridge", "MultiScaleRoiAlign", "multi_scale_roi_align"),
      CpuOp<NmsRotatedOp>("opbridge", "NmsRotated", "nms_rotated"),
      CpuOp<MulticlassNmsRotatedOp>("opbridge", "MulticlassNmsRotated", "nms_rotated"),
      CpuOp<MulticlassNmsRotatedOp>("mmdeploy", "NMSRotated", "nms_rotated"),
      CpuOp<PasteMasksOp>("opbridge", "PasteMasks", "paste_masks"),
      CpuOp<HeatmapsToKeypointsOp>("opbridge", "HeatmapsToKeypoints", "heatmaps_to_keypoints"),
      CpuOp<NmsMatchOp>("opbridge", "NmsMatch", "nms_match"),
      CpuOp<NmsMatchOp>("mmdeploy", "NMSMatch", "nms_match"),
      CpuOp<TrtBatchedNmsOp>("opbridge", "TrtBatchedNms", "trt_batched_nms"),
      CpuOp<TrtBatchedRotatedNmsOp>("opbridge", "TrtBatchedRotatedNms", "trt_batched_nms"),
      CpuOp<TrtBatchedNmsOp>("mmdeploy", "TRTBatchedNMS", "trt_batched_nms"),
      CpuOp<TrtBatchedRotatedNmsOp>("mmdeploy", "TRTBatchedRotatedNMS", "trt_batched_nms"),
      CpuOp<RotatedFeatureAlignOp>("opbridge", "RotatedFeatureAlign", "rotated_feature_align"),
      CpuOp<RotatedFeatureAlignOp>("mmcv", "MMCVRotatedFeatureAlign", "rotated_feature_align"),
      CpuOp<MultiLevelRoiAlignOp>("opbridge", "MultiLevelRoiAlign", "multi_level_roi_align"),
      CpuOp<MultiLevelRoiAlignOp>("mmdeploy", "MMCVMultiLevelRoiAlign", "multi_level_roi_align"),
      CpuOp<MultiLevelRotatedRoiAlignOp>("opbridge", "MultiLevelRotatedRoiAlign", "multi_level_rotated_roi_align"),
      CpuOp<MultiLevelRotatedRoiAlignOp>("mmdeploy", "MMCVMultiLevelRotatedRoiAlign", "multi_level_rotated_roi_align"),
      CpuOp<CumMaxOp>("opbridge", "CumMax", "cummax"),
      CpuOp<CumMinOp>("opbridge", "CumMin", "cummax"),
      CpuOp<CumMaxOp>("mmcv", "cummax", "cummax"),
      CpuOp<CumMinOp>("mmcv", "cummin", "cummax"),
      CpuOp<CornerPoolOp>("opbridge", "CornerPool", "corner_pool"),
      CpuOp<CornerPoolOp>("mmcv", "MMCVCornerPool", "corner_pool"),
      CpuOp<InstanceNormOp>("opbridge", "InstanceNorm", "instance_norm"),
      CpuOp<InstanceNormOp>("mmcv", "MMCVInstanceNormalization", "instance_norm"),
      CpuOp<InstanceNormOp>("", "MMCVInstanceNormalization", "instance_norm"),
      CpuOp<InstanceNormOp>("mmdeploy", "TRTInstanceNormalization", "instance_norm"),
      CpuOp<GroupNormOp>("opbridge", "GroupNorm", "group_norm"),
      CpuOp<TutorialGroupNormOp>("mydomain", "mygroupnorm", "group_norm"),
      CpuOp<TutorialGroupNormOp>("mydomain", "testgroupnorm", "group_norm"),
      CpuOp<TutorialGroupNormOp>("org.pytorch.mydomain", "testgroupnorm", "group_norm"),
      CpuOp<InverseOp>("opbridge", "Inverse", "inverse"),
      CpuOp<MultiScaleDeformableAttentionOp>("opbridge", "MultiScaleDeformableAttention", "multi_scale_deformable_attention"),
      CpuOp<MmdeployMultiScaleDeformableAttentionOp>("mmdeploy", "MMCVMultiScaleDeformableAttention", "multi_scale_deformable_attention"),
      CpuOp<GatherTopkOp>("opbridge", "GatherTopk", "gather_topk"),
      CpuOp<GatherTopkOp>("mmdeploy", "GatherTopk", "gather_topk"),
      CpuOp<GridPriorsOp>("opbridge", "GridPriors", "grid_priors"),
      CpuOp<GridPriorsOp>("mmdeploy", "GridPriorsTRT", "grid_priors"),
      CpuOp<BicubicInterpolateOp>("opbridge", "BicubicInterpolate", "bicubic_interpolate"),
      CpuOp<BicubicInterpolateOp>("mmdeploy", "TRTBicubicInterpolate", "bicubic_interpolate"),
      CpuOp<ScaledDotProductAttentionOp>("opbridge", "ScaledDotProductAttention", "scaled_dot_product_attention"),
      CpuOp<ScaledDotProductAttentionOp>("mmdeploy", "ScaledDotProductAttentionTRT", "scaled_dot_product_attention"),
#ifdef OPBRIDGE_WITH_CUDA
      // The CUDA twins, after every CPU op: ORT takes an op type's schema from its first
      // registration and checks that every twin has the same inputs and outputs.
      CudaOp<RoiAlignOp>("opbridge", "RoiAlign", "roi_align"),
      CudaOp<RoiAlignOp>("mmcv", "MMCVRoiAlign", "roi_align"),
      CudaOp<RoiAlignRotatedOp>("opbridge", "RoiAlignRotated", "roi_align_rotated"),
      CudaOp<RoiAlignRotatedOp>("mmcv", "MMCVRoIAlignRotated", "roi_align_rotated"),
      CudaOp<RoiAlignRotatedOp>("mmdeploy", "MMCVRoIAlignRotated", "roi_align_rotated"),
      CudaOp<GridSampleOp>("opbridge", "GridSample", "grid_sample"),
      CudaOp<GridSampleOp>("mmcv", "grid_sampler", "grid_sample"),
      CudaOp<GridSampleOp>("mmdeploy", "grid_sampler", "grid_sample"),
      CudaOp<SoftNmsOp>("opbridge", "SoftNonMaxSuppression", "soft_nms"),
      CudaOp<SoftNmsOp>("mmcv", "SoftNonMaxSuppression", "soft_nms"),
      CudaOp<DeformConv2dOp>("opbridge", "DeformConv2d", "deform_conv"),
      CudaOp<DeformConvOp>("mmcv", "MMCVDeformConv2d", "deform_conv"),
      CudaOp<DeformConvOp>("mmdeploy", "MMCVDeformConv2d", "deform_conv"),
      CudaOp<ModulatedDeformConvOp>("mmcv", "MMCVModulatedDeformConv2d", "deform_conv"),
      CudaOp<ModulatedDeformConvOp>("mmdeploy", "MMCVModulatedDeformConv2d", "deform_conv"),
      CudaOp<NmsOp>("opbridge", "Nms", "nms"),
      CudaOp<BatchedNmsOp>("opbridge", "BatchedNms", "nms"),
      CudaOp<MulticlassNmsOp>("opbridge", "MulticlassNms", "nms"),
      CudaOp<NmsOp>("mmcv", "NonMaxSuppression", "nms"),
      CudaOp<MultiScaleRoiAlignOp>("opbridge", "MultiScaleRoiAlign", "multi_scale_roi_align"),
      CudaOp<NmsRotatedOp>("opbridge", "NmsRotated", "nms_rotated"),
      CudaOp<MulticlassNmsRotatedOp>("opbridge", "MulticlassNmsRotated", "nms_rotated"),
      CudaOp<MulticlassNmsRotatedOp>("mmdeploy", "NMSRotated", "nms_rotated"),
      CudaOp<PasteMasksOp>("opbridge", "PasteMasks", "paste_masks"),
      CudaOp<HeatmapsToKeypointsOp>("opbridge", "HeatmapsToKeypoints", "heatmaps_to_keypoints"),
      CudaOp<NmsMatchOp>("opbridge", "NmsMatch", "nms_match"),
      CudaOp<NmsMatchOp>("mmdeploy", "NMSMatch", "nms_match"),
      CudaOp<TrtBatchedNmsOp>("opbridge", "TrtBatchedNms", "trt_batched_nms"),
      CudaOp<TrtBatchedRotatedNmsOp>("opbridge", "TrtBatchedRotatedNms", "trt_batched_nms"),
      CudaOp<TrtBatchedNmsOp>("mmdeploy", "TRTBatchedNMS", "trt_batched_nms"),
      CudaOp<TrtBatchedRotatedNmsOp>("mmdeploy", "TRTBatchedRotatedNMS", "trt_batched_nms"),
      CudaOp<RotatedFeatureAlignOp>("opbridge", "RotatedFeatureAlign", "rotated_feature_align"),
      CudaOp<RotatedFeatureAlignOp>("mmcv", "MMCVRotatedFeatureAlign", "rotated_feature_align"),
      CudaOp<MultiLevelRoiAlignOp>("opbridge", "MultiLevelRoiAlign", "multi_level_roi_align"),
      CudaOp<MultiLevelRoiAlignOp>("mmdeploy", "MMCVMultiLevelRoiAlign", "multi_level_roi_align"),
      CudaOp<MultiLevelRotatedRoiAlignOp>("opbridge", "MultiLevelRotatedRoiAlign", "multi_level_rotated_roi_align"),
      CudaOp<MultiLevelRotatedRoiAlignOp>("mmdeploy", "MMCVMultiLevelRotatedRoiAlign", "multi_level_rotated_roi_align"),
      CudaOp<CumMaxOp>("opbridge", "CumMax", "cummax"),
      CudaOp<CumMinOp>("opbridge", "CumMin", "cummax"),
      CudaOp<CumMaxOp>("mmcv", "cummax", "cummax"),
      CudaOp<CumMinOp>("mmcv", "cummin", "cummax"),
      CudaOp<CornerPoolOp>("opbridge", "CornerPool", "corner_pool"),
      CudaOp<CornerPoolOp>("mmcv", "MMCVCornerPool", "corner_pool"),
      CudaOp<InstanceNormOp>("opbridge", "InstanceNorm", "instance_norm"),
      CudaOp<InstanceNormOp>("mmcv", "MMCVInstanceNormalization", "instance_norm"),
      CudaOp<InstanceNormOp>("", "MMCVInstanceNormalization", "instance_norm"),
      CudaOp<InstanceNormOp>("mmdeploy", "TRTInstanceNormalization", "instance_norm"),
      CudaOp<GroupNormOp>("opbridge", "GroupNorm", "group_norm"),
      CudaOp<TutorialGroupNormOp>("mydomain", "mygroupnorm", "group_norm"),
      CudaOp<TutorialGroupNormOp>("mydomain", "testgroupnorm", "group_norm"),
      CudaOp<TutorialGroupNormOp>("org.pytorch.mydomain", "testgroupnorm", "group_norm"),
      CudaOp<InverseOp>("opbridge", "Inverse", "inverse"),
      CudaOp<MultiScaleDeformableAttentionOp>("opbridge", "MultiScaleDeformableAttention", "multi_scale_deformable_attention"),
      CudaOp<MmdeployMultiScaleDeformableAttentionOp>("mmdeploy", "MMCVMultiScaleDeformableAttention", "multi_scale_deformable_attention"),
      CudaOp<GatherTopkOp>("opbridge", "GatherTopk", "gather_topk"),
      CudaOp<GatherTopkOp>("mmdeploy", "GatherTopk", "gather_topk"),
      CudaOp<GridPriorsOp>("opbridge", "GridPriors", "grid_priors"),
      CudaOp<GridPriorsOp>("mmdeploy", "GridPriorsTRT", "grid_priors"),
      CudaOp<BicubicInterpolateOp>("opbridge", "BicubicInterpolate", "bicubic_interpolate"),
      CudaOp<BicubicInterpolateOp>("mmdeploy", "TRTBicubicInterpolate", "bicubic_interpolate"),
      CudaOp<ScaledDotProductAttentionOp>("opbridge", "ScaledDotProductAttention", "scaled_dot_product_attention"),
      CudaOp<ScaledDotProductAttentionOp>("mmdeploy", "ScaledDotProductAttentionTRT", "scaled_dot_product_attention"),
#endif
  };
  return *ops;
}

}  // namespace opbridge::ort
