/* ocl_stub.c - the OpenCL entry points of a build without OpenCL.
 *
 * src/meson.build compiles this file instead of engine_ocl.c when the
 * OpenCL ICD loader or headers were not found (or -Dopencl=disabled), so
 * every caller links the same API and gets a clear one-line reason instead
 * of a missing symbol. Callers stay on the CPU engine.
 */
#include "engine_impl.h"

#define BP_OCL_NOT_BUILT                                                       \
    "OpenCL: this ballpit was built without OpenCL (install "                 \
    "ocl-icd-opencl-dev and opencl-headers, then rebuild with -Dopencl=enabled)"

bp_engine *bp_ocl_engine_create(const bp_engine_opts *opts, char *err, size_t errlen)
{
    (void)opts;
    bp_fail(err, errlen, "%s", BP_OCL_NOT_BUILT);
    return NULL;
}

int bp_opencl_list_devices(FILE *f, char *err, size_t errlen)
{
    (void)f;
    return bp_fail(err, errlen, "%s", BP_OCL_NOT_BUILT);
}

void bp_opencl_prepare(void)
{
}

int bp_opencl_built(void)
{
    return 0;
}
