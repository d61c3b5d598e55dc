#include "core/paste_masks.h"

namespace opbridge {

Status MakePasteMasksParams(int64_t padding, PasteMasksParams* params) {
  if (padding < 0 || padding > kPasteMasksMaxPaddedSide) {
    return Status::Error("padding must lie in [0, ", kPasteMasksMaxPaddedSide, "], got ", padding);
  }
  params->padding = padding;
  return Status::Ok();
}

Status CheckPasteMasksShapes(const PasteMasksParams& params, const Shape& masks, const Shape& boxes,
                             const Shape& image_size) {
  if (masks.size() != 4 || masks[1] != 1 || masks[2] != masks[3]) {
    return Status::Error("masks must have shape [N, 1, M, M] (square masks, as torchvision's expand_masks assumes), "
                         "got shape ", ShapeToString(masks));
  }
  if (masks[2] < 1 || masks[2] + 2 * params.padding > kPasteMasksMaxPaddedSide) {
    return Status::Error("masks of side ", masks[2], " with padding ", params.padding, ": the padded side must lie in [1, ",
                         kPasteMasksMaxPaddedSide, "]");
  }
  if (boxes.size() != 2 || boxes[0] != masks[0] || boxes[1] != 4) {
    return Status::Error("boxes must have shape [N, 4] with N = ", masks[0], " (one box per mask), got shape ",
                         ShapeToString(boxes));
  }
  if (image_size.size() != 1 || image_size[0] != 2) {
    return Status::Error("image_size must have shape [2] (height, width), got shape ", ShapeToString(image_size));
  }
  return Status::Ok();
}

Status CheckPasteMasksImageSize(const int64_t* image_size, int64_t num_masks) {
  for (int k = 0; k < 2; ++k) {
    if (image_size[k] < 0 || image_size[k] > kPasteMasksMaxImageSide) {
      return Status::Error("image_size[", k, "] (the image ", k == 0 ? "height" : "width", ") must lie in [0, ",
                           kPasteMasksMaxImageSide, "], got ", image_size[k]);
    }
  }
  // height * width <= 2^40, so the product with the mask count overflows only past 2^22 masks.
  const int64_t plane = image_size[0] * image_size[1];
  if (plane > 0 && num_masks > (int64_t{1} << 62) / plane) {
    return Status::Error(num_masks, " masks of ", image_size[0], " x ", image_size[1],
                         " pixels are more than 2^62 output values");
  }
  return Status::Ok();
}

}  // namespace opbridge
