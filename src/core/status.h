// opbridge: a minimal error-or-ok value shared by every backend.
//
// Validation and kernels never throw or abort on bad input: they return a Status whose message
// names the problem, the offending value and the rule. The backend glue (ORT today, TensorRT
// later) prefixes the op identity and turns it into the backend's own error type.
#pragma once

#include <sstream>
#include <string>
#include <utility>

namespace opbridge {

class Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }

  // Joins every argument with operator<< into one message.
  template <class... Parts>
  static Status Error(const Parts&... parts) {
    std::ostringstream os;
    (os << ... << parts);
    Status s;
    s.message_ = os.str();
    if (s.message_.empty()) s.message_ = "unknown error";
    return s;
  }

  bool ok() const { return message_.empty(); }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

// Returns early from the enclosing function when `expr` yields an error Status.
#define OPBRIDGE_RETURN_IF_ERROR(expr)          \
  do {                                          \
    ::opbridge::Status _opb_status = (expr);    \
    if (!_opb_status.ok()) return _opb_status;  \
  } while (0)

}  // namespace opbridge
