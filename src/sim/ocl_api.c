/* ocl_api.c - loads the OpenCL ICD loader at run time, names CL errors,
 * enumerates devices and reads the fault injection switch.
 * See ocl_api.h for why the loader is opened with dlopen.
 */
#define BP_OCL_API_IMPL 1
#include "ocl_api.h"

#include "engine_impl.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

bp_ocl_api bp_ocl;
bp_ocl_svm_api bp_ocl_svm;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
/* Non-empty until load_now succeeds, so a failed pthread_once reads as failure. */
static char load_error[512] = "OpenCL: the ICD loader was not loaded";

void bp_opencl_prepare(void)
{
    /* PoCL's worker threads pinned one to a core: unpinned, a thread woken
     * for a launch is sometimes placed on the core that is busy and waits
     * 1-5 ms for the other to pull it over, which makes the groups of
     * bp_k_steps call the launch off (docs/opencl.md). overwrite = 0: a
     * value the user set stays. */
    setenv("POCL_AFFINITY", "1", 0);
#ifdef _OPENMP
    /* PoCL's devices: its usual CPU device (pthread, called cpu in later
     * PoCL; tbb or cpu-tbb where a build makes that its default, as some
     * distributions do) and its basic one, which runs a kernel in the
     * host thread that waits for it. On the basic device the OpenCL
     * engine runs bp_k_steps' groups in threads of its own, one launch
     * each, as the CPU engine runs its passes: no wake of PoCL's threads
     * or of the host a launch (docs/opencl.md, "The team's threads").
     * PoCL lists basic first, so it is the device a CPU-only machine
     * gets. Unknown names are skipped; a value the user set stays.
     * Without OpenMP the engine has no threads of its own, and PoCL keeps
     * its default. */
    setenv("POCL_DEVICES", "pthread basic cpu tbb cpu-tbb", 0);
#endif
}

static void load_now(void)
{
    bp_opencl_prepare(); /* before the driver reads its settings */
    /* The versioned name is what Debian's ocl-icd-libopencl1 installs; the
     * plain name covers loaders installed from source. */
    const char *names[] = {"libOpenCL.so.1", "libOpenCL.so"};
    void *lib = NULL;
    const char *why = "not found";
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++) {
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char *d = dlerror();
            if (i == 0 && d)
                why = d;
        }
    }
    if (!lib) {
        snprintf(load_error, sizeof load_error,
                 "OpenCL: no ICD loader (dlopen libOpenCL.so.1: %s; install "
                 "ocl-icd-libopencl1 and a driver such as pocl-opencl-icd)", why);
        return;
    }
    /* dlsym returns void *; converting it to a function pointer through a
     * union avoids the ISO C object-to-function pointer cast warning. */
