// Prints every op identity in the registration table, with its inputs, outputs and attributes,
// as JSON. The Python tests compare this with the manifest (python/opbridge/ops.toml).
#include <cstdio>
#include <string>

#include "ort/registration.h"

namespace {

// The glue's dtype names (numpy's spelling), and "T" for the op's type parameter.
const char* TypeName(ONNXTensorElementDataType t) {
  return t == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED ? "T" : opbridge::ort::DtypeName(t);
}

void PrintTensors(const std::vector<opbridge::ort::TensorSpec>& specs) {
  std::printf("[");
  for (size_t i = 0; i < specs.size(); ++i) {
    // An input taking a second dtype prints both, as the manifest spells it: "int64 or int32".
    std::string dtype = TypeName(specs[i].type);
    if (specs[i].also != ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) dtype += std::string(" or ") + TypeName(specs[i].also);
    std::printf("%s{\"name\": \"%s\", \"dtype\": \"%s\", \"optional\": %s, \"variadic\": %s}", i ? ", " : "",
                specs[i].name, dtype.c_str(), specs[i].optional ? "true" : "false",
                specs[i].variadic ? "true" : "false");
  }
  std::printf("]");
}

}  // namespace

int main() {
  using opbridge::ort::AttrKind;
  const auto& ops = opbridge::ort::RegisteredOps();
  std::printf("[\n");
  for (size_t k = 0; k < ops.size(); ++k) {
    const auto& op = ops[k];
    std::printf("  {\"domain\": \"%s\", \"name\": \"%s\", \"kernel\": \"%s\", \"provider\": \"%s\", \"inputs\": ",
                op.domain, op.name, op.kernel, op.provider);
    PrintTensors(op.schema->inputs);
    std::printf(", \"outputs\": ");
    PrintTensors(op.schema->outputs);
    std::printf(", \"t_types\": [");
    for (size_t i = 0; i < op.schema->t_types.size(); ++i) {
      std::printf("%s\"%s\"", i ? ", " : "", TypeName(op.schema->t_types[i]));
    }
    std::printf("]");
    std::printf(", \"attributes\": [");
    for (size_t i = 0; i < op.schema->attrs.size(); ++i) {
      const auto& a = op.schema->attrs[i];
      std::printf("%s{\"name\": \"%s\", ", i ? ", " : "", a.name);
      if (a.kind == AttrKind::kInt) {
        std::printf("\"type\": \"int\", \"default\": ");
        if (a.required) std::printf("null"); else std::printf("%lld", static_cast<long long>(a.int_default));
      } else if (a.kind == AttrKind::kFloat) {
        std::printf("\"type\": \"float\", \"default\": ");
        if (a.required) std::printf("null"); else std::printf("%.9g", a.float_default);
      } else if (a.kind == AttrKind::kInts) {
        std::printf("\"type\": \"ints\", \"default\": ");
        if (a.required) {
          std::printf("null");
        } else {
          std::printf("[");
          for (size_t v = 0; v < a.ints_default.size(); ++v) {
            std::printf("%s%lld", v ? ", " : "", static_cast<long long>(a.ints_default[v]));
          }
          std::printf("]");
        }
      } else if (a.kind == AttrKind::kFloats) {
        std::printf("\"type\": \"floats\", \"default\": ");
        if (a.required) {
          std::printf("null");
        } else {
          std::printf("[");
          for (size_t v = 0; v < a.floats_default.size(); ++v) std::printf("%s%.9g", v ? ", " : "", a.floats_default[v]);
          std::printf("]");
        }
      } else {
        std::printf("\"type\": \"string\", \"default\": ");
        if (a.required) std::printf("null"); else std::printf("\"%s\"", a.string_default);
      }
      std::printf(", \"required\": %s}", a.required ? "true" : "false");
    }
    std::printf("]}%s\n", k + 1 < ops.size() ? "," : "");
  }
  std::printf("]\n");
  return 0;
}
