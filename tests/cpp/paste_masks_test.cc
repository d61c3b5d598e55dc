// PasteMasks kernel tests: hand-worked placements and values, boxes outside the image, thread
// independence, and a small case against values torchvision 0.29.1 computed.
#include "kernels/cpu/paste_masks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "half_values.h"
#include "kernels/shared/paste_masks_pixel.h"
#include "references.h"
#include "task_runners.h"

namespace opbridge {
namespace {

std::vector<float> RunPaste(const std::vector<float>& masks, int64_t mask_size, const std::vector<float>& boxes,
                            int64_t image_h, int64_t image_w, int64_t padding,
                            const TaskRunner& runner = SerialTaskRunner()) {
  const int64_t n = static_cast<int64_t>(boxes.size() / 4);
  EXPECT_EQ(masks.size(), static_cast<size_t>(n * mask_size * mask_size));
  std::vector<float> out(static_cast<size_t>(n * image_h * image_w), NAN);  // every element must be written
  HeapScratchAllocator scratch;
  Status s = cpu::PasteMasks(masks.data(), n, mask_size, boxes.data(), image_h, image_w, padding, out.data(),
                             scratch, runner);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

using testing::Bits;

// With padding 0 the expansion scale is exactly 1, so the integer box is the box truncated toward
// zero and the rectangle is known exactly; a constant mask resizes to (nearly) that constant.
TEST(PasteMasks, ConstantMaskPastesConstantRectangle) {
  const int64_t size = 28, h = 40, w = 50;
  const std::vector<float> masks(size * size, 0.75f);
  const auto out = RunPaste(masks, size, {10.5f, 20.25f, 40.75f, 30.0f}, h, w, 0);
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      const float v = out[y * w + x];
      if (x >= 10 && x <= 40 && y >= 20 && y <= 30) {  // inclusive integer corners (10, 20), (40, 30)
        EXPECT_NEAR(v, 0.75f, 1e-6) << y << "," << x;
      } else {
        EXPECT_EQ(Bits(v), 0u) << y << "," << x;  // +0 exactly
      }
    }
  }
}

// The padded border is zero: with padding, the resize fades to 0 at the box edges. A box
// exactly the padded size (mask_size + 2) resizes with weights (1, 0), i.e. copies the padded mask.
TEST(PasteMasks, BoxOfPaddedSizeCopiesThePaddedMask) {
  const int64_t size = 2;  // padded side 4, scale exactly 2
  const std::vector<float> masks = {1.0f, 2.0f, 3.0f, 4.0f};
  // Box (10, 10) - (11.5, 11.5): half size 0.75 * 2 = 1.5 around 10.75, so 9.25 .. 12.25,
  // truncated to pixels 9 .. 12: four, the padded size.
  const auto out = RunPaste(masks, size, {10.0f, 10.0f, 11.5f, 11.5f}, 16, 16, 1);
  const float padded[4][4] = {{0, 0, 0, 0}, {0, 1, 2, 0}, {0, 3, 4, 0}, {0, 0, 0, 0}};
  for (int64_t y = 0; y < 16; ++y) {
    for (int64_t x = 0; x < 16; ++x) {
      const bool inside = x >= 9 && x <= 12 && y >= 9 && y <= 12;
      EXPECT_EQ(out[y * 16 + x], inside ? padded[y - 9][x - 9] : 0.0f) << y << "," << x;
    }
  }
}

// A box crossing the image's top-left corner pastes exactly the part of the same box that lands
// inside, as a fully visible copy shifted by whole pixels shows (padding 0 and small integer
// coordinates keep the box arithmetic exact under the shift).
TEST(PasteMasks, BoxPartlyOutsidePastesTheVisiblePart) {
  const int64_t size = 7;
  std::vector<float> masks(size * size);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (float& v : masks) v = u(rng);
  const int64_t dx = 40, dy = 30;
  for (const std::vector<float>& box : {std::vector<float>{-12, -5, 20, 9},      // 15x33: channels-last kernel
                                        std::vector<float>{-120, -5, 20, 9}}) {  // 15x141: generic kernel
    const auto part = RunPaste(masks, size, box, 25, 25, 0);
    const auto whole = RunPaste(masks, size, {box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy}, 25 + dy, 25 + dx, 0);
    for (int64_t y = 0; y < 25; ++y) {
      for (int64_t x = 0; x < 25; ++x) {
        const bool inside = x <= box[2] && y <= box[3];
        const float expected = inside ? whole[(y + dy) * (25 + dx) + (x + dx)] : 0.0f;
        EXPECT_EQ(Bits(part[y * 25 + x]), Bits(expected)) << y << "," << x;
      }
    }
  }
}

// torchvision converts the expanded box with .to(int64), which truncates toward zero: -1.7 is
// pixel -1 (floor would give -2 and a wider resize).
TEST(PasteMasks, BoxCornersTruncateTowardZero) {
  const int64_t size = 5;
  std::vector<float> masks(size * size);
  for (int64_t i = 0; i < size * size; ++i) masks[i] = static_cast<float>(i % 7);
  const auto fractional = RunPaste(masks, size, {-1.7f, -2.6f, 5.2f, 6.9f}, 12, 12, 0);
  const auto integral = RunPaste(masks, size, {-1.0f, -2.0f, 5.0f, 6.0f}, 12, 12, 0);
  ASSERT_EQ(0, std::memcmp(fractional.data(), integral.data(), fractional.size() * sizeof(float)));
  EXPECT_NE(integral[0], 0.0f);
  EXPECT_EQ(integral[7 * 12 + 6], 0.0f);  // outside the box's last row and column
}

TEST(PasteMasks, BoxOutsideTheImagePastesNothing) {
  const int64_t size = 28;
  const std::vector<float> mask(size * size, 1.0f);
  // Left of, right of, above, below the image, and expanded to start exactly at the right edge
  // (pixel 32). torchvision rejects some of these with a shape mismatch (a box starting beyond
  // the right edge, or ending left of pixel -1 but not far enough left for its slicing).
  const std::vector<std::vector<float>> boxes = {
      {-60, 5, -10, 20}, {-300, 5, -200, 20}, {50, 5, 60, 20}, {5, -90, 20, -40}, {5, 45, 20, 70}, {33, 5, 34, 20}};
  for (const auto& box : boxes) {
    const auto out = RunPaste(mask, size, box, 30, 32, 1);
    for (float v : out) ASSERT_EQ(Bits(v), 0u) << box[0] << "," << box[1];
  }
}

TEST(PasteMasks, EmptyInputsAreFine) {
  HeapScratchAllocator scratch;
  EXPECT_TRUE(cpu::PasteMasks<float>(nullptr, 0, 28, nullptr, 100, 100, 1, nullptr, scratch, SerialTaskRunner()).ok());
  const std::vector<float> mask(28 * 28, 1.0f), box = {1, 1, 5, 5};
  EXPECT_TRUE(cpu::PasteMasks<float>(mask.data(), 1, 28, box.data(), 0, 100, 1, nullptr, scratch, SerialTaskRunner()).ok());
}

// A box far below a pixel: torchvision resizes the 30x30 padded mask to 1x1, whose one sample is
// at source (14.5, 14.5) with weights 0.25: the mean of mask[13..14][13..14].
TEST(PasteMasks, SinglePixelBox) {
  const int64_t size = 28;
  std::vector<float> mask(size * size, 100.0f);
  mask[13 * size + 13] = 1.0f;
  mask[13 * size + 14] = 2.0f;
  mask[14 * size + 13] = 3.0f;
  mask[14 * size + 14] = 4.0f;
  // x: 7.2 .. 7.6 expands to about 7.19 .. 7.61; y: 3.2 .. 3.6 to 3.19 .. 3.61: pixel (3, 7).
  const auto out = RunPaste(mask, size, {7.2f, 3.2f, 7.6f, 3.6f}, 10, 12, 1);
  for (int64_t i = 0; i < 10 * 12; ++i) EXPECT_EQ(out[i], i == 3 * 12 + 7 ? 2.5f : 0.0f) << i;
}

// Non-finite or astronomically large expanded boxes paste nothing (see paste_masks.h); a box
// millions of pixels wide is computed only where it meets the image.
TEST(PasteMasks, NonFiniteAndHugeBoxes) {
  const int64_t size = 28;
  const std::vector<float> mask(size * size, 0.5f);
  for (const std::vector<float>& box : {std::vector<float>{NAN, 0, 10, 10}, std::vector<float>{0, 0, INFINITY, 10},
                                        std::vector<float>{-INFINITY, 0, 10, 10}, std::vector<float>{0, 0, 1e30f, 10},
                                        std::vector<float>{-1e19f, 0, 1e19f, 10}}) {
    const auto out = RunPaste(mask, size, box, 20, 20, 1);
    for (float v : out) ASSERT_EQ(Bits(v), 0u) << box[0] << "," << box[2];
  }
  // Expanded to x in -3.25e9 .. 4.25e9 (the image's columns sample the middle of the mask) and
  // y in 1.64 .. 12.36, i.e. rows 1 .. 12 of a 12-row resize; rows 1 and 12 mix in the zero border.
  const auto wide = RunPaste(mask, size, {-3e9f, 2, 4e9f, 12}, 20, 20, 1);
  for (int64_t y = 0; y < 20; ++y) {
    for (int64_t x = 0; x < 20; ++x) {
      const float v = wide[y * 20 + x];
      if (y >= 2 && y <= 11) {
        EXPECT_NEAR(v, 0.5f, 1e-6) << y << "," << x;
      } else if (y == 1 || y == 12) {
        EXPECT_TRUE(v > 0.0f && v < 0.5f) << y << "," << x << ": " << v;
      } else {
        EXPECT_EQ(Bits(v), 0u) << y << "," << x;
      }
    }
  }
}

TEST(PasteMasks, ResultDoesNotDependOnThreads) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(0.0f, 1.0f), pos(-100.0f, 400.0f), len(0.5f, 300.0f);
  const int64_t size = 28, n = 40;
  std::vector<float> masks(n * size * size), boxes;
  for (float& v : masks) v = u(rng);
  for (int64_t i = 0; i < n; ++i) {
    const float x = pos(rng), y = pos(rng);
    boxes.insert(boxes.end(), {x, y, x + len(rng), y + len(rng)});
  }
  // 300 x 700 gives several row bands per mask.
  const auto serial = RunPaste(masks, size, boxes, 300, 700, 1, SerialTaskRunner());
  const auto threaded = RunPaste(masks, size, boxes, 300, 700, 1, testing::ThreadedTaskRunner(3));
  ASSERT_EQ(0, std::memcmp(serial.data(), threaded.data(), serial.size() * sizeof(float)));
}

