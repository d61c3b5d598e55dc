/* opbridge: custom operators for ONNX Runtime.
 *
 * The library libopbridge_ort.so registers its ops under the domains "opbridge", "mmcv" and
 * "mmdeploy". Load it the usual way:
 *   Python:  so.register_custom_ops_library(opbridge.library_path())
 *   C++:     session_options.RegisterCustomOpsLibrary(ORT_TSTR("libopbridge_ort.so"));
 * or, when the application links the library, call RegisterCustomOps(options, OrtGetApiBase())
 * before creating the session. It needs ONNX Runtime >= 1.21.
 */
#ifndef OPBRIDGE_OPBRIDGE_ORT_H_
#define OPBRIDGE_OPBRIDGE_ORT_H_

#include <onnxruntime_c_api.h>

/* ORT_EXPORT is empty on Linux, and the library is built with hidden visibility. */
#if defined(_WIN32)
#define OPBRIDGE_EXPORT __declspec(dllexport)
#else
#define OPBRIDGE_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

OPBRIDGE_EXPORT OrtStatus* ORT_API_CALL RegisterCustomOps(OrtSessionOptions* options,
                                                     const OrtApiBase* api_base);

/* What this build of the library holds, as a JSON object (a static string): its version, and
 * whether it has CUDA kernels and for which GPU architectures, e.g.
 *   {"version": "0.1.0", "cuda": true, "cuda_architectures": "75-real;80-real;86-real;89-real;90"}
 * A CUDA build registers a CUDA twin of each identity that has a CUDA kernel (opbridge ops lists
 * them); it needs nothing of CUDA unless a session runs such a node on the GPU. */
OPBRIDGE_EXPORT const char* OpbridgeLibraryInfo(void);

#ifdef __cplusplus
}
#endif

#endif /* OPBRIDGE_OPBRIDGE_ORT_H_ */
