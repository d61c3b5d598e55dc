// Rotated-box IoU (float32) as host-and-device code, shared by the rotated NMS ops' CPU and CUDA
// kernels and the rotated RoI ops. Framework-free, allocation-free.
//
// The numerics are those of mmcv 1.x's single_box_iou_rotated<float> (mmcv/ops/csrc/common/
// box_iou_rotated_utils.hpp, itself from detectron2), which is what mmcv.ops.nms_rotated and
// box_iou_rotated compute on the CPU: the same centre shift, vertex formulas, operation order,
// epsilons and float/double split, so results agree bit for bit (with the hull sort made
// deterministic, see SortByAngle). A box is (cx, cy, w, h, theta), theta in radians.
//
// Accuracy, which is mmcv's: within a few 1e-7 of the true IoU for boxes of unit size and up
// whose edges cross at clear angles, but NOT where an edge of one box lies on the line of an
// edge of the other to within rounding (equal angles side by side in a row, integer boxes at
// multiples of 45 degrees, some near-duplicates). There the determinant of the two edges is
// rounding noise rather than 0, crossings are invented or lost, and the IoU can be wrong by up to
// its whole value (3.5e-8 instead of 0.5 in the gtest). mmcv's absolute tolerances (1e-6, 1e-8)
// also make it inaccurate for boxes smaller than about 0.1. Kept as is, for compatibility.
#pragma once

#include <math.h>
#include <stdint.h>

#include "core/host_device.h"