// Values torchvision 0.29.1 computed (paste_masks_in_image with PyTorch 2.14.1 on an AVX-512 CPU):
// mask[y][x] = ((5x + 11y) % 13) / 13, boxes (1.3, 2.1, 4.7, 5.4), a 6x6 resize (channels-last
// kernel), and (-70.2, -60.7, 80.3, 90.1), a 226x225 resize (generic kernel), into a 6x6 image.
TEST(PasteMasks, MatchesTorchvisionBitForBit) {
  std::vector<float> masks(2 * 16);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t y = 0; y < 4; ++y)
      for (int64_t x = 0; x < 4; ++x) masks[(i * 4 + y) * 4 + x] = static_cast<float>((x * 5 + y * 11) % 13) / 13.0f;
  const auto out = RunPaste(masks, 4, {1.3f, 2.1f, 4.7f, 5.4f, -70.2f, -60.7f, 80.3f, 90.1f}, 6, 6, 1);
  const uint32_t expected[72] = {
      0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u,
      0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u,
      0x00000000u, 0x00000000u, 0x3ec4ec4fu, 0x3f44ec4fu, 0x3e1d89d9u, 0x00000000u,
      0x00000000u, 0x3f589d8au, 0x3e6c4ec5u, 0x3f1d89d9u, 0x00000000u, 0x00000000u,
      0x00000000u, 0x3f313b14u, 0x3d9d89d9u, 0x3eec4ec5u, 0x3f589d8au, 0x00000000u,
      0x00000000u, 0x3f09d89eu, 0x3f6c4ec5u, 0x3e9d89d9u, 0x3f313b14u, 0x00000000u,
      0x3eb54c0cu, 0x3eba8c5fu, 0x3ebfccb3u, 0x3ec50d06u, 0x3eca4d5bu, 0x3ecf8daeu,
      0x3eb334b2u, 0x3eb87505u, 0x3ebdb559u, 0x3ec2f5acu, 0x3ec83601u, 0x3ecd7654u,
      0x3eb11d58u, 0x3eb65dabu, 0x3ebb9dffu, 0x3ec0de52u, 0x3ec61ea7u, 0x3ecb5efau,
      0x3eaf05feu, 0x3eb44651u, 0x3eb986a5u, 0x3ebec6f8u, 0x3ec4074du, 0x3ec947a0u,
      0x3eaceea4u, 0x3eb22ef7u, 0x3eb76f4bu, 0x3ebcaf9eu, 0x3ec1eff3u, 0x3ec73046u,
      0x3eaad749u, 0x3eb0179cu, 0x3eb557f0u, 0x3eba9843u, 0x3ebfd898u, 0x3ec518ebu};
  for (int i = 0; i < 72; ++i) EXPECT_EQ(Bits(out[i]), expected[i]) << "element " << i;
}