#define BP_OCL_SYM(fn)                                                         \
    {                                                                          \
        union { void *obj; __typeof__(fn) *f; } u;                            \
        u.obj = dlsym(lib, #fn);                                               \
        if (!u.obj) {                                                          \
            snprintf(load_error, sizeof load_error,                           \
                     "OpenCL: the ICD loader lacks %s (an OpenCL 1.2 loader " \
                     "is needed)", #fn);                                       \
            return;                                                            \
        }                                                                      \
        bp_ocl.p_##fn = u.f;                                                   \
    }
    BP_OCL_FUNCS(BP_OCL_SYM)
#undef BP_OCL_SYM
    /* OpenCL 2.0's, optional: an OpenCL 1.2 loader has none of them */
#define BP_OCL_OPT(field, name)                                                \
    {                                                                          \
        union { void *obj; __typeof__(bp_ocl_svm.field) f; } u;               \
        u.obj = dlsym(lib, name);                                              \
        bp_ocl_svm.field = u.f;                                                \
    }
    BP_OCL_OPT(alloc, "clSVMAlloc")
    BP_OCL_OPT(free, "clSVMFree")
    BP_OCL_OPT(set_arg, "clSetKernelArgSVMPointer")
#undef BP_OCL_OPT
    if (!bp_ocl_svm.alloc || !bp_ocl_svm.free || !bp_ocl_svm.set_arg)
        memset(&bp_ocl_svm, 0, sizeof bp_ocl_svm);
    load_error[0] = '\0';
}

/* From here on the CL names call through the table. */
#undef BP_OCL_API_IMPL
#include "ocl_api.h"

int bp_ocl_load(char *err, size_t errlen)
{
    int rc = pthread_once(&load_once, load_now);
    if (rc != 0)
        return bp_fail(err, errlen, "OpenCL: pthread_once failed: %s", strerror(rc));
    if (load_error[0])
        return bp_fail(err, errlen, "%s", load_error);
    return 0;
}

const char *bp_ocl_error_name(cl_int code)
{
    switch (code) {
#define BP_CL_ERR(name) case name: return #name;
    BP_CL_ERR(CL_SUCCESS)
    BP_CL_ERR(CL_DEVICE_NOT_FOUND)
    BP_CL_ERR(CL_DEVICE_NOT_AVAILABLE)
    BP_CL_ERR(CL_COMPILER_NOT_AVAILABLE)
    BP_CL_ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    BP_CL_ERR(CL_OUT_OF_RESOURCES)
    BP_CL_ERR(CL_OUT_OF_HOST_MEMORY)
    BP_CL_ERR(CL_PROFILING_INFO_NOT_AVAILABLE)
    BP_CL_ERR(CL_MEM_COPY_OVERLAP)
    BP_CL_ERR(CL_IMAGE_FORMAT_MISMATCH)
    BP_CL_ERR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    BP_CL_ERR(CL_BUILD_PROGRAM_FAILURE)
    BP_CL_ERR(CL_MAP_FAILURE)
    BP_CL_ERR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    BP_CL_ERR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    BP_CL_ERR(CL_COMPILE_PROGRAM_FAILURE)
    BP_CL_ERR(CL_LINKER_NOT_AVAILABLE)
    BP_CL_ERR(CL_LINK_PROGRAM_FAILURE)
    BP_CL_ERR(CL_DEVICE_PARTITION_FAILED)
    BP_CL_ERR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    BP_CL_ERR(CL_INVALID_VALUE)
    BP_CL_ERR(CL_INVALID_DEVICE_TYPE)
    BP_CL_ERR(CL_INVALID_PLATFORM)
    BP_CL_ERR(CL_INVALID_DEVICE)
    BP_CL_ERR(CL_INVALID_CONTEXT)
    BP_CL_ERR(CL_INVALID_QUEUE_PROPERTIES)
    BP_CL_ERR(CL_INVALID_COMMAND_QUEUE)
    BP_CL_ERR(CL_INVALID_HOST_PTR)
    BP_CL_ERR(CL_INVALID_MEM_OBJECT)
    BP_CL_ERR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    BP_CL_ERR(CL_INVALID_IMAGE_SIZE)
    BP_CL_ERR(CL_INVALID_SAMPLER)
    BP_CL_ERR(CL_INVALID_BINARY)
    BP_CL_ERR(CL_INVALID_BUILD_OPTIONS)
    BP_CL_ERR(CL_INVALID_PROGRAM)
    BP_CL_ERR(CL_INVALID_PROGRAM_EXECUTABLE)
    BP_CL_ERR(CL_INVALID_KERNEL_NAME)
    BP_CL_ERR(CL_INVALID_KERNEL_DEFINITION)
    BP_CL_ERR(CL_INVALID_KERNEL)
    BP_CL_ERR(CL_INVALID_ARG_INDEX)
    BP_CL_ERR(CL_INVALID_ARG_VALUE)
    BP_CL_ERR(CL_INVALID_ARG_SIZE)
    BP_CL_ERR(CL_INVALID_KERNEL_ARGS)
    BP_CL_ERR(CL_INVALID_WORK_DIMENSION)
    BP_CL_ERR(CL_INVALID_WORK_GROUP_SIZE)
    BP_CL_ERR(CL_INVALID_WORK_ITEM_SIZE)
    BP_CL_ERR(CL_INVALID_GLOBAL_OFFSET)
    BP_CL_ERR(CL_INVALID_EVENT_WAIT_LIST)
    BP_CL_ERR(CL_INVALID_EVENT)
    BP_CL_ERR(CL_INVALID_OPERATION)
    BP_CL_ERR(CL_INVALID_GL_OBJECT)
    BP_CL_ERR(CL_INVALID_BUFFER_SIZE)
    BP_CL_ERR(CL_INVALID_MIP_LEVEL)
    BP_CL_ERR(CL_INVALID_GLOBAL_WORK_SIZE)
    BP_CL_ERR(CL_INVALID_PROPERTY)
    BP_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR)
    BP_CL_ERR(CL_INVALID_COMPILER_OPTIONS)
    BP_CL_ERR(CL_INVALID_LINKER_OPTIONS)
    BP_CL_ERR(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef BP_CL_ERR
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: break;
    }
    static _Thread_local char buf[32];
    snprintf(buf, sizeof buf, "CL error %d", (int)code);
    return buf;
}

int bp_ocl_fail(char *err, size_t errlen, const char *call, cl_int code)
{
    return bp_fail(err, errlen, "OpenCL: %s failed: %s", call, bp_ocl_error_name(code));
}

const char *bp_ocl_type_name(cl_device_type t)
{
    if (t & CL_DEVICE_TYPE_GPU)
        return "GPU";
    if (t & CL_DEVICE_TYPE_CPU)
        return "CPU";
    if (t & CL_DEVICE_TYPE_ACCELERATOR)
        return "accelerator";
    return "other";
}

/* Copies a CL string property; "?" when the query fails (a name is only
 * for people, a failed query must not stop the listing). */
static void platform_string(cl_platform_id p, cl_platform_info what, char *out, size_t n)
{
    if (clGetPlatformInfo(p, what, n, out, NULL) != CL_SUCCESS)
        snprintf(out, n, "?");
    out[n - 1] = '\0';
}

static void device_string(cl_device_id d, cl_device_info what, char *out, size_t n)
{
    if (clGetDeviceInfo(d, what, n, out, NULL) != CL_SUCCESS)
        snprintf(out, n, "?");
    out[n - 1] = '\0';
}

int bp_ocl_devices(bp_ocl_device *out, int max, char *err, size_t errlen)
{
    if (bp_ocl_load(err, errlen) != 0)
        return -1;
    cl_uint np = 0;
    cl_int rc = clGetPlatformIDs(0, NULL, &np);
    if (rc == -1001 || (rc == CL_SUCCESS && np == 0))
        return bp_fail(err, errlen,
                       "OpenCL: no platform found (clGetPlatformIDs: %s; no ICD "
                       "such as pocl-opencl-icd is installed, or OCL_ICD_VENDORS "
                       "points where there is none)",
                       rc == CL_SUCCESS ? "0 platforms" : bp_ocl_error_name(rc));
    if (rc != CL_SUCCESS)
        return bp_ocl_fail(err, errlen, "clGetPlatformIDs", rc);
    if (np > 64)
        np = 64;
    cl_platform_id plats[64];
    rc = clGetPlatformIDs(np, plats, NULL);
    if (rc != CL_SUCCESS)
        return bp_ocl_fail(err, errlen, "clGetPlatformIDs", rc);
    int total = 0;
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        rc = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
        if (rc == CL_DEVICE_NOT_FOUND || nd == 0)
            continue; /* a platform with no device is not an error */
        if (rc != CL_SUCCESS)
            return bp_ocl_fail(err, errlen, "clGetDeviceIDs", rc);
        if (nd > 64)
            nd = 64;
        cl_device_id devs[64];
        rc = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL);
        if (rc != CL_SUCCESS)
            return bp_ocl_fail(err, errlen, "clGetDeviceIDs", rc);
        for (cl_uint d = 0; d < nd; d++, total++) {
            if (total >= max)
                continue;
            bp_ocl_device *o = &out[total];
            memset(o, 0, sizeof *o);
            o->platform = plats[p];
            o->device = devs[d];
            if (clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof o->type, &o->type, NULL) !=
                CL_SUCCESS)
                o->type = CL_DEVICE_TYPE_DEFAULT;
            platform_string(plats[p], CL_PLATFORM_NAME, o->platform_name,
                            sizeof o->platform_name);
            device_string(devs[d], CL_DEVICE_NAME, o->name, sizeof o->name);
        }
    }
    if (total == 0)
        return bp_fail(err, errlen, "OpenCL: no device found (clGetDeviceIDs: "
                       "CL_DEVICE_NOT_FOUND on every platform)");
    return total;
}

