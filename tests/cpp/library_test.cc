// RegisterCustomOps against a fake ORT: an older runtime is refused with a clear message, and
// nothing is dereferenced that an old runtime might lack.
#include <gtest/gtest.h>

#include <string>

#include "opbridge/opbridge_ort.h"

namespace {

struct FakeStatus {
  std::string message;
};

OrtStatus* ORT_API_CALL FakeCreateStatus(OrtErrorCode, const char* msg) noexcept {
  return reinterpret_cast<OrtStatus*>(new FakeStatus{msg});
}

OrtApi MakeFakeApi() {
  OrtApi api{};
  api.CreateStatus = &FakeCreateStatus;
  return api;
}

const OrtApi g_fake_api = MakeFakeApi();
const char* g_version = "";

const OrtApi* ORT_API_CALL FakeGetApi(uint32_t version) noexcept {
  return version == 1 ? &g_fake_api : nullptr;  // like a runtime older than the API asked for
}
const char* ORT_API_CALL FakeVersion() noexcept { return g_version; }

std::string RegisterWithRuntime(const char* version) {
  g_version = version;
  OrtApiBase base{&FakeGetApi, &FakeVersion};
  OrtStatus* status = RegisterCustomOps(nullptr, &base);
  if (status == nullptr) return "";
  auto* fake = reinterpret_cast<FakeStatus*>(status);
  std::string message = fake->message;
  delete fake;
  return message;
}

TEST(RegisterCustomOps, RefusesRuntimesOlderThan121) {
  EXPECT_EQ(RegisterWithRuntime("1.20.1"), "opbridge: needs ONNX Runtime >= 1.21, this process runs 1.20.1");
  EXPECT_EQ(RegisterWithRuntime("1.16.3"), "opbridge: needs ONNX Runtime >= 1.21, this process runs 1.16.3");
  EXPECT_EQ(RegisterWithRuntime("garbage"), "opbridge: needs ONNX Runtime >= 1.21, this process runs garbage");
}

TEST(RegisterCustomOps, ReportsARuntimeThatRefusesApi21) {
  // Claims 1.25 but hands out no API 21 table.
  EXPECT_EQ(RegisterWithRuntime("1.25.0"), "opbridge: ONNX Runtime refused API version 21");
}

TEST(RegisterCustomOps, NullApiBaseIsIgnored) { EXPECT_EQ(RegisterCustomOps(nullptr, nullptr), nullptr); }

}  // namespace
