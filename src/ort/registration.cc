// The registration table: every (domain, op type) opbridge answers to, and its glue.
// Adding an op identity is one line here plus its entry in python/opbridge/ops.toml;
// tests/python/test_manifest.py checks that the two agree.
#include "ort/registration.h"

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
#include "ort/ops/multi_scale_deformable_attention.h"
#include "ort/ops/multi_level_roi_align.h"
#include "ort/ops/multi_level_rotated_roi_align.h"
#include "ort/ops/multi_scale_roi_align.h"
#include "ort/ops/nms.h"
#include "ort/ops/nms_match.h"
#include "ort/ops/nms_rotated.h"
#include "ort/ops/paste_masks.h"
#include "ort/ops/roi_align.h"
#include "ort/ops/roi_align_rotated.h"
#include "ort/ops/scaled_dot_product_attention.h"
#include "ort/ops/rotated_feature_align.h"
#include "ort/ops/soft_nms.h"
#include "ort/ops/trt_batched_nms.h"

namespace opbridge::ort {
namespace {

template <class Glue>
RegisteredOp Op(const char* domain, const char* name, const char* kernel) {
  // Intentionally never freed: ORT may call the op's callbacks until the process ends.
  const auto* op = new CustomOp<Glue>(domain, name);
  return {domain, name, kernel, "CPU", op, &Glue::Schema()};
}

#ifdef OPBRIDGE_WITH_CUDA
// The CUDA twin of an identity registered with Op above (the same domain, name and schema).
template <class Glue>
RegisteredOp CudaOp(const char* domain, const char* name, const char* kernel) {
  const auto* op = new CustomOp<Glue, Provider::kCuda>(domain, name);
  return {domain, name, kernel, "CUDA", op, &Glue::Schema()};
}
#endif

}  // namespace

const std::vector<RegisteredOp>& RegisteredOps() {
  static const std::vector<RegisteredOp>* const ops = new std::vector<RegisteredOp>{
      Op<RoiAlignOp>("mmcv", "MMCVRoiAlign", "roi_align"),
      Op<RoiAlignOp>("opbridge", "RoiAlign", "roi_align"),
      Op<GridSampleOp>("mmcv", "grid_sampler", "grid_sample"),
      Op<GridSampleOp>("mmdeploy", "grid_sampler", "grid_sample"),
      Op<GridSampleOp>("opbridge", "GridSample", "grid_sample"),
      Op<SoftNmsOp>("mmcv", "SoftNonMaxSuppression", "soft_nms"),
      Op<SoftNmsOp>("opbridge", "SoftNonMaxSuppression", "soft_nms"),
      Op<DeformConv2dOp>("opbridge", "DeformConv2d", "deform_conv"),
      Op<DeformConvOp>("mmcv", "MMCVDeformConv2d", "deform_conv"),
      Op<DeformConvOp>("mmdeploy", "MMCVDeformConv2d", "deform_conv"),
      Op<ModulatedDeformConvOp>("mmcv", "MMCVModulatedDeformConv2d", "deform_conv"),
      Op<ModulatedDeformConvOp>("mmdeploy", "MMCVModulatedDeformConv2d", "deform_conv"),
      Op<NmsOp>("opbridge", "Nms", "nms"),
      Op<BatchedNmsOp>("opbridge", "BatchedNms", "nms"),
      Op<MulticlassNmsOp>("opbridge", "MulticlassNms", "nms"),
      Op<NmsOp>("mmcv", "NonMaxSuppression", "nms"),
      Op<MultiScaleRoiAlignOp>("opbridge", "MultiScaleRoiAlign", "multi_scale_roi_align"),
      Op<NmsRotatedOp>("opbridge", "NmsRotated", "nms_rotated"),
      Op<MulticlassNmsRotatedOp>("opbridge", "MulticlassNmsRotated", "nms_rotated"),
      Op<MulticlassNmsRotatedOp>("mmdeploy", "NMSRotated", "nms_rotated"),
      Op<TrtBatchedNmsOp>("opbridge", "TrtBatchedNms", "trt_batched_nms"),
      Op<TrtBatchedRotatedNmsOp>("opbridge", "TrtBatchedRotatedNms", "trt_batched_nms"),
      Op<TrtBatchedNmsOp>("mmdeploy", "TRTBatchedNMS", "trt_batched_nms"),
      Op<TrtBatchedRotatedNmsOp>("mmdeploy", "TRTBatchedRotatedNMS", "trt_batched_nms"),
      Op<PasteMasksOp>("opbridge", "PasteMasks", "paste_masks"),
      Op<HeatmapsToKeypointsOp>("opbridge", "HeatmapsToKeypoints", "heatmaps_to_keypoints"),
      Op<NmsMatchOp>("opbridge", "NmsMatch", "nms_match"),
      Op<NmsMatchOp>("mmdeploy", "NMSMatch", "nms_match"),
      Op<RoiAlignRotatedOp>("opbridge", "RoiAlignRotated", "roi_align_rotated"),
      Op<RoiAlignRotatedOp>("mmcv", "MMCVRoIAlignRotated", "roi_align_rotated"),
      Op<RoiAlignRotatedOp>("mmdeploy", "MMCVRoIAlignRotated", "roi_align_rotated"),
      Op<RotatedFeatureAlignOp>("opbridge", "RotatedFeatureAlign", "rotated_feature_align"),
      Op<RotatedFeatureAlignOp>("mmcv", "MMCVRotatedFeatureAlign", "rotated_feature_align"),
      Op<MultiLevelRoiAlignOp>("opbridge", "MultiLevelRoiAlign", "multi_level_roi_align"),
      Op<MultiLevelRoiAlignOp>("mmdeploy", "MMCVMultiLevelRoiAlign", "multi_level_roi_align"),
      Op<MultiLevelRotatedRoiAlignOp>("opbridge", "MultiLevelRotatedRoiAlign", "multi_level_rotated_roi_align"),
      Op<MultiLevelRotatedRoiAlignOp>("mmdeploy", "MMCVMultiLevelRotatedRoiAlign", "multi_level_rotated_roi_align"),
      Op<CumMaxOp>("opbridge", "CumMax", "cummax"),
      Op<CumMinOp>("opbridge", "CumMin", "cummax"),
      Op<CumMaxOp>("mmcv", "cummax", "cummax"),
      Op<CumMinOp>("mmcv", "cummin", "cummax"),
      Op<CornerPoolOp>("opbridge", "CornerPool", "corner_pool"),
      Op<CornerPoolOp>("mmcv", "MMCVCornerPool", "corner_pool"),
      Op<InstanceNormOp>("opbridge", "InstanceNorm", "instance_norm"),
      Op<InstanceNormOp>("mmcv", "MMCVInstanceNormalization", "instance_norm"),
      Op<InstanceNormOp>("mmdeploy", "TRTInstanceNormalization", "instance_norm"),
      Op<InstanceNormOp>("", "MMCVInstanceNormalization", "instance_norm"),
      Op<GroupNormOp>("opbridge", "GroupNorm", "group_norm"),
      Op<TutorialGroupNormOp>("mydomain", "mygroupnorm", "group_norm"),
      Op<TutorialGroupNormOp>("mydomain", "testgroupnorm", "group_norm"),
      Op<TutorialGroupNormOp>("org.pytorch.mydomain", "testgroupnorm", "group_norm"),
      Op<InverseOp>("opbridge", "Inverse", "inverse"),
      Op<MultiScaleDeformableAttentionOp>("opbridge", "MultiScaleDeformableAttention", "multi_scale_deformable_attention"),
      Op<MmdeployMultiScaleDeformableAttentionOp>("mmdeploy", "MMCVMultiScaleDeformableAttention",
                                                  "multi_scale_deformable_attention"),
      Op<GatherTopkOp>("opbridge", "GatherTopk", "gather_topk"),
      Op<GatherTopkOp>("mmdeploy", "GatherTopk", "gather_topk"),
      Op<GridPriorsOp>("opbridge", "GridPriors", "grid_priors"),
      Op<GridPriorsOp>("mmdeploy", "GridPriorsTRT", "grid_priors"),
      Op<BicubicInterpolateOp>("opbridge", "BicubicInterpolate", "bicubic_interpolate"),
      Op<BicubicInterpolateOp>("mmdeploy", "TRTBicubicInterpolate", "bicubic_interpolate"),
      Op<ScaledDotProductAttentionOp>("opbridge", "ScaledDotProductAttention", "scaled_dot_product_attention"),
      Op<ScaledDotProductAttentionOp>("mmdeploy", "ScaledDotProductAttentionTRT", "scaled_dot_product_attention"),
#ifdef OPBRIDGE_WITH_CUDA
      // The CUDA twins, after every CPU op: ORT takes an op type's schema from its first
      // registration and checks that every twin has the same inputs and outputs.
      CudaOp<RoiAlignOp>("mmcv", "MMCVRoiAlign", "roi_align"),
      CudaOp<RoiAlignOp>("opbridge", "RoiAlign", "roi_align"),
      CudaOp<MultiScaleRoiAlignOp>("opbridge", "MultiScaleRoiAlign", "multi_scale_roi_align"),
      CudaOp<MultiLevelRoiAlignOp>("opbridge", "MultiLevelRoiAlign", "multi_level_roi_align"),
      CudaOp<MultiLevelRoiAlignOp>("mmdeploy", "MMCVMultiLevelRoiAlign", "multi_level_roi_align"),
      CudaOp<NmsOp>("opbridge", "Nms", "nms"),
      CudaOp<BatchedNmsOp>("opbridge", "BatchedNms", "nms"),
      CudaOp<MulticlassNmsOp>("opbridge", "MulticlassNms", "nms"),
      CudaOp<NmsOp>("mmcv", "NonMaxSuppression", "nms"),
      CudaOp<TrtBatchedNmsOp>("opbridge", "TrtBatchedNms", "trt_batched_nms"),
      CudaOp<TrtBatchedNmsOp>("mmdeploy", "TRTBatchedNMS", "trt_batched_nms"),
      CudaOp<PasteMasksOp>("opbridge", "PasteMasks", "paste_masks"),
      CudaOp<HeatmapsToKeypointsOp>("opbridge", "HeatmapsToKeypoints", "heatmaps_to_keypoints"),
      CudaOp<GridSampleOp>("mmcv", "grid_sampler", "grid_sample"),
      CudaOp<GridSampleOp>("mmdeploy", "grid_sampler", "grid_sample"),
      CudaOp<GridSampleOp>("opbridge", "GridSample", "grid_sample"),
      CudaOp<InstanceNormOp>("opbridge", "InstanceNorm", "instance_norm"),
      CudaOp<InstanceNormOp>("mmcv", "MMCVInstanceNormalization", "instance_norm"),
      CudaOp<InstanceNormOp>("mmdeploy", "TRTInstanceNormalization", "instance_norm"),
      CudaOp<InstanceNormOp>("", "MMCVInstanceNormalization", "instance_norm"),
      CudaOp<GroupNormOp>("opbridge", "GroupNorm", "group_norm"),
      CudaOp<TutorialGroupNormOp>("mydomain", "mygroupnorm", "group_norm"),
      CudaOp<TutorialGroupNormOp>("mydomain", "testgroupnorm", "group_norm"),
      CudaOp<TutorialGroupNormOp>("org.pytorch.mydomain", "testgroupnorm", "group_norm"),
#endif
  };
  return *ops;
}

}  // namespace opbridge::ort
