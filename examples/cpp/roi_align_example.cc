// A C++ application running an ONNX model with opbridge's ops in ONNX Runtime.
//
//   roi_align_example <model.onnx> <path/to/libopbridge_ort.so>   ORT loads the library
//   roi_align_example <model.onnx> --linked                       the app calls RegisterCustomOps
//
// The model takes "input" [1, 1, 4, 4] and "rois" [1, 5] (a one-node RoIAlign model, for
// example); the program feeds 0..15 and one box and prints the output values.
// Build with CMake against an installed opbridge (examples/cpp/CMakeLists.txt, find_package(opbridge)),
// or by hand (see tests/python/test_library.py): g++ -std=c++17 roi_align_example.cc
//   -I<ORT headers> -L<dir of libonnxruntime.so> -lonnxruntime [-lopbridge_ort for --linked]
#include <onnxruntime_cxx_api.h>

#include <cstdio>
#include <cstring>
#include <vector>

#ifdef OPBRIDGE_LINKED
#include "opbridge/opbridge_ort.h"
#endif

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <model.onnx> <libopbridge_ort.so | --linked>\n", argv[0]);
    return 2;
  }
  try {
    Ort::Env env(ORT_LOGGING_LEVEL_WARNING, "opbridge-example");
    Ort::SessionOptions options;
    if (std::strcmp(argv[2], "--linked") == 0) {
#ifdef OPBRIDGE_LINKED
      Ort::ThrowOnError(RegisterCustomOps(options, OrtGetApiBase()));
#else
      std::fprintf(stderr, "built without OPBRIDGE_LINKED\n");
      return 2;
#endif
    } else {
      options.RegisterCustomOpsLibrary(argv[2]);
    }
    Ort::Session session(env, argv[1], options);

    std::vector<float> input(16);
    for (int i = 0; i < 16; ++i) input[i] = static_cast<float>(i);
    std::vector<float> rois = {0.f, 0.5f, 0.5f, 3.0f, 2.5f};
    const int64_t input_shape[] = {1, 1, 4, 4};
    const int64_t rois_shape[] = {1, 5};
    auto memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    Ort::Value inputs[] = {
        Ort::Value::CreateTensor<float>(memory, input.data(), input.size(), input_shape, 4),
        Ort::Value::CreateTensor<float>(memory, rois.data(), rois.size(), rois_shape, 2)};
    const char* input_names[] = {"input", "rois"};
    const char* output_names[] = {"output"};
    auto outputs = session.Run(Ort::RunOptions{nullptr}, input_names, inputs, 2, output_names, 1);
    const float* out = outputs[0].GetTensorData<float>();
    const size_t count = outputs[0].GetTensorTypeAndShapeInfo().GetElementCount();
    for (size_t i = 0; i < count; ++i) std::printf("%s%.6f", i ? " " : "", out[i]);
    std::printf("\n");
  } catch (const Ort::Exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
