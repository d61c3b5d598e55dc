// Matrix inverse: parameters, validation and output shapes, shared by every backend.
//
// Numerics follow torch.linalg.inv (LU factorization with partial pivoting, then a solve with the
// identity); see docs/ops/inverse.md for the rules and where opbridge differs from the peers.
#pragma once

#include <cstdint>

#include "core/shape.h"
#include "core/status.h"

namespace opbridge {

struct InverseParams {
  // true: a singular matrix is an error (torch.linalg.inv, torch.inverse); false: its inverse
  // holds infinities or NaN and the info output reports it (torch.linalg.inv_ex).
  bool check_errors = true;
};

// The params (check_errors is 0 or 1: the values the manifest allows were checked by the glue's
// generated reader).
Status MakeInverseParams(int64_t check_errors, InverseParams* params);
// Shape rules: input [..., M, M], rank >= 2, the number of matrices fits int64.
Status CheckInverseShape(const Shape& input);
// The number of matrices (the product of the leading dims) and their order M.
int64_t InverseBatch(const Shape& input);
int64_t InverseOrder(const Shape& input);
// The info output's shape: the input's leading dims.
Shape InverseInfoShape(const Shape& input);
// Data rule under check_errors: every matrix is invertible (info 0, LAPACK's convention). The
// error names the first singular matrix by its index in the leading dims and the zero pivot.
Status CheckInverseInfo(const Shape& input, const int32_t* info);

}  // namespace opbridge
