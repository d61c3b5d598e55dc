// Sgemm for x86-64-v4 CPUs (see eigen_sgemm.cc). Compiled with -march=x86-64-v4.
#define OPBRIDGE_SGEMM_NAME SgemmX86_64_v4
#define OPBRIDGE_EIGEN_NAMESPACE Eigen_x86_64_v4
#include "eigen_sgemm/eigen_sgemm.inc"