namespace opbridge::shared {

// A rotated box prepared for repeated IoU computations: the trigonometry is done once per box.
// mmcv's convention: the width axis points along (cos theta, sin theta), the height axis along
// (-sin theta, cos theta). cos_half = (float)cos((double)theta) * 0.5f, likewise sin_half: mmcv
// computes cos and sin in double, casts them to float, then halves them in float.
struct RotatedBox {
  float cx, cy, w, h;
  float cos_half, sin_half;
};

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

OPBRIDGE_HD inline void RotatedBoxBounds(const RotatedBox& box, float* x_lo, float* y_lo, float* x_hi, float* y_hi) {
  const float w = fabsf(box.w), h = fabsf(box.h);
  const float scale = fabsf(box.cx) + fabsf(box.cy) + w + h;
  const float thickness = Min(w, h);
  // Written so that NaN anywhere fails it (see above for the limits).
  const float c = fabsf(box.cos_half), s = fabsf(box.sin_half);
  const bool regular = thickness > kRotatedBoundsMargin * scale && thickness >= 0x1p-40f && scale <= 0x1p40f &&
                       c <= 0.5f && s <= 0.5f;
  if (!regular) {
    const float inf = INFINITY;
    *x_lo = -inf;
    *y_lo = -inf;
    *x_hi = inf;
    *y_hi = inf;
    return;
  }
  const float margin = kRotatedBoundsMargin * scale;
  // Half extents: the vertices are the centre -+ (c w, s w) -+ (-s h, c h).
  const float ex = c * w + s * h + margin;
  const float ey = s * w + c * h + margin;
  *x_lo = box.cx - ex;
  *x_hi = box.cx + ex;
  *y_lo = box.cy - ey;
  *y_hi = box.cy + ey;
}

// The steps of RotatedIntersectionArea.
namespace rotated_iou_detail {

// How: mmcv 1.x's single_box_iou_rotated<float> (box_iou_rotated_utils.hpp),
// rewritten step for step. What decides the last bits, and so is kept exactly as mmcv has it:
//   * which operations are float and which double (the centre shift, cos/sin; the epsilons are
//     double literals compared against float values, replaced by float constants that compare
//     identically);
//   * the operation order of every formula (the build has no FMA contraction, so float
//     expressions round exactly as written);
//   * the order in which intersection points are collected, which the hull's start point and
//     the order-dependent sort below see.
// The one deliberate difference is the hull sort (see SortByAngle).


struct Point {
  float x, y;
};

OPBRIDGE_HD inline Point Sub(Point a, Point b) { return {a.x - b.x, a.y - b.y}; }
OPBRIDGE_HD inline float Dot(Point a, Point b) { return a.x * b.x + a.y * b.y; }
OPBRIDGE_HD inline float Cross(Point a, Point b) { return a.x * b.y - b.x * a.y; }  // mmcv's operand order

// At most 4 x 4 edge crossings + 4 + 4 contained vertices, duplicates included.
constexpr int kMaxPoints = 24;

// mmcv's tolerances are double literals compared against float values. For a float x,
// x <= 1e-14 iff x <= (float)1e-14, x < 1e-6 iff x <= (float)1e-6 and x > 1e-8 iff
// x > (float)1e-8, because each of these roundings is just below the double (checked below):
// the comparisons stay in float, which is cheaper and lets the edge loop vectorize.
constexpr float kParallel = 0x1.6849b8p-47f;   // (float)1e-14: |det| <= it means parallel edges
constexpr float kCollinear = 0x1.0c6f7ap-20f;  // (float)1e-6: |cross| <= it means collinear
constexpr float kDuplicate = 0x1.5798eep-27f;  // (float)1e-8: |q|^2 <= it means the start point
static_assert(static_cast<double>(kParallel) <= 1e-14 && static_cast<double>(0x1.6849bap-47f) > 1e-14, "");
static_assert(static_cast<double>(kCollinear) < 1e-6 && static_cast<double>(0x1.0c6f7cp-20f) >= 1e-6, "");
static_assert(static_cast<double>(kDuplicate) <= 1e-8 && static_cast<double>(0x1.5798f0p-27f) > 1e-8, "");

// The box's vertices in mmcv's order (get_rotated_vertices), around centre (x, y): the centre
// RotatedIntersectionArea passes is already shifted. The last two are reflections of the first
// two through the centre, computed as mmcv does (2 * c - p, not c + offsets).
OPBRIDGE_HD inline void Vertices(const RotatedBox& b, float x, float y, Point (&p)[4]) {
  const float sh = b.sin_half * b.h, ch = b.cos_half * b.h;
  const float sw = b.sin_half * b.w, cw = b.cos_half * b.w;
  p[0] = {x - sh - cw, y + ch - sw};
  p[1] = {x + sh - cw, y - ch - sw};
  p[2] = {2 * x - p[0].x, 2 * y - p[0].y};
  p[3] = {2 * x - p[1].x, 2 * y - p[1].y};
}

// Appends the vertices of `inner` that lie in the rectangle `outer` (edges `outer_edge`), with
// mmcv's inclusive projection test: P is inside ABCD when its projections on AB and AD fall
// within them.
OPBRIDGE_HD inline int AddContainedVertices(const Point (&inner)[4], const Point (&outer)[4], const Point (&outer_edge)[4],
                         Point* out, int num) {
  const Point ab = outer_edge[0];
  const Point da = outer_edge[3];
  const float ab_ab = Dot(ab, ab);
  const float ad_ad = Dot(da, da);
  for (int i = 0; i < 4; ++i) {  // without branches: which vertices are inside is unpredictable
    const Point ap = Sub(inner[i], outer[0]);
    const float ap_ab = Dot(ap, ab);
    const float ap_ad = -Dot(ap, da);
    out[num] = inner[i];  // num < kMaxPoints here: at most 16 crossings and 7 vertices precede
    num += (ap_ab >= 0) & (ap_ad >= 0) & (ap_ab <= ab_ab) & (ap_ad <= ad_ad);
  }
  return num;
}

// mmcv's get_intersection_points: edge crossings (along p1's edges), then p1's vertices inside
// p2, then p2's vertices inside p1.
//
// Performance: the 16 edge pairs are computed without branches, four at a time (the j loop
// vectorizes; vector lanes round exactly as scalar float code does), and the crossings are
// appended in mmcv's order afterwards. Branching per pair instead, or skipping the divisions
// of pairs that fail cheaper tests, was slower (about 205 and 245 ns per IoU of two overlapping
// boxes on the development VM, against 120 ns with this loop): which pairs cross is
// unpredictable.
OPBRIDGE_HD inline int IntersectionPoints(const Point (&p1)[4], const Point (&p2)[4], Point (&out)[kMaxPoints]) {
  Point e1[4], e2[4];
  float e2x[4], e2y[4], p2x[4], p2y[4];
  for (int i = 0; i < 4; ++i) {
    e1[i] = Sub(p1[(i + 1) % 4], p1[i]);
    e2[i] = Sub(p2[(i + 1) % 4], p2[i]);
    e2x[i] = e2[i].x;
    e2y[i] = e2[i].y;
    p2x[i] = p2[i].x;
    p2y[i] = p2[i].y;
  }
  int num = 0;
  for (int i = 0; i < 4; ++i) {
    // Solve p1[i] + e1[i] t1 = p2[j] + e2[j] t2, with mmcv's Cross(a, b) = a.x b.y - b.x a.y:
    // det = Cross(e2[j], e1[i]), t1 = Cross(e2[j], d) / det, t2 = Cross(e1[i], d) / det,
    // d = p2[j] - p1[i]. Where mmcv skips the pair (|det| <= 1e-14, or NaN), the mask discards
    // it, and the divisor is det + 1 so that a zero det raises no division-by-zero flag (adding
    // 0 elsewhere is exact; an int mask turned into a float, because GCC 12 does not vectorize
    // the loop with a choice or a bool there).
    float t1[4];
    int hit[4];
    for (int j = 0; j < 4; ++j) {
      const float det = e2x[j] * e1[i].y - e1[i].x * e2y[j];
      const float dx = p2x[j] - p1[i].x, dy = p2y[j] - p1[i].y;
      const float n1 = e2x[j] * dy - dx * e2y[j];
      const float n2 = e1[i].x * dy - dx * e1[i].y;
      const int crossing = fabsf(det) > kParallel;
      const float divisor = det + static_cast<float>(1 - crossing);
      const float u = n1 / divisor, v = n2 / divisor;
      t1[j] = u;
      hit[j] = crossing & (u >= 0.0f) & (u <= 1.0f) & (v >= 0.0f) & (v <= 1.0f);
    }
    for (int j = 0; j < 4; ++j) {
      out[num] = {p1[i].x + e1[i].x * t1[j], p1[i].y + e1[i].y * t1[j]};  // num <= 15 here
      num += hit[j];
    }
  }
  num = AddContainedVertices(p1, p2, e2, out, num);
  num = AddContainedVertices(p2, p1, e1, out, num);
  return num;
}

// mmcv's hull order: A before B when B is counter-clockwise of A (cross > 0), and by distance
// from the start when they are collinear to within 1e-6 (an absolute tolerance).
OPBRIDGE_HD inline bool AngleLess(Point a, Point b) {
  const float c = Cross(a, b);
  if (fabsf(c) <= kCollinear) return Dot(a, a) < Dot(b, b);
  return c > 0;
}

// Sorts q[0..n) by AngleLess. mmcv uses std::sort, but AngleLess is not a strict weak order
// (the tolerance makes "collinear" intransitive), so std::sort's result for near-collinear
// points depends on the library's algorithm, and an invalid order may even let it read out of
// bounds. This is a plain insertion sort, deterministic for any input and safe, written as
// libstdc++'s __insertion_sort (a new element that belongs before the first goes straight
// there; otherwise it moves left while it compares less than its neighbour), which is exactly
// what libstdc++'s std::sort does for up to 16 elements, i.e. up to 17 intersection points:
// mmcv built with GCC gives the same order then even for near-collinear points. Longer inputs
// agree with std::sort whenever AngleLess is consistent on them.
OPBRIDGE_HD inline void SortByAngle(Point* q, int n) {
  for (int i = 1; i < n; ++i) {
    const Point v = q[i];
    if (AngleLess(v, q[0])) {
      for (int k = i; k > 0; --k) q[k] = q[k - 1];
      q[0] = v;
    } else {
      // Stops at index 1 at the latest, since v does not compare less than q[0].
      int k = i;
      while (AngleLess(v, q[k - 1])) {
        q[k] = q[k - 1];
        --k;
      }
      q[k] = v;
    }
  }
}

// mmcv's convex_hull_graham (with shift_to_zero) followed by polygon_area, for num >= 3 points.
OPBRIDGE_HD inline float HullArea(const Point (&p)[kMaxPoints], int num) {
  // The start is the lowest point, the leftmost of those (exact comparisons; the first wins).
  int t = 0;
  for (int i = 1; i < num; ++i) {
    const bool lower = (p[i].y < p[t].y) | ((p[i].y == p[t].y) & (p[i].x < p[t].x));
    t = lower ? i : t;
  }
  const Point start = p[t];
  Point q[kMaxPoints];
  for (int i = 0; i < num; ++i) q[i] = Sub(p[i], start);
  const Point first = q[0];
  q[0] = q[t];
  q[t] = first;
  SortByAngle(q + 1, num - 1);

  // The first point whose squared distance from the start is above 1e-8 (none: a single point).
  int k = 1;
  while (k < num && !(Dot(q[k], q[k]) > kDuplicate)) ++k;
  if (k == num) return 0.0f;
  q[1] = q[k];
  int m = 2;
  // Graham scan; collinear points are popped too (>= 0).
  for (int i = k + 1; i < num; ++i) {
    while (m > 1 && Cross(Sub(q[i], q[m - 2]), Sub(q[m - 1], q[m - 2])) >= 0) --m;
    q[m++] = q[i];
  }
  if (m <= 2) return 0.0f;

  // A fan from q[0], each triangle made positive; mmcv halves in double (exact either way).
  float area = 0.0f;
  for (int i = 1; i < m - 1; ++i) area += fabsf(Cross(Sub(q[i], q[0]), Sub(q[i + 1], q[0])));
  return static_cast<float>(area / 2.0);
}

OPBRIDGE_HD inline bool BoundsMeet(const RotatedBox& a, const RotatedBox& b) {
  float ax0, ay0, ax1, ay1, bx0, by0, bx1, by1;
  RotatedBoxBounds(a, &ax0, &ay0, &ax1, &ay1);
  RotatedBoxBounds(b, &bx0, &by0, &bx1, &by1);
  return !(ax1 < bx0 || bx1 < ax0 || ay1 < by0 || by1 < ay0);
}

}  // namespace rotated_iou_detail

// box5 = (cx, cy, w, h, theta).
OPBRIDGE_HD inline RotatedBox MakeRotatedBox(const float* box5) {
  const double theta = box5[4];
  RotatedBox b;
  b.cx = box5[0];
  b.cy = box5[1];
  b.w = box5[2];
  b.h = box5[3];
  b.cos_half = static_cast<float>(cos(theta)) * 0.5f;
  b.sin_half = static_cast<float>(sin(theta)) * 0.5f;
  return b;
}

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
OPBRIDGE_HD inline float RotatedIntersectionArea(const RotatedBox& a, const RotatedBox& b) {
  // Most pairs a caller tests are far apart; the bounds say so exactly (see RotatedBoxBounds).
  if (!rotated_iou_detail::BoundsMeet(a, b)) return 0.0f;

  // mmcv shifts both centres by their midpoint for precision: the sum in float, the halving in
  // double, the subtraction in double rounded to float.
  const double shift_x = static_cast<double>(a.cx + b.cx) / 2.0;
  const double shift_y = static_cast<double>(a.cy + b.cy) / 2.0;
  using rotated_iou_detail::Point;
  Point pa[4], pb[4];
  rotated_iou_detail::Vertices(a, static_cast<float>(a.cx - shift_x), static_cast<float>(a.cy - shift_y), pa);
  rotated_iou_detail::Vertices(b, static_cast<float>(b.cx - shift_x), static_cast<float>(b.cy - shift_y), pb);

  Point points[rotated_iou_detail::kMaxPoints];
  const int num = rotated_iou_detail::IntersectionPoints(pa, pb, points);
  if (num <= 2) return 0.0f;
  return rotated_iou_detail::HullArea(points, num);
}

// inter / (a.w * a.h + b.w * b.h - inter) in float32, exactly as mmcv's mode 0 (IoU), but
// WITHOUT mmcv's guard that returns 0 when either area is below 1e-14: callers apply their own
// rule to degenerate boxes before calling (mmcv's guard gives 0 for w or h <= 0, and for tiny
// positive areas too). Without a rule, a zero-area box gives garbage (see above): 9 / 0 = inf,
// or 0 / 0 = NaN for two of them.
OPBRIDGE_HD inline float RotatedIou(const RotatedBox& a, const RotatedBox& b) {
  const float area_a = a.w * a.h;
  const float area_b = b.w * b.h;
  const float inter = RotatedIntersectionArea(a, b);
  return inter / (area_a + area_b - inter);
}

}  // namespace opbridge::shared
