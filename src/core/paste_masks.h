// Mask pasting (torchvision's paste_masks_in_image, Mask R-CNN's last step): parameters,
// validation and output shape, shared by every backend.
#pragma once

#include <cstdint>

#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

struct PasteMasksParams {
  int64_t padding = 1;  // torchvision's expand_masks padding
};

// The largest padded mask side (mask_size + 2 * padding) accepted: each kernel task builds the
// padded mask in scratch memory (16 MB at this limit; Mask R-CNN's is 30 x 30).
constexpr int64_t kPasteMasksMaxPaddedSide = 2048;

// The largest image side accepted (an output plane is image_h x image_w floats per mask).
constexpr int64_t kPasteMasksMaxImageSide = int64_t{1} << 20;

Status MakePasteMasksParams(int64_t padding, PasteMasksParams* params);
// Shape rules: masks [N, 1, M, M], boxes [N, 4], image_size [2].
Status CheckPasteMasksShapes(const PasteMasksParams& params, const Shape& masks, const Shape& boxes,
                             const Shape& image_size);
// Data rules: the image size (height, width) is two integers in [0, kPasteMasksMaxImageSide],
// and the output [N, 1, height, width] has fewer than 2^62 elements.
Status CheckPasteMasksImageSize(const int64_t* image_size, int64_t num_masks);

}  // namespace opbridge