int bp_opencl_list_devices(FILE *f, char *err, size_t errlen)
{
    bp_ocl_device devs[64];
    int n = bp_ocl_devices(devs, 64, err, errlen);
    if (n < 0)
        return -1;
    if (n > 64)
        n = 64;
    for (int i = 0; i < n; i++)
        fprintf(f, "%d: %s / %s (%s)\n", i, devs[i].platform_name, devs[i].name,
                bp_ocl_type_name(devs[i].type));
    return n;
}

int bp_opencl_built(void)
{
    return 1;
}

int bp_ocl_fault_from_env(bp_ocl_fault *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *v = getenv("BALLPIT_OCL_FAIL");
    if (!v || !*v)
        return 0;
    if (strcmp(v, "build") == 0) {
        out->build = 1;
        return 0;
    }
    if (strcmp(v, "alloc") == 0) {
        out->alloc = 1;
        return 0;
    }
    if (strcmp(v, "clock") == 0) {
        out->clock_back = 1;
        return 0;
    }
    const char *num = NULL;
    if (strncmp(v, "step:", 5) == 0) {
        num = v + 5;
        out->step_code = CL_OUT_OF_RESOURCES;
    } else if (strncmp(v, "lost:", 5) == 0) {
        num = v + 5;
        out->step_code = CL_DEVICE_NOT_AVAILABLE;
    }
    if (num) {
        char *end = NULL;
        errno = 0;
        long k = strtol(num, &end, 10);
        if (errno == 0 && end != num && *end == '\0' && k >= 1) {
            out->step = k;
            return 0;
        }
    }
    return bp_fail(err, errlen,
                   "OpenCL: BALLPIT_OCL_FAIL=%s is not one of build, alloc, clock, "
                   "step:K, lost:K (K >= 1)", v);
}
