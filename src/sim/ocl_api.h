/* ocl_api.h - private: the OpenCL API as the OpenCL engine uses it.
 *
 * Why a table of function pointers: ballpit must start and run on the CPU
 * engine on a machine with no OpenCL ICD loader at all (issue 3), so the
 * loader (libOpenCL.so.1) is opened with dlopen on first use instead of
 * being linked. After `#include "ocl_api.h"` the usual names (clFinish, ...)
 * call through the table; bp_ocl_load() must have returned 0 first.
 *
 * Also here: CL error names for one-line messages, device enumeration in
 * the numbering `ballpit --list-devices` shows, and the fault injection
 * switch BALLPIT_OCL_FAIL (docs/opencl.md).
 */
#ifndef BP_OCL_API_H
#define BP_OCL_API_H

#include <stddef.h>

#include <CL/cl.h>

#define BP_OCL_FUNCS(X)                                                        \
    X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs)                 \
    X(clGetDeviceInfo) X(clCreateContext) X(clReleaseContext)                  \
    X(clCreateCommandQueue) X(clReleaseCommandQueue)                           \
    X(clCreateProgramWithSource) X(clBuildProgram) X(clGetProgramBuildInfo)    \
    X(clReleaseProgram) X(clCreateKernel) X(clReleaseKernel)                   \
    X(clSetKernelArg) X(clGetKernelWorkGroupInfo) X(clCreateBuffer)            \
    X(clReleaseMemObject) X(clEnqueueNDRangeKernel) X(clEnqueueWriteBuffer)    \
    X(clEnqueueReadBuffer) X(clEnqueueCopyBuffer) X(clFinish) X(clFlush)       \
    X(clWaitForEvents) X(clGetEventProfilingInfo) X(clReleaseEvent)           \
    X(clEnqueueMapBuffer) X(clEnqueueUnmapMemObject)

typedef struct bp_ocl_api {
#define BP_OCL_PTR(fn) __typeof__(fn) *p_##fn;
    BP_OCL_FUNCS(BP_OCL_PTR)
#undef BP_OCL_PTR
} bp_ocl_api;

extern bp_ocl_api bp_ocl;

/// OpenCL 2.0's fine-grained shared virtual memory, which ballpit takes
/// where the loader and the device have it (bp_k_steps' counters on CPU
/// devices: src/sim/engine_ocl.c). The build targets OpenCL 1.2, whose
/// headers declare none of it, hence the types and constants here. The
/// pointers are NULL where the loader lacks the calls.
#define BP_CL_DEVICE_SVM_CAPABILITIES 0x1053
#define BP_CL_DEVICE_SVM_FINE_GRAIN_BUFFER (1u << 1)
#define BP_CL_MEM_SVM_FINE_GRAIN_BUFFER (1u << 10)
typedef struct bp_ocl_svm_api {
    void *(*alloc)(cl_context ctx, cl_mem_flags flags, size_t size, cl_uint alignment);
    void (*free)(cl_context ctx, void *ptr);
    cl_int (*set_arg)(cl_kernel k, cl_uint index, const void *ptr);
} bp_ocl_svm_api;

extern bp_ocl_svm_api bp_ocl_svm;


/// Opens the ICD loader once (thread-safe). Returns 0, or -1 with
/// "OpenCL: no ICD loader (...)" in err.
int bp_ocl_load(char *err, size_t errlen);

/// "CL_OUT_OF_RESOURCES" etc. for a CL error code ("CL error -N" if unknown).
const char *bp_ocl_error_name(cl_int code);

/// Writes "OpenCL: CALL failed: CL_NAME" into err and returns -1.
int bp_ocl_fail(char *err, size_t errlen, const char *call, cl_int code);

/// One OpenCL device in the numbering of `ballpit --list-devices`:
/// platforms in the loader's order, devices of each in the platform's order.
typedef struct bp_ocl_device {
    cl_platform_id platform;
    cl_device_id device;
    cl_device_type type;
    char platform_name[128];
    char name[128];
} bp_ocl_device;