TEST(PasteMasks, BadSizesAreErrors) {
  HeapScratchAllocator scratch;
  const std::vector<float> mask(16, 1.0f), box = {1, 1, 5, 5};
  std::vector<float> out(100);
  Status s = cpu::PasteMasks(mask.data(), 1, 0, box.data(), 10, 10, 1, out.data(), scratch, SerialTaskRunner());
  EXPECT_NE(s.message().find("mask_size"), std::string::npos) << s.message();
  s = cpu::PasteMasks(mask.data(), 1, 4, box.data(), 10, 10, -1, out.data(), scratch, SerialTaskRunner());
  EXPECT_NE(s.message().find("padding"), std::string::npos) << s.message();
  s = cpu::PasteMasks(mask.data(), 1, 4, box.data(), 10, 10, int64_t{1} << 40, out.data(), scratch, SerialTaskRunner());
  EXPECT_NE(s.message().find("padding"), std::string::npos) << s.message();
}

// ---- The CUDA kernel's code, run on the host ------------------------------------------------------
// The CUDA kernel places each mask (shared::PlaceMask), then its thread for an output pixel runs
// shared::PasteMaskPixel: the same functions on the host must give the CPU kernel's bits for every
// pixel, with both of PyTorch's bilinear kernels (small and large resizes), boxes partly or wholly outside, inverted, tiny, NaN, infinite and
// huge boxes, and with padding 0, 1 and 3.
TEST(PasteMasksDeviceCode, GivesTheCpuKernelsBits) {
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f), pos(-20.0f, 90.0f), size(0.3f, 120.0f);
  const int64_t mask_size = 14, image_h = 67, image_w = 83;
  std::vector<float> boxes = {NAN, 0, 10, 10,  0, 0, INFINITY, 10,  -3e9f, 2, 4e9f, 12,  50, 50, 40, 40,
                              100, 100, 140, 150,  3, 3, 3.2f, 3.4f};
  for (int b = 0; b < 40; ++b) {
    const float x = pos(rng), y = pos(rng);
    boxes.insert(boxes.end(), {x, y, x + size(rng), y + size(rng)});
  }
  const int64_t n = static_cast<int64_t>(boxes.size() / 4);
  std::vector<float> masks(n * mask_size * mask_size);
  for (float& v : masks) v = unit(rng);
  for (int64_t padding : {0, 1, 3}) {
    const auto cpu = RunPaste(masks, mask_size, boxes, image_h, image_w, padding);
    const float scale = shared::PasteMaskScale(mask_size, padding);
    std::vector<shared::PasteMaskPlacement> placements;  // the placement kernel: a thread per mask
    for (int64_t m = 0; m < n; ++m) placements.push_back(shared::PlaceMask(boxes.data() + 4 * m, scale, image_h, image_w));
    for (int32_t i = 0; i < static_cast<int32_t>(cpu.size()); ++i) {  // the pixel kernel, 32-bit indices
      const float device = shared::PasteMaskPixel<int32_t>(masks.data(), mask_size, padding, placements.data(),
                                                           image_h, image_w, i);
      ASSERT_EQ(Bits(device), Bits(cpu[i])) << "padding " << padding << ", element " << i;
    }
  }
}

