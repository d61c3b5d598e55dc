// Instance normalization is group normalization with G = C: each (sample, channel) plane is one
// group, so the statistics, their accuracy and the thread rules are group_norm.cc's.
#include "kernels/cpu/instance_norm.h"

#include "kernels/cpu/group_norm.h"

namespace opbridge::cpu {

Status InstanceNorm(const float* input, const NormLayout& layout, const float* scale, const float* bias,
                    float epsilon, float* output, const TaskRunner& runner) {
  // C = 0 has no plane to normalize (and no group count that divides it): nothing to do.
  if (layout.channels == 0) return Status::Ok();
  return GroupNorm(input, layout, layout.channels, scale, bias, epsilon, output, runner);
}

}  // namespace opbridge::cpu