/// Fills up to max devices; returns how many exist (may exceed max), or -1
/// with a reason (no loader, no platform).
int bp_ocl_devices(bp_ocl_device *out, int max, char *err, size_t errlen);

/// "GPU", "CPU", "accelerator" or "other".
const char *bp_ocl_type_name(cl_device_type t);

/// Fault injection read from BALLPIT_OCL_FAIL (see docs/opencl.md):
/// "build" -> kernel build fails; "step:K" -> the K-th bp_engine_step
/// (1-based, per engine) fails with CL_OUT_OF_RESOURCES; "alloc" -> buffer
/// creation fails with CL_MEM_OBJECT_ALLOCATION_FAILURE; "lost:K" -> the
/// K-th step fails with CL_DEVICE_NOT_AVAILABLE; "clock" -> on an x86 CPU
/// device the kernels' time stamp counter runs backwards, so every
/// difference of it wraps (the steps must still run and report sane phase
/// times). Unset or empty: none.
typedef struct bp_ocl_fault {
    int build;
    int alloc;
    int clock_back;
    long step;        ///< fail this step number, 0 = never
    cl_int step_code; ///< the error the failing step reports
} bp_ocl_fault;

/// Parses BALLPIT_OCL_FAIL. Returns 0, or -1 with a reason for a value it
/// does not understand (a typo must not silently test nothing).
int bp_ocl_fault_from_env(bp_ocl_fault *out, char *err, size_t errlen);

#endif

/* The usual names call through the table. Outside the include guard so
 * ocl_api.c can include this header twice: without the names mapped while
 * it fills the table (BP_OCL_API_IMPL), then with them for the rest. */
#if !defined(BP_OCL_API_IMPL) && !defined(BP_OCL_API_REMAPPED)
#define BP_OCL_API_REMAPPED 1
#define clGetPlatformIDs bp_ocl.p_clGetPlatformIDs
#define clGetPlatformInfo bp_ocl.p_clGetPlatformInfo
#define clGetDeviceIDs bp_ocl.p_clGetDeviceIDs
#define clGetDeviceInfo bp_ocl.p_clGetDeviceInfo
#define clCreateContext bp_ocl.p_clCreateContext
#define clReleaseContext bp_ocl.p_clReleaseContext
#define clCreateCommandQueue bp_ocl.p_clCreateCommandQueue
#define clReleaseCommandQueue bp_ocl.p_clReleaseCommandQueue
#define clCreateProgramWithSource bp_ocl.p_clCreateProgramWithSource
#define clBuildProgram bp_ocl.p_clBuildProgram
#define clGetProgramBuildInfo bp_ocl.p_clGetProgramBuildInfo
#define clReleaseProgram bp_ocl.p_clReleaseProgram
#define clCreateKernel bp_ocl.p_clCreateKernel
#define clReleaseKernel bp_ocl.p_clReleaseKernel
#define clSetKernelArg bp_ocl.p_clSetKernelArg
#define clGetKernelWorkGroupInfo bp_ocl.p_clGetKernelWorkGroupInfo
#define clCreateBuffer bp_ocl.p_clCreateBuffer
#define clReleaseMemObject bp_ocl.p_clReleaseMemObject
#define clEnqueueNDRangeKernel bp_ocl.p_clEnqueueNDRangeKernel
#define clEnqueueWriteBuffer bp_ocl.p_clEnqueueWriteBuffer
#define clEnqueueReadBuffer bp_ocl.p_clEnqueueReadBuffer
#define clEnqueueCopyBuffer bp_ocl.p_clEnqueueCopyBuffer
#define clFinish bp_ocl.p_clFinish
#define clFlush bp_ocl.p_clFlush
#define clWaitForEvents bp_ocl.p_clWaitForEvents
#define clGetEventProfilingInfo bp_ocl.p_clGetEventProfilingInfo
#define clReleaseEvent bp_ocl.p_clReleaseEvent
#define clEnqueueMapBuffer bp_ocl.p_clEnqueueMapBuffer
#define clEnqueueUnmapMemObject bp_ocl.p_clEnqueueUnmapMemObject
#endif
