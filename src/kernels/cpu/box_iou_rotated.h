// Rotated-box IoU (float32), shared by the rotated NMS ops and the rotated RoI ops.
// Framework-free, allocation-free.
//
// The numerics are those of mmcv 1.x's single_box_iou_rotated<float> (mmcv/ops/csrc/common/
// box_iou_rotated_utils.hpp, itself from detectron2), which is what mmcv.ops.nms_rotated and
// box_iou_rotated compute on the CPU: the same centre shift, vertex formulas, operation order,
// epsilons and float/double split, so results agree bit for bit (with the hull sort made
// deterministic, see box_iou_rotated.cc). A box is (cx, cy, w, h, theta), theta in radians.
//
// Accuracy, which is mmcv's: within a few 1e-7 of the true IoU for boxes of unit size and up
// whose edges cross at clear angles, but NOT where an edge of one box lies on the line of an
// edge of the other to within rounding (equal angles side by side in a row, integer boxes at
// multiples of 45 degrees, some near-duplicates). There the determinant of the two edges is
// rounding noise rather than 0, crossings are invented or lost, and the IoU can be wrong by up to
// its whole value (3.5e-8 instead of 0.5 in the gtest). mmcv's absolute tolerances (1e-6, 1e-8)
// also make it inaccurate for boxes smaller than about 0.1. Kept as is, for compatibility.
#pragma once

namespace opbridge::cpu {

// A rotated box prepared for repeated IoU computations: the trigonometry is done once per box.
// mmcv's convention: the width axis points along (cos theta, sin theta), the height axis along
// (-sin theta, cos theta). cos_half = (float)cos((double)theta) * 0.5f, likewise sin_half: mmcv
// computes cos and sin in double, casts them to float, then halves them in float.
struct RotatedBox {
  float cx, cy, w, h;
  float cos_half, sin_half;
};

// box5 = (cx, cy, w, h, theta).
RotatedBox MakeRotatedBox(const float* box5);

// Area of the intersection of a and b, as mmcv's rotated_boxes_intersection computes it after
// single_box_iou_rotated's shift of both centres to their midpoint. Not symmetric: like mmcv,
// the edge intersection points are computed along a's edges, which changes the last bits (and
// more in the cases above), so pass the boxes in the order the op being reproduced passes them.
// Degenerate boxes are not rejected here, and a box with w or h == 0 does NOT give 0: mmcv's
// vertex-in-box test projects onto the box's two edges, and with an edge of length 0 every point
// passes that half of the test, so the zero-width box acts as a band across the other box (a
// 0 x 4 box through the middle of a 3 x 3 one gives 9). mmcv's single_box_iou_rotated returns 0
// first when an area is below 1e-14, which hides the exact zero-width case; our callers must
// reject such boxes themselves (w or h < 0 is harmless: it describes the box with |w| and |h|).
// The same happens, in mmcv too, to a box above that guard but smaller than the float precision
// of its (shifted) coordinates: its four corners round to one point, and it "contains" every
// point of the other box (a 1e-6 x 1e-6 box at (50, 50) gets an infinite IoU with a 5 x 5 box
// far away). Kept, as mmcv computes it.
float RotatedIntersectionArea(const RotatedBox& a, const RotatedBox& b);

// inter / (a.w * a.h + b.w * b.h - inter) in float32, exactly as mmcv's mode 0 (IoU), but
// WITHOUT mmcv's guard that returns 0 when either area is below 1e-14: callers apply their own
// rule to degenerate boxes before calling (mmcv's guard gives 0 for w or h <= 0, and for tiny
// positive areas too). Without a rule, a zero-area box gives garbage (see above): 9 / 0 = inf,
// or 0 / 0 = NaN for two of them.
float RotatedIou(const RotatedBox& a, const RotatedBox& b);

// A closed axis-aligned rectangle [x_lo, x_hi] x [y_lo, y_hi] such that, when the rectangles of
// two boxes do not meet (one's x_hi < the other's x_lo, or likewise in y),
// RotatedIntersectionArea returns exactly 0 for them, in either order. Callers use it to skip
// pairs; RotatedIntersectionArea itself skips such pairs this way.
//
// It is the rectangle around the box's four vertices widened on every side by
// kRotatedBoundsMargin * scale, scale = |cx| + |cy| + |w| + |h|. Why that is conservative:
// inside RotatedIntersectionArea the vertices are computed relative to the midpoint of the two
// centres, and each vertex coordinate carries the rounding of about six float operations on
// values up to (|cx_a| + |cx_b|) / 2 + the box's extent, i.e. a few 2^-24 of the two boxes'
// scales; the edge and vertex-in-box tests add errors of the same order. The margin is 2^8
// times that unit on each box, so two rectangles that do not meet leave a gap of at least
// ~2^8 rounding units between the vertices RotatedIntersectionArea computes: no vertex of one
// box passes the test for being inside the other, and an edge pair can pass the edge test only
// when the two edges lie on one line to within rounding (mmcv's t1, t2 are then rounding noise).
// Such pairs give at most one point per edge pair, and two separated boxes that are not thin
// have at most two of them (three would need their end edges to coincide as well, which the
// gap rules out): mmcv needs 3 points for a non-zero area. A thin box, whose two long edges
// lie on one line to within rounding, breaks that count: for a box with
// min(|w|, |h|) <= kRotatedBoundsMargin * scale (or non-finite values, or sizes below 2^-40 or
// a scale above 2^40, where products underflow or could overflow) the rectangle is the whole
// plane (infinite bounds), so such a box is never skipped. Real boxes are far from that
// (2^-16 is 1.5e-5 of the coordinates: 0.015 px at x = 1000). Checked against mmcv's code (which
// never skips) on 30 million pairs, adversarial ones included: mmcv gave 0 for every pair these
// rectangles separate; separated neighbours gave non-zero results only at gaps of 1e-7 of the
// coordinates, and thin boxes on one line did with plain (finite) rectangles.
constexpr float kRotatedBoundsMargin = 1.0f / 65536.0f;  // 2^-16, relative to the box's scale
void RotatedBoxBounds(const RotatedBox& box, float* x_lo, float* y_lo, float* x_hi, float* y_hi);

}  // namespace opbridge::cpu
