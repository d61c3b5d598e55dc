// Deformable convolution CUDA kernel (DCNv1 without mask, DCNv2 with mask), float32, NCHW.
// Framework-free: raw device pointers, shapes, params, device scratch and a stream.
#pragma once

#include "core/deform_conv.h"
#include "core/scratch.h"
#include "core/status.h"
#include "kernels/cuda/cuda_status.h"

namespace opbridge::cuda {

// cpu::DeformConv's output, bit for bit where the CPU has FMA (x86-64-v3 and v4): the same samples
// (kernels/shared/deform_conv_taps.h) and, per output, the same chain of fused multiply-adds over
// the taps, then the channels, then + bias (chain_gemm.cuh). Every pointer of `args` is in device
// memory. Scratch: one image's taps, 24 bytes per (deform group, tap, output pixel).
Status DeformConv(const DeformConvParams& params, const DeformConvArgs& args, ScratchAllocator& scratch,
                  Stream stream);

}  // namespace opbridge::cuda
