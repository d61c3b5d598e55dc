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

#ifdef __cplusplus
}
#endif

#endif /* OPBRIDGE_OPBRIDGE_ORT_H_ */
