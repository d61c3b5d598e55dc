// Instance normalization is group normalization with G = C: each (sample, channel) plane is one
// group, so the statistics, their accuracy and the thread rules are group_norm.cc's.
#include "kernels/cpu/instance_norm.h"

#include "kernels/cpu/group_norm.h"

namespace opbridge::cpu {

template <class T>
Status InstanceNorm(const T* input, const NormLayout& layout, const T* scale, const T* bias, float epsilon,
                    T* output, const TaskRunner& runner) {
  // C = 0 has no plane to normalize (and no group count that divides it): nothing to do.
  if (layout.channels == 0) return Status::Ok();
  return GroupNorm(input, layout, layout.channels, scale, bias, epsilon, output, runner);
}

template Status InstanceNorm<float>(const float*, const NormLayout&, const float*, const float*, float, float*,
                                    const TaskRunner&);
template Status InstanceNorm<shared::Float16>(const shared::Float16*, const NormLayout&, const shared::Float16*,
                                              const shared::Float16*, float, shared::Float16*, const TaskRunner&);
template Status InstanceNorm<shared::BFloat16>(const shared::BFloat16*, const NormLayout&, const shared::BFloat16*,
                                               const shared::BFloat16*, float, shared::BFloat16*, const TaskRunner&);

}  // namespace opbridge::cpu
