#include "core/deform_conv.h"

#include <climits>

namespace opbridge {
namespace {

Status Pair(const char* name, const std::vector<int64_t>& v, int64_t* h, int64_t* w) {
  if (v.size() == 1) {
    *h = *w = v[0];
  } else if (v.size() == 2) {
    *h = v[0];
    *w = v[1];
  } else {
    return Status::Error(name, " must have 1 or 2 values (H, W), got ", v.size());
  }
  return Status::Ok();
}

std::string List(const std::vector<int64_t>& v) { return ShapeToString(v); }

}  // namespace

Status MakeDeformConvParams(const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                            const std::vector<int64_t>& dilation, int64_t groups,
                            int64_t deform_groups, DeformConvParams* p) {
  OPBRIDGE_RETURN_IF_ERROR(Pair("stride", stride, &p->stride_h, &p->stride_w));
  OPBRIDGE_RETURN_IF_ERROR(Pair("dilation", dilation, &p->dilation_h, &p->dilation_w));
  if (padding.size() == 4) {
    // mmdeploy writes [pad_h, pad_h, pad_w, pad_w].
    if (padding[0] != padding[1] || padding[2] != padding[3]) {
      return Status::Error("a 4-value padding must be [pad_h, pad_h, pad_w, pad_w] (mmdeploy's form), got ",
                           List(padding));
    }
    p->pad_h = padding[0];
    p->pad_w = padding[2];
  } else {
    Status s = Pair("padding", padding, &p->pad_h, &p->pad_w);
    if (!s.ok()) {
      return Status::Error("padding must have 1, 2 (H, W) or 4 ([pad_h, pad_h, pad_w, pad_w]) values, got ",
                           padding.size());
    }
  }
  if (p->stride_h < 1 || p->stride_w < 1) return Status::Error("stride must be >= 1, got ", List(stride));
  if (p->dilation_h < 1 || p->dilation_w < 1) {
    return Status::Error("dilation must be >= 1, got ", List(dilation));
  }
  if (p->pad_h < 0 || p->pad_w < 0) return Status::Error("padding must be >= 0, got ", List(padding));
  if (groups < 1) return Status::Error("groups must be >= 1, got ", groups);
  if (deform_groups < 1) return Status::Error("deform_groups must be >= 1, got ", deform_groups);
  p->groups = groups;
  p->deform_groups = deform_groups;
  return Status::Ok();
}

Status CheckDeformConvShapes(const DeformConvParams& p, const DeformConvShapes& s, Shape* output) {
  const Shape& x = s.input;
  const Shape& w = s.weight;
  if (x.size() != 4) return Status::Error("input must have rank 4 [N, C, H, W], got shape ", ShapeToString(x));
  if (w.size() != 4) {
    return Status::Error("weight must have rank 4 [C_out, C/groups, kh, kw], got shape ", ShapeToString(w));
  }
  const int64_t n = x[0], c = x[1], h = x[2], wd = x[3];
  const int64_t c_out = w[0], kh = w[2], kw = w[3];
  if (c % p.groups != 0) {
    return Status::Error("input channels ", c, " must be divisible by groups ", p.groups);
  }
  if (c_out % p.groups != 0) {
    return Status::Error("output channels ", c_out, " (weight.shape[0]) must be divisible by groups ", p.groups);
  }
  if (w[1] != c / p.groups) {  // (c is divisible by groups; w[1] * groups could overflow)
    return Status::Error("input channels ", c, " must equal weight.shape[1] * groups = ", w[1], " * ",
                         p.groups, " (input ", ShapeToString(x), ", weight ", ShapeToString(w), ")");
  }
  if (c % p.deform_groups != 0) {
    return Status::Error("input channels ", c, " must be divisible by deform_groups ", p.deform_groups);
  }
  if (kh < 1 || kw < 1) return Status::Error("kernel size must be >= 1, got weight shape ", ShapeToString(w));
  // The kernels compute sample coordinates oy * stride - pad + i * dilation (and likewise for x)
  // in 32-bit integers. Every such coordinate of an output pixel lies in [-pad, size + pad), so
  // size + 2 * pad < 2^31 keeps them exact (and this size arithmetic within int64).
  const int64_t max_padded = (int64_t{1} << 31) - 1;
  if (p.pad_h > max_padded / 2 || h > max_padded - 2 * p.pad_h || p.pad_w > max_padded / 2 ||
      wd > max_padded - 2 * p.pad_w) {
    return Status::Error("input height and width plus twice the padding must each be < 2^31, got input ",
                         ShapeToString(x), " and padding (", p.pad_h, ", ", p.pad_w, ")");
  }
  const int64_t padded_h = h + 2 * p.pad_h, padded_w = wd + 2 * p.pad_w;
  // The kernel's extent dilation * (k - 1) + 1 must fit in the padded input (division form:
  // kh and kw of an empty weight tensor may be anything).
  if (padded_h < 1 || padded_w < 1 || kh - 1 > (padded_h - 1) / p.dilation_h ||
      kw - 1 > (padded_w - 1) / p.dilation_w) {
    return Status::Error("output size must be > 0: the kernel ", kh, "x", kw, " with dilation (", p.dilation_h,
                         ", ", p.dilation_w, ") is larger than the padded input (input ", ShapeToString(x),
                         ", padding (", p.pad_h, ", ", p.pad_w, "))");
  }
  const int64_t out_h = (padded_h - p.dilation_h * (kh - 1) - 1) / p.stride_h + 1;
  const int64_t out_w = (padded_w - p.dilation_w * (kw - 1) - 1) / p.stride_w + 1;
  int64_t taps = 0, offset_channels = 0, mask_channels = 0;
  if (__builtin_mul_overflow(kh, kw, &taps) || __builtin_mul_overflow(p.deform_groups, taps, &mask_channels) ||
      __builtin_mul_overflow(mask_channels, int64_t{2}, &offset_channels)) {
    return Status::Error("2 * deform_groups * kh * kw overflows int64 (deform_groups ", p.deform_groups,
                         ", kernel ", kh, "x", kw, ")");
  }
  const Shape offset_expected = {n, offset_channels, out_h, out_w};
  if (s.offset != offset_expected) {
    return Status::Error("offset must have shape [N, 2 * deform_groups * kh * kw, H_out, W_out] = ",
                         ShapeToString(offset_expected), ", got ", ShapeToString(s.offset));
  }
  if (s.mask != nullptr) {
    const Shape mask_expected = {n, mask_channels, out_h, out_w};
    if (*s.mask != mask_expected) {
      return Status::Error("mask must have shape [N, deform_groups * kh * kw, H_out, W_out] = ",
                           ShapeToString(mask_expected), ", got ", ShapeToString(*s.mask));
    }
  }
  if (s.bias != nullptr && (s.bias->size() != 1 || (*s.bias)[0] != c_out)) {
    return Status::Error("bias must have shape [C_out] = [", c_out, "], got ", ShapeToString(*s.bias));
  }
  // The kernels index the input's planes, padded by the CPU kernel ((H + 3) x (W + 2)), with 32 bits.
  int64_t padded_pixels = 0;
  if (__builtin_mul_overflow(h + 3, wd + 2, &padded_pixels) || padded_pixels > INT32_MAX) {
    return Status::Error("inputs whose (H + 3) x (W + 2) exceeds 2^31 - 1 pixels are not supported");
  }
  *output = {n, c_out, out_h, out_w};
  return Status::Ok();
}

}  // namespace opbridge