// In half storage the CPU kernel (threaded too) and the device code give the same bits, and those are
// the float32 kernel's outputs on the half masks and boxes, rounded once; values near 1 and subnormal
// ones, both bilinear kernels, boxes partly outside.
template <class T>
void CheckHalfStorage() {
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f), pos(-20.0f, 90.0f), size(0.3f, 120.0f);
  const int64_t mask_size = 14, image_h = 67, image_w = 83, padding = 1;
  std::vector<float> boxes = {50, 50, 40, 40,  3, 3, 3.2f, 3.4f,  10.3f, 11.7f, 19.9f, 22.1f};
  for (int b = 0; b < 20; ++b) {
    const float x = pos(rng), y = pos(rng);
    boxes.insert(boxes.end(), {x, y, x + size(rng), y + size(rng)});
  }
  const int64_t n = static_cast<int64_t>(boxes.size() / 4);
  std::vector<float> masks(n * mask_size * mask_size);
  for (size_t i = 0; i < masks.size(); ++i) masks[i] = i % 7 == 0 ? unit(rng) * 1e-6f : unit(rng);
  const std::vector<T> half_masks = testing::StoredAs<T>(masks), half_boxes = testing::StoredAs<T>(boxes);
  const auto float32 = RunPaste(testing::FloatsOf(half_masks), mask_size, testing::FloatsOf(half_boxes), image_h,
                                image_w, padding);
  HeapScratchAllocator scratch;
  std::vector<T> cpu(float32.size()), threaded(float32.size());
  ASSERT_TRUE(cpu::PasteMasks(half_masks.data(), n, mask_size, half_boxes.data(), image_h, image_w, padding, cpu.data(),
                              scratch, SerialTaskRunner()).ok());
  ASSERT_TRUE(cpu::PasteMasks(half_masks.data(), n, mask_size, half_boxes.data(), image_h, image_w, padding,
                              threaded.data(), scratch, testing::ThreadedTaskRunner(3)).ok());
  const float scale = shared::PasteMaskScale(mask_size, padding);
  std::vector<shared::PasteMaskPlacement> placements;
  for (int64_t m = 0; m < n; ++m) placements.push_back(shared::PlaceMask(half_boxes.data() + 4 * m, scale, image_h, image_w));
  std::vector<T> device(cpu.size());
  for (int32_t i = 0; i < static_cast<int32_t>(cpu.size()); ++i) {
    shared::Store(&device[i], shared::PasteMaskPixel<int32_t>(half_masks.data(), mask_size, padding, placements.data(),
                                                              image_h, image_w, i));
  }
  testing::ExpectFloat32RoundedOnce(cpu, float32, {&device, &threaded});
}

TEST(PasteMasksDeviceCode, Float16StorageMatchesTheCpuKernelAndTheFloat32KernelRoundedOnce) {
  CheckHalfStorage<shared::Float16>();
}

TEST(PasteMasksDeviceCode, BFloat16StorageMatchesTheCpuKernelAndTheFloat32KernelRoundedOnce) {
  CheckHalfStorage<shared::BFloat16>();
}

}  // namespace
}  // namespace opbridge
