#include "core/inverse.h"

#include <sstream>

namespace opbridge {

Status MakeInverseParams(int64_t check_errors, InverseParams* params) {
  params->check_errors = check_errors == 1;
  return Status::Ok();
}

Status CheckInverseShape(const Shape& input) {
  if (input.size() < 2) {
    return Status::Error("input must have rank >= 2 [..., M, M] (a batch of square matrices), got shape ",
                         ShapeToString(input));
  }
  if (input[input.size() - 1] != input[input.size() - 2]) {
    return Status::Error("input must hold square matrices [..., M, M], got shape ", ShapeToString(input),
                         " (", input[input.size() - 2], " rows, ", input[input.size() - 1], " columns)");
  }
  // With M = 0 the leading dims can be anything ORT accepts, and their product must still count
  // the matrices (and size the info output).
  int64_t batch = 0;
  if (!CheckedNumElements(InverseInfoShape(input), &batch)) {
    return Status::Error("input's leading dims hold more than 2^63 - 1 matrices, got shape ", ShapeToString(input));
  }
  return Status::Ok();
}

int64_t InverseBatch(const Shape& input) { return NumElements(InverseInfoShape(input)); }

int64_t InverseOrder(const Shape& input) { return input.back(); }

Shape InverseInfoShape(const Shape& input) { return Shape(input.begin(), input.end() - 2); }

Status CheckInverseInfo(const Shape& input, const int32_t* info) {
  const Shape leading = InverseInfoShape(input);
  const int64_t batch = NumElements(leading);
  for (int64_t b = 0; b < batch; ++b) {
    if (info[b] == 0) continue;
    // The matrix's index in the leading dims: "input[1, 2, :, :]".
    std::ostringstream name;
    name << "input[";
    for (int64_t i : UnravelIndex(b, leading)) name << i << ", ";
    name << ":, :]";
    return Status::Error("the matrix ", name.str(), " is singular: diagonal element ", info[b],
                         " (counting from 1) of U in its LU factorization with partial pivoting is exactly zero, ",
                         "as torch.linalg.inv reports it; with check_errors = 0 its inverse holds inf or NaN ",
                         "and the info output tells which matrices are singular");
  }
  return Status::Ok();
}

}  // namespace opbridge
