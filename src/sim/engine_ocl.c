/* engine_ocl.c - the OpenCL engine: the passes of kernels/bp_physics.h as
 * kernels (kernels/ballpit.cl), state kept on the device between steps.
 *
 * Design (docs/opencl.md has the long form):
 *  - The program is kernels/ballpit.cl with bp_physics.h inlined, embedded
 *    at build time (tools/embed_cl.py), built with FP contraction off and
 *    correctly rounded divide/sqrt where the device offers it, so the same
 *    float operations run as in the CPU engine.
 *  - One bp_engine_step enqueues all its sub-steps and waits once, at the
 *    end. On a CPU device (PoCL) that is one launch of bp_k_steps, whose
 *    work-groups spin at barriers instead of the runtime's threads
 *    sleeping at every kernel boundary; the first step after an attach,
 *    and every step on a GPU, runs 4 kernels a sub-step on a CPU device,
 *    7 on a GPU. The max speed needed by the neighbour search is reduced
 *    on the device and read there by the kernels.
 *  - Before the sub-steps the state is copied to backup buffers on the
 *    device, so when a step fails part way the last good state can still
 *    be read back (bp_engine_read after a failed step returns it).
 *  - Every failing CL call ends in a one-line "OpenCL: CALL failed:
 *    CL_NAME" and -1; the caller keeps its world and can switch to the CPU.
 *  - BALLPIT_OCL_FAIL injects faults for tests (ocl_api.h, docs/opencl.md).
 */
#include "engine_impl.h"
#include "order.h"
#include "ocl_api.h"
#include "team_pick.h"
#include "step.h"

#include "ballpit_cl_source.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Work-group sizes. Per-ball kernels: 128 is a multiple of every GPU's
 * warp/wavefront and large enough that PoCL's per-work-group overhead is
 * spread over many balls (docs/opencl.md has the measurements). The scan
 * constants are compiled into the program with -D. */
#define BP_OCL_LOCAL 128
#define BP_OCL_SCAN_LOCAL 256
#define BP_OCL_SCAN_ITEMS 16
#define BP_OCL_SCAN_BLOCK (BP_OCL_SCAN_LOCAL * BP_OCL_SCAN_ITEMS)
/* The longest BALLPIT_OCL_BUILD_OPTIONS taken (build_program). */
#define BP_OCL_MORE_OPTIONS_MAX 512
/* bp_k_steps: the flags its groups add to the check-in count when they
 * call a launch off and to the barrier count when they end it early
 * (compiled in with -D), and the balls a group takes at a time. */
#define BP_OCL_SYNC_OFF 0x40000000u
#define BP_OCL_SYNC_STOP 0x80000000u
/* bp_k_steps' counters (kernels/ballpit.cl): 4, a speed maximum per
 * group, G + 1 cuts of pass 3's slots, a time per group, G + 1 cuts of
 * pass 5's balls, a time per group, G + 1 cuts of the grid's parts, a
 * time per group, each part of the grid's merge: its movers, then its
 * cells and old slots (4 words), the processor of each group, and the
 * ticks / 64 of the step's phases (TEAM_TICKS) */
#define SYNC_WORDS(G) (SYNC_TICKS(G) + TEAM_TICKS)
/* Where those ticks begin, and how many (kernels/ballpit.cl,
 * bp_team_phase): group 0's in the first sub-step's integration (pass 0),
 * the grid, the ball contacts and resolve, the moves with the next
 * sub-steps' integrations, and those integrations alone */
#define SYNC_TICKS(G) (7 + 8 * (size_t)(G) + 5 * TEAM_PARTS_MAX)
#define TEAM_TICKS 5
/* Where cut block k (0: pass 3's slots, 1: pass 5's balls, 2: the grid's
 * parts) begins in them (bp_team_cuts) */
#define SYNC_CUTS(G, k) (4 + (size_t)(G) + (size_t)(k) * (2 * (size_t)(G) + 1))
/* bp_k_steps' passes per sub-step, and the most parts it builds the grid
 * in (each part's count array is ncells words; kernels/ballpit.cl) */
#define TEAM_PASSES 6u
#define TEAM_PARTS_MAX 4u
/* The most balls of a world whose grid bp_k_steps merges from the last
 * sub-step's (kernels/bp_physics.h) instead of counting it anew, as the
 * CPU engine's MERGE_MAX_BALLS (docs/benchmarks.md, fifty-first session;
 * 32,768 until the eighty-fifth, whose Zen 3 ran PoCL's pile 50k 0.95-0.98
 * of the frame time merged, its rain 50k level, its rain 200k 0.91 in
 * the bench's rows in turns); below BP_ORDER_LARGE, as there */
#define TEAM_MERGE_MAX (BP_ORDER_LARGE - 1u)
#define BP_OCL_CHUNK_MIN 128
#define BP_OCL_CHUNK_MAX 1024

enum {
    K_INTEGRATE, K_SCAN_BLOCKS, K_SCAN_TOP, K_SCATTER, K_RANK, K_CONTACTS, K_RESOLVE,
    K_MOVE, K_GRID_SERIAL, K_GATHER, K_GATHER_BACK, K_ORDER_CELL, K_ORDER_SERIAL, K_BACKUP,
    K_STEPS, K_COUNT
};
/* Kernel names in enum order. */
static const char *const k_names[K_COUNT] = {
    [K_INTEGRATE] = "bp_k_integrate", [K_SCAN_BLOCKS] = "bp_k_scan_blocks",
    [K_SCAN_TOP] = "bp_k_scan_top",   [K_SCATTER] = "bp_k_scatter",
    [K_RANK] = "bp_k_rank",           [K_CONTACTS] = "bp_k_contacts",
    [K_RESOLVE] = "bp_k_resolve",     [K_MOVE] = "bp_k_move",
    [K_GRID_SERIAL] = "bp_k_grid_serial", [K_GATHER] = "bp_k_gather",
    [K_GATHER_BACK] = "bp_k_copy_state", [K_ORDER_CELL] = "bp_k_order_cell",
    [K_ORDER_SERIAL] = "bp_k_order_serial", [K_BACKUP] = "bp_k_copy_state",
    [K_STEPS] = "bp_k_steps",
};

/* bp_k_move's argument integrate_next: after P and its 12 buffers. */
#define K_MOVE_NEXT 13
/* bp_k_steps' last two arguments: the team's size and the group's index
 * where each group is a launch of its own (launch_steps) */
#define STEPS_OWN_G 35
#define STEPS_OWN_g 36

/* Device buffers, grouped by what sizes them. */
enum {
    /* per ball */
    B_X, B_Y, B_VX, B_VY, B_R, B_M, B_SUM, B_CELL, B_SLOT, B_SORTED,
    B_SPOS, B_BEST, B_V2, B_BX, B_BY, B_BVX, B_BVY, B_SPLIT, B_NCONTACT,
    /* per cell, per cell + 1, per scan block (two) */
    B_COUNT, B_LOCAL, B_START, B_BLOCK, B_BLOCK_V2MAX,
    /* lines, segment grid cells + 1, segment grid list, its cells' gaps */
    B_LX1, B_LY1, B_LX2, B_LY2, B_SEG_START, B_SEG_LIST, B_SEG_GAP,
    /* one float; the team's counters and its grid's count arrays (bp_k_steps) */
    B_V2MAX, B_SYNC, B_TEAM_COUNT,
    B_NUM
};
#define B_FIRST_BALL B_X
#define B_LAST_BALL B_NCONTACT

/* One group of bp_k_steps run by the engine's own threads (o->own): its
 * queue and kernel object (group 0 uses the engine's q and k[K_STEPS]:
 * these two stay NULL), and how its last launch went. */
typedef struct team_member {
    cl_command_queue q;
    cl_kernel k;
    cl_int rc; /* the result of its part of the last launch */
    int call;  /* and the call it came from (launch_steps' calls[]) */
} team_member;

typedef struct ocl_engine {
    bp_engine base;
    cl_context ctx;
    cl_device_id dev;
    cl_command_queue q;
    cl_program prog;
    cl_kernel k[K_COUNT];
    cl_mem b[B_NUM];
    size_t cap[B_NUM];          /* elements allocated per buffer */
    size_t bytes[B_NUM];        /* and bytes */
    size_t local;               /* per-ball local size */
    int grid_serial;            /* grid build: 1 one work-item (CPU devices), 0 parallel */
    int reorder;                /* re-sort by place: 1 on the device (ocl_reorder) */
    int order_here;             /* its order worked out on the device where it can be */
    int gaps;                   /* bp_k_steps reads the segment grid's gaps (0: walks) */
    int team;                   /* steps in one launch of bp_k_steps (CPU devices) */
    size_t groups;              /* its work-groups, one work-item each */
    /* The groups run by the engine's own threads, each group a launch of
     * one work-item on a queue of its own (PoCL's basic device, which runs
     * a kernel in the thread that waits for it): own is 1 there, and
     * tm[g], g < groups, is group g's (team_member). */
    int own;
    team_member *tm;
    bp_team_pick pick;          /* launches of all the groups or of one (below) */
    cl_uint chunk;              /* balls a group takes at a time */
    cl_uint chunk_set;          /* BALLPIT_OCL_CHUNK, or 0 */
    long team_steps;            /* steps since attach (the first runs as kernels) */
    int team_launches, team_off; /* in the last step: launches, and those called off */
    double share[4];            /* phase shares of the wall time, from that step */
    uint32_t share_n;           /* balls when they were timed (0: not yet) */
    bp_step_params P;           /* from the attached world */
    uint32_t n, ncells, nblocks;
    /* the re-sort's grid (bp_order_grid), when the device orders it: the
     * parallel grid build's kernels sort it, or on CPU devices (grid_serial)
     * bp_k_order_serial (0 cells: the host orders) */
    uint32_t ocells, oblocks;
    bp_seggrid sg;
    uint32_t balls_version, lines_version;
    int attached;
    bp_ocl_fault fault;
    long steps;                 /* bp_engine_step calls so far */
    int profile;                /* BALLPIT_OCL_PROFILE set: print kernel times */
    int roles;                  /* bp_k_steps' groups take their parts by processor */
    cl_uint *sync_rd; /* SYNC_WORDS(groups): bp_k_steps' counters as the last launch left them */
    /* bp_k_steps' counters in fine-grained shared virtual memory, which
     * the host reads and clears itself after a launch's wait; NULL where
     * they are the buffer B_SYNC, read and cleared by commands (choose_counters) */
    cl_uint *sync_svm;
    int broken;                 /* a step failed: the device state is suspect */
    int read_backup;            /* after a failure: B_BX.. hold the last good state */
    char broken_why[256];
    float *rbuf;                /* read-back scratch, 4 floats per ball */
    size_t rbuf_cap;
    cl_mem rmem;                /* rbuf's buffer where mapped from one, else NULL */
} ocl_engine;

/* ---- Helpers ---------------------------------------------------------- */

/* The bp_k_steps kernel object of group g: the engine's own for group 0
 * (and wherever the groups are not the engine's threads), else the
 * copy on group g's queue. */
static cl_kernel steps_kernel(const ocl_engine *o, size_t g)
{
    return g ? o->tm[g].k : o->k[K_STEPS];
}

/* The groups that have a bp_k_steps of their own: 1, or all of them
 * where the engine's threads run the groups. */
static size_t steps_kernels(const ocl_engine *o)
{
    return o->tm ? o->groups : 1;
}

static int set_arg(ocl_engine *o, int k, cl_uint idx, size_t size, const void *val, char *err,
                   size_t errlen)
{
    cl_int rc = clSetKernelArg(o->k[k], idx, size, val);
    /* the team's threads' copies of bp_k_steps take every argument too */
    for (size_t g = 1; k == K_STEPS && g < steps_kernels(o) && rc == CL_SUCCESS; g++)
        rc = clSetKernelArg(steps_kernel(o, g), idx, size, val);
    if (rc != CL_SUCCESS) {
        char call[96];
        snprintf(call, sizeof call, "clSetKernelArg(%s, %u)", k_names[k], (unsigned)idx);
        return bp_ocl_fail(err, errlen, call, rc);
    }
    return 0;
}

static int set_mem(ocl_engine *o, int k, cl_uint idx, int buf, char *err, size_t errlen)
{
    return set_arg(o, k, idx, sizeof(cl_mem), &o->b[buf], err, errlen);
}

/* Buffers bufs[0 .. nbufs-1] as arguments first, first + 1, ... of kernel k. */
static int set_mems(ocl_engine *o, int k, cl_uint first, const int *bufs, size_t nbufs,
                    char *err, size_t errlen)
{
    int a = 0;
    for (size_t i = 0; i < nbufs; i++)
        a |= set_mem(o, k, first + (cl_uint)i, bufs[i], err, errlen);
    return a;
}
#define SET_MEMS(o, k, first, bufs, err, errlen) \
    set_mems(o, k, first, bufs, sizeof bufs / sizeof *bufs, err, errlen)

/* (Re)allocates buffer `which` for at least `count` elements of `size`
 * bytes. Grows with 25% slack so a sandbox pouring balls does not
 * reallocate every frame. The old contents are not kept. */
static int reserve(ocl_engine *o, int which, size_t count, size_t size, char *err, size_t errlen)
{
    if (count == 0)
        count = 1; /* CL rejects empty buffers */
    if (o->b[which] && o->cap[which] >= count)
        return 0;
    /* The first world's size exactly; 25% more when a world grows. */
    size_t want = o->b[which] ? count + count / 4 : count;
    if (o->b[which]) {
        clReleaseMemObject(o->b[which]);
        o->b[which] = NULL;
        o->cap[which] = 0;
        o->bytes[which] = 0;
    }
    cl_int rc = CL_SUCCESS;
    if (o->fault.alloc)
        rc = CL_MEM_OBJECT_ALLOCATION_FAILURE;
    else
        o->b[which] = clCreateBuffer(o->ctx, CL_MEM_READ_WRITE, want * size, NULL, &rc);
    if (rc != CL_SUCCESS || !o->b[which]) {
        o->b[which] = NULL;
        char call[96];
        snprintf(call, sizeof call, "clCreateBuffer(%zu bytes)", want * size);
        return bp_ocl_fail(err, errlen, call, rc != CL_SUCCESS ? rc : CL_OUT_OF_RESOURCES);
    }
    o->cap[which] = want;
    o->bytes[which] = want * size;
    return 0;
}

static int write_buf(ocl_engine *o, int which, size_t bytes, const void *src, char *err,
                     size_t errlen)
{
    if (bytes == 0)
        return 0;
    cl_int rc = clEnqueueWriteBuffer(o->q, o->b[which], CL_FALSE, 0, bytes, src, 0, NULL, NULL);
    return rc == CL_SUCCESS ? 0 : bp_ocl_fail(err, errlen, "clEnqueueWriteBuffer", rc);
}

static size_t round_up(size_t v, size_t m)
{
    return (v + m - 1) / m * m;
}

/* ---- Set-up: device, context, program ----------------------------------- */

/* 0 when device d can run the engine, else -1 with the reason. */
static int usable(const bp_ocl_device *d, char *err, size_t errlen)
{
    cl_bool avail = CL_TRUE, compiler = CL_TRUE;
    if (clGetDeviceInfo(d->device, CL_DEVICE_AVAILABLE, sizeof avail, &avail, NULL) ==
            CL_SUCCESS &&
        !avail)
        return bp_fail(err, errlen, "OpenCL: device %s is not available (CL_DEVICE_AVAILABLE "
                       "is false: CL_DEVICE_NOT_AVAILABLE)", d->name);
    if (clGetDeviceInfo(d->device, CL_DEVICE_COMPILER_AVAILABLE, sizeof compiler, &compiler,
                        NULL) == CL_SUCCESS &&
        !compiler)
        return bp_fail(err, errlen, "OpenCL: device %s has no compiler "
                       "(CL_COMPILER_NOT_AVAILABLE)", d->name);
    return 0;
}

/* The device asked for; else the first usable GPU, else the first usable
 * device of any type. */
static int pick_device(const bp_engine_opts *opts, bp_ocl_device *out, char *err, size_t errlen)
{
    bp_ocl_device devs[64];
    int n = bp_ocl_devices(devs, 64, err, errlen);
    if (n < 0)
        return -1;
    if (n > 64)
        n = 64;
    if (opts && opts->device_set) {
        if (opts->device < 0 || opts->device >= n)
            return bp_fail(err, errlen,
                           "OpenCL: device %d does not exist (there %s %d: 0..%d, see "
                           "--list-devices)",
                           opts->device, n == 1 ? "is" : "are", n, n - 1);
        *out = devs[opts->device];
        return usable(out, err, errlen);
    }
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++)
            if ((pass == 1 || (devs[i].type & CL_DEVICE_TYPE_GPU)) &&
                usable(&devs[i], NULL, 0) == 0) {
                *out = devs[i];
                return 0;
            }
    /* None is usable: report why the first one is not. */
    *out = devs[0];
    return usable(&devs[0], err, errlen);
}

/* Fetches and prints the whole build log into err's owner: the log can be
 * long, so it goes to stderr in full and err gets the one-line summary. */
static void show_build_log(ocl_engine *o)
{
    size_t len = 0;
    if (clGetProgramBuildInfo(o->prog, o->dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) !=
            CL_SUCCESS || len == 0)
        return;
    char *log = malloc(len + 1);
    if (!log)
        return;
    if (clGetProgramBuildInfo(o->prog, o->dev, CL_PROGRAM_BUILD_LOG, len, log, NULL) ==
        CL_SUCCESS) {
        log[len] = '\0';
        fprintf(stderr, "ballpit: OpenCL build log of kernels/ballpit.cl for %s:\n%s\n",
                o->base.device, log);
    }
    free(log);
}

/* The engine's tuning and test settings (BALLPIT_OCL_*), read when it is
 * created. Unset or empty leaves *out as it is; a value out of place is
 * refused with a one-line reason naming the variable. */

/* A whole number lo..hi. */
static int env_count(const char *name, unsigned long lo, unsigned long hi, unsigned long *out,
                     char *err, size_t errlen)
{
    return bp_env_count("OpenCL: ", name, lo, hi, out, err, errlen);
}

/* One of two words (bp_env_choice), refused as "OpenCL: NAME=VALUE ...". */
static int env_choice(const char *name, const char *one, const char *zero, int *flag, char *err,
                      size_t errlen)
{
    return bp_env_choice("OpenCL: ", name, one, zero, flag, err, errlen);
}

static int build_program(ocl_engine *o, cl_device_type dtype, char *err, size_t errlen)
{
    cl_int rc;
    const char **src = (const char **)bp_ocl_program_source;
    o->prog = clCreateProgramWithSource(o->ctx, bp_ocl_program_source_COUNT, src, NULL, &rc);
    if (rc != CL_SUCCESS || !o->prog)
        return bp_ocl_fail(err, errlen, "clCreateProgramWithSource", rc);
    /* Same floats as the CPU: no contraction (pragma in the source), and
     * correctly rounded / and sqrt when the device can (CL 1.2 option). */
    cl_device_fp_config fp = 0;
    if (clGetDeviceInfo(o->dev, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL) != CL_SUCCESS)
        fp = 0;
    /* -cl-std=CL1.2 where the device's OpenCL C is 1.2 or newer; the
     * kernels need only 1.1 (atomic_inc, struct arguments), so an older
     * compiler gets its default instead of a CL_INVALID_BUILD_OPTIONS. */
    char cver[64] = "";
    int major = 0, minor = 0;
    if (clGetDeviceInfo(o->dev, CL_DEVICE_OPENCL_C_VERSION, sizeof cver - 1, cver, NULL) !=
            CL_SUCCESS ||
        sscanf(cver, "OpenCL C %d.%d", &major, &minor) != 2)
        major = 1, minor = 2;
    int cl12 = major > 1 || (major == 1 && minor >= 2);
    /* SIMD lanes of the contact pass (kernels/bp_physics.h, BP_LANES), the
     * same bits at any count: 8 on a CPU device that prefers vectors of 8
     * floats (PoCL on AVX2: 0.8 of 4 lanes' time on the rain and the pile
     * at 50k balls), 16 on one that prefers 16 (PoCL on AVX-512, whose
     * gathers, compress and permutes the kernels then take: 0.60 of 4
     * lanes' time on the rain, 0.76 on the pile, on a Zen 4), else 4
     * (docs/benchmarks.md). BALLPIT_OCL_LANES=4|8|16 overrides (tests,
     * tuning). */
    cl_uint pref = 0;
    if (clGetDeviceInfo(o->dev, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, sizeof pref, &pref,
                        NULL) != CL_SUCCESS)
        pref = 0;
    unsigned long lanes_ = !(dtype & CL_DEVICE_TYPE_CPU) ? 4 : pref >= 16 ? 16 : pref == 8 ? 8 : 4;
    if (env_count("BALLPIT_OCL_LANES", 4, 16, &lanes_, err, errlen))
        return -1;
    if (lanes_ != 4 && lanes_ != 8 && lanes_ != 16)
        return bp_fail(err, errlen, "OpenCL: BALLPIT_OCL_LANES=%lu is not 4, 8 or 16", lanes_);
    const int lanes = (int)lanes_;
    /* How long a group of bp_k_steps waits for the others at a barrier
     * before it ends the launch, in turns of its spin loop: as long as at
     * the check-in, 2^19, about 0.35 ms on this machine's PoCL (OpenMP's
     * threads spin about as long before they sleep). BALLPIT_OCL_PATIENCE=T
     * overrides (tests: 1 ends nearly every launch at its first barrier);
     * BALLPIT_OCL_LAG=T makes group 0 linger T turns after it arrives at
     * a barrier (tests: a group that is late while the others end the
     * launch at the next barrier). */
    unsigned long patience = 1ul << 19, lag = 0;
    if (env_count("BALLPIT_OCL_PATIENCE", 1, 1ul << 30, &patience, err, errlen) ||
        env_count("BALLPIT_OCL_LAG", 0, 1ul << 30, &lag, err, errlen))
        return -1;
    /* On an x86 CPU device with AVX2 (PoCL) the kernels use two of its
     * instructions through clang's builtins where OpenCL C has no form
     * that PoCL compiles well (kernels/bp_physics.h, BP_OCL_AVX2).
     * BALLPIT_OCL_PORTABLE=1 keeps the portable OpenCL C that every other
     * device runs (tests: the same bits; A/B runs). */
    int portable = 0;
    if (env_choice("BALLPIT_OCL_PORTABLE", "1", "0", &portable, err, errlen))
        return -1;
    /* BALLPIT_OCL_MERGE=count or merge: bp_k_steps' grid after a step's
     * first sub-step always counted anew or always merged, auto (the
     * default) merged in worlds of up to TEAM_MERGE_MAX balls (the same
     * bits either way; for A/B runs and tests) */
    uint32_t merge_max = TEAM_MERGE_MAX;
    if (bp_env_merge_max("OpenCL: ", "BALLPIT_OCL_MERGE", &merge_max, err, errlen))
        return -1;
    /* BALLPIT_OCL_PAIRS=twice: bp_k_steps' pass 3 as bp_block_contacts,
     * each pair evaluated for each of its balls (A/B runs; the same bits) */
    int twice = 0;
    if (env_choice("BALLPIT_OCL_PAIRS", "twice", "once", &twice, err, errlen))
        return -1;
    /* BALLPIT_OCL_BUILDLOG=1 prints the build log, and what each kernel
     * needs, once the program is built (tuning: on NVIDIA's platform the
     * log then has each kernel's registers and stack, -cl-nv-verbose) */
    int buildlog = 0;
    if (env_choice("BALLPIT_OCL_BUILDLOG", "1", "0", &buildlog, err, errlen))
        return -1;
    /* BALLPIT_OCL_NVREG=N caps every kernel's registers at N on NVIDIA's
     * platform (-cl-nv-maxrregcount; tuning: on an H100 128 and 96 made
     * the contact kernel spill and the rain slower, docs/benchmarks.md);
     * 0, the default, leaves them to the compiler. Other devices have no
     * such option: they say so and build as they would without it. */
    unsigned long nvreg = 0;
    if (env_count("BALLPIT_OCL_NVREG", 0, 255, &nvreg, err, errlen))
        return -1;
    int nv_opts = 0;
    size_t extlen = 0;
    if ((buildlog || nvreg) &&
        clGetDeviceInfo(o->dev, CL_DEVICE_EXTENSIONS, 0, NULL, &extlen) == CL_SUCCESS) {
        char *ext = calloc(extlen + 1, 1);
        if (ext && clGetDeviceInfo(o->dev, CL_DEVICE_EXTENSIONS, extlen, ext, NULL) == CL_SUCCESS)
            nv_opts = strstr(ext, "cl_nv_compiler_options") != NULL;
        free(ext);
    }
    int nv_verbose = buildlog && nv_opts;
    char nvcap[48] = "";
    if (nvreg && nv_opts)
        snprintf(nvcap, sizeof nvcap, " -cl-nv-maxrregcount=%lu", nvreg);
    else if (nvreg)
        fprintf(stderr,
                "ballpit: BALLPIT_OCL_NVREG=%lu ignored: %s has no cl_nv_compiler_options "
                "(NVIDIA's platform only)\n",
                nvreg, o->base.device);
    /* BALLPIT_OCL_BUILD_OPTIONS: more options after the engine's own, for
     * tuning and experiments (-D settings the kernels read, such as a
     * variant of kernels/bp_physics.h to time against the build in one
     * process with tools/ab_frames). A later -D of a macro overrides the
     * engine's; a build that fails names the variable. */
    const char *more = getenv("BALLPIT_OCL_BUILD_OPTIONS");
    if (more && *more == '\0')
        more = NULL;
    const size_t more_len = more ? strlen(more) : 0u;
    if (more_len > BP_OCL_MORE_OPTIONS_MAX)
        return bp_fail(err, errlen,
                       "OpenCL: BALLPIT_OCL_BUILD_OPTIONS is %zu characters, at most %d",
                       more_len, BP_OCL_MORE_OPTIONS_MAX);
    for (const char *c = more; c && *c; c++)
        if (*c < ' ' || *c > '~')
            return bp_fail(err, errlen,
                           "OpenCL: BALLPIT_OCL_BUILD_OPTIONS has a character that is not "
                           "printable ASCII at %zu",
                           (size_t)(c - more) + 1u);
    char opts[640 + BP_OCL_MORE_OPTIONS_MAX + 2];
    snprintf(opts, sizeof opts,
             "%s-DBP_SCAN_LOCAL=%d -DBP_SCAN_ITEMS=%d -DBP_LANES=%d -DBP_SYNC_OFF=%#xu "
             "-DBP_SYNC_STOP=%#xu -DBP_SYNC_BAR_PATIENCE=%luu -DBP_SYNC_LAG=%luu "
             "-DBP_TEAM_PASSES=%uu -DBP_TEAM_PARTS_MAX=%uu -DBP_TEAM_MERGE_MAX=%uu"
             " -DBP_TEAM_ROLES=%d -DBP_TEAM_OWN=%d%s%s%s%s%s%s%s%s",
             cl12 ? "-cl-std=CL1.2 " : "", BP_OCL_SCAN_LOCAL, BP_OCL_SCAN_ITEMS, lanes,
             BP_OCL_SYNC_OFF, BP_OCL_SYNC_STOP, patience, lag, TEAM_PASSES, TEAM_PARTS_MAX,
             merge_max, o->roles, o->own,
             (dtype & CL_DEVICE_TYPE_CPU) ? " -DBP_OCL_CPU=1" : "",
             twice ? " -DBP_OCL_TWICE=1" : "",
             portable ? " -DBP_OCL_PORTABLE=1" : "",
             (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) ? " -cl-fp32-correctly-rounded-divide-sqrt"
                                                         : "",
             o->fault.build ? " -DBP_INJECTED_BUILD_FAILURE=1" : "",
             o->fault.clock_back ? " -DBP_INJECTED_CLOCK_BACK=1" : "",
             nv_verbose ? " -cl-nv-verbose" : "", nvcap);
    if (more) {
        size_t len = strlen(opts);
        snprintf(opts + len, sizeof opts - len, " %s", more);
    }
    if (o->fault.build) {
        /* A program that cannot compile, so the real failure path runs:
         * clBuildProgram fails and the log is shown. */
        clReleaseProgram(o->prog);
        const char *bad = "#error injected build failure (BALLPIT_OCL_FAIL=build)\n";
        o->prog = clCreateProgramWithSource(o->ctx, 1, &bad, NULL, &rc);
        if (rc != CL_SUCCESS || !o->prog)
            return bp_ocl_fail(err, errlen, "clCreateProgramWithSource", rc);
    }
    rc = clBuildProgram(o->prog, 1, &o->dev, opts, NULL, NULL);
    if (rc != CL_SUCCESS) {
        show_build_log(o);
        return bp_fail(err, errlen,
                       "OpenCL: clBuildProgram failed: %s (kernels/ballpit.cl on %s%s%s; build "
                       "log above)",
                       bp_ocl_error_name(rc), o->base.device,
                       more ? " with BALLPIT_OCL_BUILD_OPTIONS=" : "", more ? more : "");
    }
    for (int k = 0; k < K_COUNT; k++) {
        o->k[k] = clCreateKernel(o->prog, k_names[k], &rc);
        if (rc != CL_SUCCESS || !o->k[k]) {
            char call[96];
            snprintf(call, sizeof call, "clCreateKernel(%s)", k_names[k]);
            return bp_ocl_fail(err, errlen, call, rc);
        }
    }
    /* group 0's index, and a size that launch_steps sets where it is used */
    const cl_uint zero = 0;
    if (set_arg(o, K_STEPS, STEPS_OWN_G, sizeof zero, &zero, err, errlen) ||
        set_arg(o, K_STEPS, STEPS_OWN_g, sizeof zero, &zero, err, errlen))
        return -1;
    if (buildlog) {
        show_build_log(o);
        for (int k = 0; k < K_COUNT; k++) {
            cl_ulong priv = 0, loc = 0;
            size_t wg = 0;
            if (clGetKernelWorkGroupInfo(o->k[k], o->dev, CL_KERNEL_PRIVATE_MEM_SIZE,
                                         sizeof priv, &priv, NULL) != CL_SUCCESS ||
                clGetKernelWorkGroupInfo(o->k[k], o->dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof loc,
                                         &loc, NULL) != CL_SUCCESS ||
                clGetKernelWorkGroupInfo(o->k[k], o->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg,
                                         &wg, NULL) != CL_SUCCESS)
                continue;
            fprintf(stderr,
                    "ballpit: opencl kernel %s: %lu bytes private a work-item, %lu local a "
                    "work-group, work-groups of up to %zu\n",
                    k_names[k], (unsigned long)priv, (unsigned long)loc, wg);
        }
    }
    /* The per-ball local size must be a power of two (tree reduction) and
     * within what the device allows for these kernels. */
    /* BALLPIT_OCL_LOCAL=L overrides the per-ball local size (tuning only;
     * rounded down to a power of two, within the device's limit). */
    unsigned long want = BP_OCL_LOCAL;
    if (env_count("BALLPIT_OCL_LOCAL", 1, 4096, &want, err, errlen))
        return -1;
    size_t lim = want;
    for (int k = 0; k < K_COUNT; k++) {
        size_t wg = 0;
        if (clGetKernelWorkGroupInfo(o->k[k], o->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg,
                                     NULL) == CL_SUCCESS &&
            wg > 0 && wg < lim && k != K_SCAN_BLOCKS && k != K_SCAN_TOP && k != K_STEPS)
            lim = wg;
        if ((k == K_SCAN_BLOCKS || k == K_SCAN_TOP) && wg > 0 && wg < BP_OCL_SCAN_LOCAL)
            return bp_fail(err, errlen,
                           "OpenCL: %s allows work-groups of %zu, the scan needs %d (device %s)",
                           k_names[k], wg, BP_OCL_SCAN_LOCAL, o->base.device);
    }
    size_t l = 1;
    while (l * 2 <= lim)
        l *= 2;
    o->local = l;
    return 0;
}

/* ---- Attach: the world to the device -------------------------------------- */

/* The parts bp_k_steps builds the grid in: one per group, at most
 * TEAM_PARTS_MAX (a group takes parts g, g + G, ..., so a launch of
 * fewer groups builds them all too). */
static cl_uint team_parts(const ocl_engine *o)
{
    return o->groups < TEAM_PARTS_MAX ? (cl_uint)o->groups : TEAM_PARTS_MAX;
}

/* The arguments of the parallel grid build's kernels that size its grid:
 * the engine's (attach), or the re-sort's order (ocl_reorder), whose
 * scan reduces no speeds (v2n = 0 balls' speeds into v2max). */
static int grid_args(ocl_engine *o, cl_uint ncells, cl_uint nblocks, cl_uint v2n, char *err,
                     size_t errlen)
{
    return set_arg(o, K_SCAN_BLOCKS, 0, sizeof ncells, &ncells, err, errlen) ||
           set_arg(o, K_SCAN_BLOCKS, 4, sizeof v2n, &v2n, err, errlen) ||
           set_arg(o, K_SCAN_TOP, 0, sizeof nblocks, &nblocks, err, errlen) ||
           set_arg(o, K_RANK, 0, sizeof ncells, &ncells, err, errlen);
}

static int ocl_attach(bp_engine *e, bp_world *w, char *err, size_t errlen)
{
    ocl_engine *o = (ocl_engine *)e;
    uint32_t n = w->count;
    /* Until this attach succeeds the device holds no usable world (a
     * failure part way may already have replaced buffers). */
    o->attached = 0;
    if (bp_seggrid_build(&o->sg, w))
        return bp_fail(err, errlen, "opencl engine: out of memory for the segment grid");
    bp_step_params P;
    bp_step_setup(w, &o->sg, &P);
    uint32_t ncells = (uint32_t)(P.gw * P.gh);
    uint32_t nblocks = (uint32_t)((ncells + BP_OCL_SCAN_BLOCK - 1) / BP_OCL_SCAN_BLOCK);
    /* The re-sort's order comes from the device where the world is one
     * the engine re-sorts (engine.c): from the parallel grid build's
     * kernels where they build the grid (GPUs), else from
     * bp_k_order_serial. Their per-cell buffers hold the larger of the
     * two grids; bp_k_order_serial counts in sum[] (four words a ball,
     * dead between steps) where it has room, as it has but in worlds of
     * a few balls, so start[] keeps the step grid's size. */
    float oinv = 0.0f;
    uint32_t ogw = 0, ogh = 0, ocells = 0, oblocks = 0;
    if (o->reorder && o->order_here && o->base.sort_by_place && n >= BP_ORDER_MIN) {
        bp_order_grid(w, &oinv, &ogw, &ogh);
        ocells = ogw * ogh;
        oblocks = o->grid_serial ? 0u
                                 : (uint32_t)((ocells + BP_OCL_SCAN_BLOCK - 1) /
                                              BP_OCL_SCAN_BLOCK);
    }
    const int ostart = o->grid_serial && ocells < 4u * (size_t)n ? B_SUM : B_START;
    uint32_t mcells = ncells > ocells || ostart == B_SUM ? ncells : ocells;
    uint32_t mblocks = nblocks > oblocks ? nblocks : oblocks;

    const size_t f = sizeof(float), u = sizeof(cl_uint);
    /* The parallel grid build's own buffers are one-element stand-ins
     * when the serial build is used (docs/opencl.md, "Memory"). */
    size_t par = o->grid_serial ? 0 : 1;
    for (int b = B_FIRST_BALL; b <= B_LAST_BALL; b++) {
        size_t count = b == B_SLOT ? par * n : n, size = b >= B_SPLIT ? 1 : f;
        if (b == B_SORTED || b == B_SPOS) /* bp_contacts reads past a run's end */
            count += BP_SCREEN_PAD;
        if (b == B_SPLIT) /* gathered in whole 32-bit words (bp_vsplit_n) */
            count = (count + 3) & ~(size_t)3;
        if (b == B_SPOS) /* the x plane and the y plane */
            size = 2 * f;
        if (b == B_SUM) /* a record of four floats a ball (bp_f4) */
            size = 4 * f;
        if (reserve(o, b, count, size, err, errlen))
            return -1;
    }
    P.ystride = (bp_u32)o->cap[B_SPOS]; /* spos: the x plane, then the y plane */
    if (reserve(o, B_BLOCK_V2MAX, par * mblocks, f, err, errlen) ||
        reserve(o, B_COUNT, par * mcells, u, err, errlen) ||
        reserve(o, B_LOCAL, par * mcells, u, err, errlen) ||
        reserve(o, B_START, (size_t)mcells + 1, u, err, errlen) ||
        reserve(o, B_BLOCK, par * mblocks, u, err, errlen) ||
        reserve(o, B_V2MAX, 1, f, err, errlen) ||
        reserve(o, B_SYNC, o->sync_svm ? 1 : SYNC_WORDS(o->groups), u, err, errlen) ||
        reserve(o, B_TEAM_COUNT, o->team ? (team_parts(o) - 1) * (size_t)ncells : 0, u, err,
                errlen))
        return -1;
    for (int b = B_LX1; b <= B_LY2; b++)
        if (reserve(o, b, w->nlines, f, err, errlen))
            return -1;
    if (reserve(o, B_SEG_START, (size_t)o->sg.ncells + 1, u, err, errlen) ||
        reserve(o, B_SEG_LIST, o->sg.nlist, u, err, errlen) ||
        reserve(o, B_SEG_GAP, (size_t)o->sg.ncells + 1, u, err, errlen))
        return -1;

    /* Upload. The parallel grid build's counts start at zero; afterwards
     * bp_k_scan_blocks clears them for the next sub-step (the serial one
     * counts in cell_start and needs no count array). */
    size_t nzero = par * mcells; /* 0 on CPU devices: nothing to clear */
    uint32_t *zeros = calloc(nzero ? nzero : 1, u);
    /* bp_k_steps' counters: its pass 3's ranges of slots and pass 5's of
     * balls cut evenly, no times yet */
    uint32_t *sync = calloc(SYNC_WORDS(o->groups), u);
    if (!zeros || !sync) {
        free(zeros);
        free(sync);
        return !zeros ? bp_fail(err, errlen, "opencl engine: out of memory for %u grid cells",
                                ncells)
                      : bp_fail(err, errlen, "opencl engine: out of memory for the %zu "
                                "counters of %zu work-groups", SYNC_WORDS(o->groups), o->groups);
    }
    for (size_t k = 0; k <= o->groups; k++)
        sync[SYNC_CUTS(o->groups, 0) + k] = sync[SYNC_CUTS(o->groups, 1) + k] =
            sync[SYNC_CUTS(o->groups, 2) + k] = (uint32_t)((uint64_t)n * k / o->groups);
    int bad = write_buf(o, B_X, n * f, w->x, err, errlen) ||
              write_buf(o, B_Y, n * f, w->y, err, errlen) ||
              write_buf(o, B_VX, n * f, w->vx, err, errlen) ||
              write_buf(o, B_VY, n * f, w->vy, err, errlen) ||
              write_buf(o, B_R, n * f, w->r, err, errlen) ||
              write_buf(o, B_M, n * f, w->m, err, errlen) ||
              write_buf(o, B_COUNT, nzero * u, zeros, err, errlen) ||
              write_buf(o, B_SPLIT, n, w->contacts, err, errlen) ||
              write_buf(o, B_LX1, w->nlines * f, w->lx1, err, errlen) ||
              write_buf(o, B_LY1, w->nlines * f, w->ly1, err, errlen) ||
              write_buf(o, B_LX2, w->nlines * f, w->lx2, err, errlen) ||
              write_buf(o, B_LY2, w->nlines * f, w->ly2, err, errlen) ||
              write_buf(o, B_SEG_START, ((size_t)o->sg.ncells + 1) * u, o->sg.start, err,
                        errlen) ||
              write_buf(o, B_SEG_LIST, o->sg.nlist * u, o->sg.list, err, errlen) ||
              write_buf(o, B_SEG_GAP, (size_t)o->sg.ncells * u, o->sg.gap, err, errlen) ||
              (!o->sync_svm && write_buf(o, B_SYNC, SYNC_WORDS(o->groups) * u, sync, err, errlen));
    /* Wait even when an enqueue failed: earlier writes may still read
     * `zeros`, `sync` and the world's arrays. */
    cl_int rc = clFinish(o->q);
    if (o->sync_svm) /* no kernel runs now: the host's to write */
        memcpy(o->sync_svm, sync, SYNC_WORDS(o->groups) * u);
    free(zeros);
    free(sync);
    if (bad)
        return -1;
    if (rc != CL_SUCCESS)
        return bp_ocl_fail(err, errlen, "clFinish(upload)", rc);

    o->P = P;
    o->n = n;
    o->ncells = ncells;
    o->nblocks = nblocks;
    o->ocells = ocells;
    o->oblocks = oblocks;
    o->balls_version = w->balls_version;
    o->lines_version = w->lines_version;
    o->attached = 1;
    o->base.bytes = 0;
    for (int b = 0; b < B_NUM; b++)
        o->base.bytes += o->bytes[b];
    if (o->sync_svm)
        o->base.bytes += SYNC_WORDS(o->groups) * sizeof *o->sync_svm;
    o->broken = 0;
    o->read_backup = 0;
    /* The first step after an attach runs as timed separate kernels, for
     * the phases' shares, unless shares were timed with about as many
     * balls: the engine's re-sort by place re-attaches every 128 or
     * 1,024 sub-steps, and on PoCL that step's separate kernels made one
     * frame in 34 several times slower (the sandbox's rain stuttered once a
     * second). */
    o->team_steps = o->share_n && n <= 2 * (size_t)o->share_n && 2 * (size_t)n >= o->share_n;
    /* With the team's own threads (PoCL's basic device) separate kernels
     * run in one thread: the steps are bp_k_steps' from the first, whose
     * group 0 clocks the phases itself (x86; elsewhere the phases are
     * not shared out) */
    if (o->own)
        o->team_steps = 1;

    /* Arguments that stay the same until the next attach. */
    const cl_uint cu_ncells = ncells, cu_n = n;
    const size_t ps = sizeof P;
    int a = 0;
    a |= set_arg(o, K_INTEGRATE, 0, ps, &P, err, errlen);
    a |= set_mem(o, K_INTEGRATE, 1, B_X, err, errlen);
    a |= set_mem(o, K_INTEGRATE, 2, B_Y, err, errlen);
    a |= set_mem(o, K_INTEGRATE, 3, B_VX, err, errlen);
    a |= set_mem(o, K_INTEGRATE, 4, B_VY, err, errlen);
    const cl_uint count = o->grid_serial ? 0u : 1u; /* atomic slots for the parallel grid */
    a |= set_mem(o, K_INTEGRATE, 5, B_CELL, err, errlen);
    a |= set_arg(o, K_INTEGRATE, 6, sizeof count, &count, err, errlen);
    a |= set_mem(o, K_INTEGRATE, 7, B_SLOT, err, errlen);
    a |= set_mem(o, K_INTEGRATE, 8, B_COUNT, err, errlen);
    a |= set_mem(o, K_INTEGRATE, 9, B_V2, err, errlen);

    a |= grid_args(o, ncells, nblocks, n, err, errlen);
    a |= set_mem(o, K_SCAN_BLOCKS, 1, B_COUNT, err, errlen);
    a |= set_mem(o, K_SCAN_BLOCKS, 2, B_LOCAL, err, errlen);
    a |= set_mem(o, K_SCAN_BLOCKS, 3, B_BLOCK, err, errlen);
    a |= set_mem(o, K_SCAN_BLOCKS, 5, B_V2, err, errlen);
    a |= set_mem(o, K_SCAN_BLOCKS, 6, B_BLOCK_V2MAX, err, errlen);

    a |= set_mem(o, K_SCAN_TOP, 1, B_BLOCK, err, errlen);
    a |= set_mem(o, K_SCAN_TOP, 2, B_BLOCK_V2MAX, err, errlen);
    a |= set_mem(o, K_SCAN_TOP, 3, B_V2MAX, err, errlen);

    a |= set_arg(o, K_SCATTER, 0, sizeof cu_n, &cu_n, err, errlen);
    a |= set_mem(o, K_SCATTER, 1, B_CELL, err, errlen);
    a |= set_mem(o, K_SCATTER, 2, B_SLOT, err, errlen);
    a |= set_mem(o, K_SCATTER, 3, B_LOCAL, err, errlen);
    a |= set_mem(o, K_SCATTER, 4, B_BLOCK, err, errlen);
    a |= set_mem(o, K_SCATTER, 5, B_BEST, err, errlen); /* free until pass 3 */

    a |= set_arg(o, K_RANK, 1, sizeof cu_n, &cu_n, err, errlen);
    static const int rank_bufs[] = {B_CELL,   B_LOCAL, B_BLOCK, B_BEST, B_START,
                                    B_SORTED, B_X,     B_Y,     B_SPOS};
    a |= SET_MEMS(o, K_RANK, 2, rank_bufs, err, errlen);
    a |= set_arg(o, K_RANK, 11, sizeof P.ystride, &P.ystride, err, errlen);

    static const int contacts_bufs[] = {B_V2MAX,  B_X,      B_Y,        B_VX,   B_VY,
                                       B_R,      B_M,      B_SPLIT,    B_START, B_SORTED,
                                       B_SPOS,   B_NCONTACT, B_BEST,   B_SUM};
    a |= set_arg(o, K_CONTACTS, 0, ps, &P, err, errlen);
    a |= SET_MEMS(o, K_CONTACTS, 1, contacts_bufs, err, errlen);

    static const int resolve_bufs[] = {B_X,    B_Y,    B_VX,  B_VY,  B_R,   B_M,
                                       B_SPLIT, B_BEST, B_SUM};
    a |= set_arg(o, K_RESOLVE, 0, ps, &P, err, errlen);
    a |= SET_MEMS(o, K_RESOLVE, 1, resolve_bufs, err, errlen);

    static const int move_bufs[] = {B_X,   B_Y,   B_VX,  B_VY,  B_SUM,       B_R,
                                    B_LX1, B_LY1, B_LX2, B_LY2, B_SEG_START, B_SEG_LIST};
    a |= set_arg(o, K_MOVE, 0, ps, &P, err, errlen);
    a |= SET_MEMS(o, K_MOVE, 1, move_bufs, err, errlen);
    /* argument K_MOVE_NEXT, integrate_next, is set per sub-step */
    a |= set_mem(o, K_MOVE, K_MOVE_NEXT + 1, B_CELL, err, errlen);
    a |= set_arg(o, K_MOVE, K_MOVE_NEXT + 2, sizeof count, &count, err, errlen);
    a |= set_mem(o, K_MOVE, K_MOVE_NEXT + 3, B_SLOT, err, errlen);
    a |= set_mem(o, K_MOVE, K_MOVE_NEXT + 4, B_COUNT, err, errlen);
    a |= set_mem(o, K_MOVE, K_MOVE_NEXT + 5, B_V2, err, errlen);
    a |= set_mem(o, K_MOVE, K_MOVE_NEXT + 6, B_NCONTACT, err, errlen);
    a |= set_mem(o, K_MOVE, K_MOVE_NEXT + 7, B_SPLIT, err, errlen);

    /* the re-sort's kernels: n, x, y and its grid first */
    const int gw_ = (int)ogw, gh_ = (int)ogh;
    static const int order_kernels[] = {K_ORDER_CELL, K_ORDER_SERIAL};
    for (size_t k = 0; k < sizeof order_kernels / sizeof *order_kernels; k++) {
        int kk = order_kernels[k];
        a |= set_arg(o, kk, 0, sizeof cu_n, &cu_n, err, errlen);
        a |= set_mem(o, kk, 1, B_X, err, errlen);
        a |= set_mem(o, kk, 2, B_Y, err, errlen);
        a |= set_arg(o, kk, 3, sizeof oinv, &oinv, err, errlen);
        a |= set_arg(o, kk, 4, sizeof gw_, &gw_, err, errlen);
        a |= set_arg(o, kk, 5, sizeof gh_, &gh_, err, errlen);
    }
    static const int order_bufs[] = {B_CELL, B_SLOT, B_COUNT};
    a |= SET_MEMS(o, K_ORDER_CELL, 6, order_bufs, err, errlen);
    const cl_uint cu_ocells = ocells;
    const int order_serial_bufs[] = {B_CELL, ostart, B_SORTED};
    a |= set_arg(o, K_ORDER_SERIAL, 6, sizeof cu_ocells, &cu_ocells, err, errlen);
    a |= SET_MEMS(o, K_ORDER_SERIAL, 7, order_serial_bufs, err, errlen);

    /* the backup (bp_k_copy_state: x, y, vx, vy only; its other arrays
     * named but not touched) and the re-sort's copy back (all of them) */
    static const int backup_bufs[] = {B_X,  B_Y,  B_VX,  B_VY,  B_R, B_SPLIT, B_BX,
                                      B_BY, B_BVX, B_BVY, B_R,  B_M, B_SPLIT};
    static const int back_bufs[] = {B_BX, B_BY, B_BVX, B_BVY, B_SUM, B_NCONTACT, B_X,
                                    B_Y,  B_VX, B_VY,  B_R,   B_M,   B_SPLIT};
    const cl_uint only4 = 0u, all = 1u;
    a |= set_arg(o, K_BACKUP, 0, sizeof cu_n, &cu_n, err, errlen);
    a |= set_arg(o, K_BACKUP, 1, sizeof only4, &only4, err, errlen);
    a |= SET_MEMS(o, K_BACKUP, 2, backup_bufs, err, errlen);
    a |= set_arg(o, K_GATHER_BACK, 0, sizeof cu_n, &cu_n, err, errlen);
    a |= set_arg(o, K_GATHER_BACK, 1, sizeof all, &all, err, errlen);
    a |= SET_MEMS(o, K_GATHER_BACK, 2, back_bufs, err, errlen);

    a |= set_arg(o, K_GRID_SERIAL, 0, sizeof cu_n, &cu_n, err, errlen);
    a |= set_arg(o, K_GRID_SERIAL, 1, sizeof cu_ncells, &cu_ncells, err, errlen);
    static const int grid_serial_bufs[] = {B_CELL, B_X,    B_Y,  B_START,
                                           B_SORTED, B_SPOS, B_V2, B_V2MAX};
    a |= SET_MEMS(o, K_GRID_SERIAL, 2, grid_serial_bufs, err, errlen);
    a |= set_arg(o, K_GRID_SERIAL, 10, sizeof P.ystride, &P.ystride, err, errlen);

    /* Chunks: about 4 per group and pass, so a group that finishes early
     * takes over work, but at most BP_OCL_CHUNK_MAX balls (more chunks
     * than that only add draws on the shared counter, measured in
     * docs/benchmarks.md) and at least BP_OCL_CHUNK_MIN. */
    size_t chunk = n / (4 * o->groups);
    chunk = chunk < BP_OCL_CHUNK_MIN ? BP_OCL_CHUNK_MIN : chunk;
    chunk = chunk > BP_OCL_CHUNK_MAX ? BP_OCL_CHUNK_MAX : chunk;
    o->chunk = o->chunk_set ? o->chunk_set : (cl_uint)chunk;
    /* arguments 1-3, the passes of a launch and the step's sub-steps, are
     * set by run_team; 6, the groups' slots of speed maxima, is every
     * group's even when a launch has only one */
    const cl_uint slots = (cl_uint)o->groups, parts = team_parts(o);
    static const int steps_bufs[] = {B_SYNC,   B_X,    B_Y,      B_VX,   B_VY,  B_R,
                                     B_M,      B_SPLIT, B_NCONTACT, B_CELL, B_START, B_SORTED,
                                     B_SPOS,   B_BEST, B_SUM,
                                     B_LX1,    B_LY1,  B_LX2,    B_LY2,  B_SEG_START,
                                     B_SEG_LIST, B_SEG_GAP, B_TEAM_COUNT, B_BX, B_BY,
                                     B_BVX,    B_BVY};
    a |= set_arg(o, K_STEPS, 0, ps, &P, err, errlen);
    a |= set_arg(o, K_STEPS, 4, sizeof cu_ncells, &cu_ncells, err, errlen);
    a |= set_arg(o, K_STEPS, 5, sizeof o->chunk, &o->chunk, err, errlen);
    a |= set_arg(o, K_STEPS, 6, sizeof slots, &slots, err, errlen);
    a |= set_arg(o, K_STEPS, 7, sizeof parts, &parts, err, errlen);
    a |= SET_MEMS(o, K_STEPS, 8, steps_bufs, err, errlen);
    if (o->sync_svm) { /* argument 8, the counters: B_SYNC's place */
        cl_int rc = CL_SUCCESS;
        for (size_t g = 0; g < steps_kernels(o) && rc == CL_SUCCESS; g++)
            rc = bp_ocl_svm.set_arg(steps_kernel(o, g), 8, o->sync_svm);
        if (rc != CL_SUCCESS)
            a |= bp_ocl_fail(err, errlen, "clSetKernelArgSVMPointer(bp_k_steps, 8)", rc);
    }
    for (cl_uint k = 0; !o->gaps && k < sizeof steps_bufs / sizeof *steps_bufs; k++)
        if (steps_bufs[k] == B_SEG_GAP) /* a null pointer: every ball's cells walked */
            a |= set_arg(o, K_STEPS, 8 + k, sizeof(cl_mem), NULL, err, errlen);
    if (a) {
        o->attached = 0;
        return -1;
    }
    return 0;
}

/* ---- Step ------------------------------------------------------------------ */

static int enqueue(ocl_engine *o, int k, size_t global, size_t local, cl_event *ev, char *err,
                   size_t errlen)
{
    size_t g = round_up(global, local);
    cl_int rc = clEnqueueNDRangeKernel(o->q, o->k[k], 1, NULL, &g, &local, 0, NULL, ev);
    if (rc != CL_SUCCESS) {
        char call[96];
        snprintf(call, sizeof call, "clEnqueueNDRangeKernel(%s)", k_names[k]);
        return bp_ocl_fail(err, errlen, call, rc);
    }
    return 0;
}

/* The parallel grid build's passes after the counting (pass 2a-2d), for a
 * grid of ncells cells in nblocks scan blocks (its arguments set by
 * grid_args); ev: NULL or K_COUNT events that time its kernels. */
static int enqueue_grid(ocl_engine *o, uint32_t ncells, uint32_t nblocks, cl_event *ev,
                        char *err, size_t errlen)
{
    size_t L = o->local;
    return enqueue(o, K_SCAN_BLOCKS, (size_t)nblocks * BP_OCL_SCAN_LOCAL, BP_OCL_SCAN_LOCAL,
                   ev ? &ev[K_SCAN_BLOCKS] : NULL, err, errlen) ||
           enqueue(o, K_SCAN_TOP, BP_OCL_SCAN_LOCAL, BP_OCL_SCAN_LOCAL,
                   ev ? &ev[K_SCAN_TOP] : NULL, err, errlen) ||
           enqueue(o, K_SCATTER, o->n, L, ev ? &ev[K_SCATTER] : NULL, err, errlen) ||
           enqueue(o, K_RANK, o->n > ncells ? o->n : (size_t)ncells + 1, L,
                   ev ? &ev[K_RANK] : NULL, err, errlen);
}

/* Enqueues one sub-step; ev (NULL or K_COUNT events) times its kernels.
 * first: run bp_k_integrate (the first sub-step of a step); last: the
 * move kernel does not integrate the next sub-step. */
static int enqueue_substep(ocl_engine *o, int first, int last, cl_event *ev, char *err,
                           size_t errlen)
{
    size_t L = o->local;
    cl_uint next = last ? 0u : 1u;
#define EV(k) (ev ? &ev[k] : NULL)
    if (first && enqueue(o, K_INTEGRATE, o->n, L, EV(K_INTEGRATE), err, errlen))
        return -1;
    if (o->grid_serial) {
        size_t one = 1;
        if (enqueue(o, K_GRID_SERIAL, one, one, EV(K_GRID_SERIAL), err, errlen))
            return -1;
    } else if (enqueue_grid(o, o->ncells, o->nblocks, ev, err, errlen)) {
        return -1;
    }
    if (enqueue(o, K_CONTACTS, o->n, L, EV(K_CONTACTS), err, errlen) ||
        enqueue(o, K_RESOLVE, o->n, L, EV(K_RESOLVE), err, errlen) ||
        set_arg(o, K_MOVE, K_MOVE_NEXT, sizeof next, &next, err, errlen) ||
        enqueue(o, K_MOVE, o->n, L, EV(K_MOVE), err, errlen))
        return -1;
#undef EV
    return 0;
}

/* One launch of bp_k_steps over passes first..end-1 in `groups` groups,
 * waited for. By the engine's own threads (o->own): group g enqueues one
 * work-item on its queue (its kernel's arguments the team's size and its
 * index) and waits for it, which on PoCL's basic device runs it in that
 * thread; the calling thread is group 0, and OpenMP's threads spin a while
 * before they sleep, as for the CPU engine, so back-to-back steps wake
 * no one. A group whose thread could not enqueue, or that OpenMP did not
 * start, leaves the others to call the launch off at their check-in.
 * Otherwise one launch of `groups` work-groups on the queue, waited for
 * by the caller (run_team). */
static int launch_steps(ocl_engine *o, size_t groups, cl_uint first, cl_uint end, char *err,
                        size_t errlen)
{
    if (!o->own)
        return set_arg(o, K_STEPS, 1, sizeof first, &first, err, errlen) ||
               set_arg(o, K_STEPS, 2, sizeof end, &end, err, errlen) ||
               enqueue(o, K_STEPS, groups, 1, NULL, err, errlen);
    static const char *const calls[3] = {"clSetKernelArg(bp_k_steps)",
                                         "clEnqueueNDRangeKernel(bp_k_steps)",
                                         "clFinish(bp_k_steps)"};
    for (size_t g = 0; g < groups; g++) {
        o->tm[g].rc = CL_SUCCESS;
        o->tm[g].call = 0;
    }
#ifdef _OPENMP
#pragma omp parallel num_threads((int)groups) if (groups > 1)
#endif
    {
#ifdef _OPENMP
        const size_t g = (size_t)omp_get_thread_num();
#else
        const size_t g = 0;
#endif
        cl_kernel k = steps_kernel(o, g);
        cl_command_queue q = g ? o->tm[g].q : o->q;
        const size_t one = 1;
        const cl_uint G = (cl_uint)groups;
        cl_int rc = clSetKernelArg(k, 1, sizeof first, &first);
        if (rc == CL_SUCCESS)
            rc = clSetKernelArg(k, 2, sizeof end, &end);
        if (rc == CL_SUCCESS)
            rc = clSetKernelArg(k, STEPS_OWN_G, sizeof G, &G);
        int w = 0;
        if (rc == CL_SUCCESS) {
            w = 1;
            rc = clEnqueueNDRangeKernel(q, k, 1, NULL, &one, &one, 0, NULL, NULL);
        }
        if (rc == CL_SUCCESS) {
            w = 2;
            rc = clFinish(q);
        }
        o->tm[g].rc = rc;
        o->tm[g].call = w;
    }
    for (size_t g = 0; g < groups; g++)
        if (o->tm[g].rc != CL_SUCCESS)
            return bp_ocl_fail(err, errlen, calls[o->tm[g].call], o->tm[g].rc);
    return 0;
}

/* Runs nsub sub-steps with bp_k_steps (kernels/ballpit.cl): one launch
 * unless its groups end it early. A launch that stopped at a barrier is
 * followed by one for the passes after it. One whose groups did not all
 * start (nothing ran) is followed by a launch of a single group, which
 * waits for no one, for the rest of that sub-step; the next sub-step
 * tries all groups again. */
static int run_team(ocl_engine *o, uint32_t nsub, char *err, size_t errlen)
{
    static const cl_uint zero[4] = {0};
    const cl_uint total = 1u + TEAM_PASSES * nsub, ns = nsub;
    cl_uint first = 0;
    o->team_launches = o->team_off = 0;
    if (set_arg(o, K_STEPS, 3, sizeof ns, &ns, err, errlen))
        return -1;
    int alone = 0; /* the last launch was called off */
    /* each launch's read of its counters takes the phases' ticks along
     * (ocl_step reads them there), which group 0 clears in the step's
     * first pass: no command more a step (each costs PoCL's scheduler a
     * lock and a wake-up) */
    cl_uint *st = o->sync_rd;
    while (first < total) {
        /* alone: to the end of the sub-step that pass `first` is in */
        cl_uint end =
            alone ? (first == 0 ? 1u : first + TEAM_PASSES - (first - 1u) % TEAM_PASSES) : total;
        size_t groups = alone ? 1 : (size_t)bp_team_pick_size(&o->pick);
        if (launch_steps(o, groups, first, end, err, errlen))
            return -1;
        /* pass 0 copies the state to the backup before it changes any of
         * it (bp_k_steps), so from here on, as after the backup kernel's
         * enqueue, only the backup is sure to be good */
        if (first == 0)
            o->read_backup = 1;
        cl_int rc = CL_SUCCESS;
        if (!o->sync_svm) {
            rc = clEnqueueReadBuffer(o->q, o->b[B_SYNC], CL_FALSE, 0,
                                     SYNC_WORDS(o->groups) * sizeof *st, st, 0, NULL, NULL);
            if (rc != CL_SUCCESS)
                return bp_ocl_fail(err, errlen, "clEnqueueReadBuffer(sync)", rc);
            /* The counters the next launch starts from (attach writes
             * them first), zeroed after this one's read, in the same
             * wait: enqueued before the launch, the write had woken
             * PoCL's threads by itself, and they had slept again before
             * the kernel came */
            rc = clEnqueueWriteBuffer(o->q, o->b[B_SYNC], CL_FALSE, 0, sizeof zero, zero, 0,
                                      NULL, NULL);
            if (rc != CL_SUCCESS)
                return bp_ocl_fail(err, errlen, "clEnqueueWriteBuffer(sync)", rc);
        }
        rc = clFinish(o->q);
        if (rc != CL_SUCCESS)
            return bp_ocl_fail(err, errlen, "clFinish(sync)", rc);
        if (o->sync_svm) {
            /* the wait made the launch's writes the host's (fine-grained
             * SVM is coherent at it), and no kernel runs until the next
             * enqueue: the same read and clearing, without two commands */
            memcpy(st, o->sync_svm, SYNC_WORDS(o->groups) * sizeof *st);
            memcpy(o->sync_svm, zero, sizeof zero);
        }
        o->team_launches++;
        alone = st[0] >= BP_OCL_SYNC_OFF; /* called off: nothing ran */
        if (alone) {
            o->team_off++;
            if (first == 0) /* nor the backup: the state buffers are good */
                o->read_backup = 0;
        } else if (st[1] & BP_OCL_SYNC_STOP) {
            if (st[3] < first || st[3] >= end)
                return bp_fail(err, errlen, "OpenCL: bp_k_steps stopped at pass %u, outside "
                               "%u..%u", st[3], first, end - 1);
            first = st[3] + 1;
        } else {
            first = end;
        }
    }
    return 0;
}

static double event_seconds(cl_event ev)
{
    cl_ulong t0 = 0, t1 = 0;
    if (!ev || clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) !=
                   CL_SUCCESS ||
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) != CL_SUCCESS ||
        t1 < t0)
        return 0.0;
    return (double)(t1 - t0) * 1e-9;
}

/* Marks the engine broken with the reason (the caller already wrote err). */
static int broke(ocl_engine *o, const char *err)
{
    o->broken = 1;
    snprintf(o->broken_why, sizeof o->broken_why, "%s", err ? err : "OpenCL: step failed");
    return -1;
}

static int ocl_step(bp_engine *e, bp_world *w, uint32_t nsub, char *err, size_t errlen)
{
    ocl_engine *o = (ocl_engine *)e;
    char tmp[256];
    if (!err || errlen == 0) { /* keep a reason for broken_why anyway */
        err = tmp;
        errlen = sizeof tmp;
    }
    if (o->broken)
        return bp_fail(err, errlen, "%s (engine stopped; switch to the CPU engine)",
                       o->broken_why);
    /* The world's balls or lines changed without bp_engine_attach: the
     * device state no longer matches it, and uploading the world's copy
     * could go back in time, so refuse, as the CPU engine does. Parameter
     * changes (gravity, ...) are taken at the next attach, also as there. */
    if (!o->attached)
        return bp_fail(err, errlen, "opencl engine: no world attached (bp_engine_attach "
                       "was not called or failed)");
    if (w->count != o->n || w->balls_version != o->balls_version ||
        w->lines_version != o->lines_version)
        return bp_fail(err, errlen, "opencl engine: the world changed without "
                       "bp_engine_attach");
    o->steps++;
    /* Injected fault: half of the sub-steps really run, then the step
     * reports the error, as a device that gives up part way would; the
     * state on the device is then neither before nor after the step. */
    int inject = o->fault.step && o->steps == o->fault.step;
    if (o->n == 0) { /* nothing to move, but time passes */
        if (inject) {
            bp_ocl_fail(err, errlen, "clFinish(step) [injected by BALLPIT_OCL_FAIL]",
                        o->fault.step_code);
            o->read_backup = 0;
            return broke(o, err);
        }
        w->substeps_done += nsub;
        w->frames = w->substeps_done / (uint64_t)w->params.substeps;
        return 0;
    }
    double t0 = bp_now();
    /* On CPU devices the whole step is one launch of bp_k_steps, except
     * the first step after an attach, whose separate kernels are timed to
     * share out the wall time of later steps among the phases. */
    int team = o->team && o->team_steps > 0;
    o->team_steps++;
    /* Last good state, on the device, in case a kernel below fails: one
     * kernel (bp_k_copy_state) where four clEnqueueCopyBuffer commands were
     * four wakes of PoCL's threads (the rain 10k's and the pile 10k's
     * frames 0.99 of the time with it: docs/benchmarks.md, seventieth
     * session). bp_k_steps takes it itself, in its pass 0 (run_team sets
     * read_backup): on PoCL the kernel had cost a wake of its threads and
     * 50-55 us a frame (docs/benchmarks.md, ninety-third session). */
    o->read_backup = 0; /* until the copy is enqueued the state buffers are good */
    if (!team) {
        if (enqueue(o, K_BACKUP, o->n, o->local, NULL, err, errlen))
            return broke(o, err);
        o->read_backup = 1; /* from here on only the backup is sure to be good */
    }
    uint32_t run = inject ? (nsub + 1) / 2 : nsub;
    int failed = 0;
    cl_int rc = CL_SUCCESS;
    const int ran = bp_team_pick_size(&o->pick);
    if (team)
        failed = run_team(o, run, err, errlen);
    /* The first sub-step carries profiling events: the per-phase times of
     * one sub-step, times nsub, without an event per kernel per sub-step.
     * Where later steps run in one launch and take their shares from this
     * one, every sub-step carries them and the kernels' times are averaged
     * (one sub-step's events alone vary by tens of percent). */
    uint32_t timed = o->team && !team && run > 1 ? run : 1;
    cl_event ev1[K_COUNT] = {0};
    cl_event *ev = timed > 1 ? calloc((size_t)timed * K_COUNT, sizeof *ev) : NULL;
    if (!ev) {
        ev = ev1;
        timed = 1;
    }
    if (!team && !failed) {
        for (uint32_t s = 0; s < run && !failed; s++)
            failed = enqueue_substep(o, s == 0, s + 1 == run,
                                     s < timed ? ev + (size_t)s * K_COUNT : NULL, err, errlen);
        rc = clFinish(o->q); /* the one wait of this step */
    }
    if (!failed && rc != CL_SUCCESS) {
        bp_ocl_fail(err, errlen, "clFinish(step)", rc);
        failed = 1;
    }
    if (!failed && inject) {
        bp_ocl_fail(err, errlen, "clFinish(step) [injected by BALLPIT_OCL_FAIL]",
                    o->fault.step_code);
        failed = 1;
    }
    double wall = bp_now() - t0;
    if (team && !failed)
        bp_team_pick_after(&o->pick, ran, o->n, run, wall);
    double k[K_COUNT] = {0};
    for (int i = 0; i < K_COUNT; i++) {
        int count = 0;
        for (uint32_t t = 0; t < timed; t++) {
            cl_event e1 = ev[(size_t)t * K_COUNT + i];
            if (!e1)
                continue;
            k[i] += failed ? 0.0 : event_seconds(e1);
            count++;
            clReleaseEvent(e1);
        }
        k[i] = count ? k[i] / count : 0.0; /* one sub-step's */
    }
    if (ev != ev1)
        free(ev);
    if (failed)
        return broke(o, err);
    if (o->profile && team)
        fprintf(stderr, "ballpit: opencl step of %u balls by bp_k_steps, %zu groups: %d "
                "launch%s, %d called off; wall %.1f us per sub-step\n", o->n, o->groups,
                o->team_launches, o->team_launches == 1 ? "" : "es", o->team_off,
                wall * 1e6 / nsub);
    else if (o->profile) { /* BALLPIT_OCL_PROFILE=1: each kernel of one sub-step */
        fprintf(stderr, "ballpit: opencl sub-step of %u balls, %u cells, local %zu (us):", o->n,
                o->ncells, o->local);
        for (int i = 0; i < K_STEPS; i++)
            fprintf(stderr, " %s %.1f", k_names[i] + 5, k[i] * 1e6);
        fprintf(stderr, "; step wall %.1f us per sub-step\n", wall * 1e6 / nsub);
    }
    /* Device time per phase; what the events do not cover (launch cost,
     * the copy) is spread in proportion so the phases add up to the wall
     * time of the step, as the CPU engine's do. Pass 1 has its own kernel
     * only in the first sub-step; later it runs at the end of bp_k_move,
     * so the move kernel of the first sub-step (which integrates the
     * second) is counted without it. The integrate kernel's own time
     * includes a launch, so with few balls it can be as long as the whole
     * move kernel: at most half of the move kernel is taken to be the
     * integration it carries (else the static phase would read 0). */
    double carried = k[K_INTEGRATE] < 0.5 * k[K_MOVE] ? k[K_INTEGRATE] : 0.5 * k[K_MOVE];
    double mv = k[K_MOVE] - (nsub > 1 ? carried : 0.0);
    double ph[4] = {k[K_INTEGRATE],
                    k[K_SCAN_BLOCKS] + k[K_SCAN_TOP] + k[K_SCATTER] + k[K_RANK] +
                        k[K_GRID_SERIAL],
                    k[K_CONTACTS] + k[K_RESOLVE], mv > 0.0 ? mv : 0.0};
    double sum = ph[0] + ph[1] + ph[2] + ph[3];
    /* the phases group 0 clocked in the step's launches (all 0 where the
     * kernel has no clock) */
    const cl_uint *tk = o->sync_rd + SYNC_TICKS(o->groups);
    if (team && tk[1] + tk[2] + tk[3] > 0u) {
        /* clocked by group 0 in bp_k_steps: pass 0 integrates the first
         * sub-step, and the moves carry the others' integrations, each
         * clocked (tk[4], within the moves' tk[3]) */
        double carry = tk[4];
        ph[0] = (double)tk[0] + carry;
        ph[1] = tk[1];
        ph[2] = tk[2];
        ph[3] = (double)tk[3] > carry ? (double)tk[3] - carry : 0.0;
        sum = ph[0] + ph[1] + ph[2] + ph[3];
    } else if (team) { /* no clock: the shares of the last timed step */
        for (int i = 0; i < 4; i++)
            ph[i] = o->share[i];
        sum = 1.0;
        /* the team's own threads skip the timed step (ocl_attach): where
         * the clock gave nothing, the next step is timed after all */
        if (o->own && !o->share_n)
            o->team_steps = 0;
    } else if (sum > 0.0) {
        for (int i = 0; i < 4; i++)
            o->share[i] = ph[i] / sum;
        o->share_n = o->n;
    }
    double scale = sum > 0.0 ? wall / sum : 0.0;
    o->base.times.integrate = ph[0] * scale;
    o->base.times.grid = ph[1] * scale;
    o->base.times.ball_contacts = ph[2] * scale;
    o->base.times.static_contacts = ph[3] * scale;
    if (sum == 0.0)
        o->base.times.static_contacts = wall;
    w->substeps_done += nsub;
    w->frames = w->substeps_done / (uint64_t)w->params.substeps;
    return 0;
}

/* ---- Read back ---------------------------------------------------------- */

/* The host scratch block (o->rbuf) of at least cap floats, kept between
 * calls: the sandbox reads every frame. It is a buffer of the driver's own
 * host memory, mapped once (CL_MEM_ALLOC_HOST_PTR), so a GPU's driver can
 * copy into it directly: into memory of malloc's it copies through a
 * pinned buffer of its own and then again (docs/benchmarks.md, the H100's
 * read-back). Plain memory where the driver gives no such buffer. */
static void rbuf_free(ocl_engine *o)
{
    if (o->rmem) {
        clEnqueueUnmapMemObject(o->q, o->rmem, o->rbuf, 0, NULL, NULL);
        clFinish(o->q);
        clReleaseMemObject(o->rmem);
    } else {
        free(o->rbuf);
    }
    o->rmem = NULL;
    o->rbuf = NULL;
    o->rbuf_cap = 0;
}

static int rbuf_reserve(ocl_engine *o, size_t cap, const char *doing, char *err, size_t errlen)
{
    if (o->rbuf_cap >= cap)
        return 0;
    rbuf_free(o);
    size_t bytes = cap * sizeof(float);
    cl_int rc;
    cl_mem m = clCreateBuffer(o->ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &rc);
    if (rc == CL_SUCCESS) {
        void *p = clEnqueueMapBuffer(o->q, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                                     NULL, NULL, &rc);
        if (rc == CL_SUCCESS && p) {
            o->rmem = m;
            o->rbuf = p;
            o->rbuf_cap = cap;
            return 0;
        }
        clReleaseMemObject(m);
    }
    o->rbuf = malloc(bytes);
    if (!o->rbuf)
        return bp_fail(err, errlen, "opencl engine: out of memory %s %u balls", doing, o->n);
    o->rbuf_cap = cap;
    return 0;
}

static int ocl_read(bp_engine *e, bp_world *w, char *err, size_t errlen)
{
    ocl_engine *o = (ocl_engine *)e;
    if (!o->attached || o->n == 0)
        return 0;
    if (w->count != o->n)
        return bp_fail(err, errlen,
                       "opencl engine: the world has %u balls, the device %u (attach after "
                       "editing the world)",
                       w->count, o->n);
    double t0 = bp_now();
    /* After a failed step the device copy of the last good state is read,
     * if the device still answers; otherwise the world keeps what it has. */
    int from[4] = {B_X, B_Y, B_VX, B_VY};
    if (o->broken && o->read_backup) {
        from[0] = B_BX;
        from[1] = B_BY;
        from[2] = B_BVX;
        from[3] = B_BVY;
    }
    float *to[4] = {w->x, w->y, w->vx, w->vy};
    size_t bytes = (size_t)o->n * sizeof(float);
    /* The contact counts of mass splitting come along (a byte per ball,
     * after the four float arrays), except from the backup, which has
     * none: then they start over at 0. */
    int counts = !(o->broken && o->read_backup);
    size_t cap = 4 * (size_t)o->n + ((size_t)o->n + sizeof(float) - 1) / sizeof(float);
    /* Read into a scratch block first so a failing read never leaves the
     * world half old, half new. */
    if (rbuf_reserve(o, cap, "reading", err, errlen))
        return -1;
    float *buf = o->rbuf;
    uint8_t *cbuf = (uint8_t *)(buf + 4 * (size_t)o->n);
    size_t n = o->n;
    const int src[5] = {from[0], from[1], from[2], from[3], B_SPLIT};
    void *const dst[5] = {buf, buf + n, buf + 2 * n, buf + 3 * n, cbuf};
    const size_t len[5] = {bytes, bytes, bytes, bytes, n};
    const int nread = counts ? 5 : 4; /* the last read waits for all */
    for (int i = 0; i < nread; i++) {
        cl_int rc = clEnqueueReadBuffer(o->q, o->b[src[i]], i == nread - 1 ? CL_TRUE : CL_FALSE,
                                        0, len[i], dst[i], 0, NULL, NULL);
        if (rc != CL_SUCCESS) {
            clFinish(o->q);
            return bp_ocl_fail(err, errlen, "clEnqueueReadBuffer", rc);
        }
    }
    /* Into the world: at millions of balls this copy, not the device's,
     * is most of the read (the H100's 4M: 12.5 ms on one core), so it is
     * cut into pieces that the host's cores take where it is that large. */
    const size_t piece = 65536; /* floats */
    const long pieces = (long)((n + piece - 1) / piece), jobs = 4 * pieces;
#pragma omp parallel for schedule(static) if (n >= 8 * piece)
    for (long j = 0; j < jobs; j++) {
        size_t a = (size_t)(j / pieces), at = (size_t)(j % pieces) * piece;
        size_t len_j = n - at < piece ? n - at : piece;
        memcpy(to[a] + at, buf + a * n + at, len_j * sizeof(float));
    }
    if (counts)
        memcpy(w->contacts, cbuf, o->n);
    else
        memset(w->contacts, 0, o->n);
    o->base.times.readback = bp_now() - t0;
    return 0;
}

/* ---- Re-sort by place -------------------------------------------------------- */

/* The re-sort by place (engine_impl.h, reorder) without a round trip of
 * the world. Its order, from[] (bp_order_from's), comes from the device:
 * where the parallel grid build's kernels run (GPUs) from bp_k_order_cell
 * and that build on the re-sort's grid, on CPU devices from
 * bp_k_order_serial, into sorted[] either way; with BALLPIT_OCL_SORT=host
 * from the host, which reads the positions back for it. Then the host
 * moves its own arrays and ids by it (bp_world_apply_order, as
 * bp_world_sort_by_place does) while the device gathers its arrays
 * (bp_k_gather, then bp_k_copy_state). Read, sort and attach instead moved 17
 * bytes a ball each way and rebuilt the segment grid (docs/benchmarks.md).
 * On PoCL the host's order, its read of the positions and its write of
 * the order, and seven copies back, each a command that wakes its
 * threads, took a re-sort of the rain 10k 0.53 ms, the 50k 2.35
 * (seventieth session).
 * Every device buffer it writes before the gather is dead between steps,
 * so a failure before then leaves the device's world as it was. */
static int ocl_reorder(bp_engine *e, bp_world *w, char *err, size_t errlen)
{
    ocl_engine *o = (ocl_engine *)e;
    if (!o->reorder || !o->attached || o->broken || o->n == 0 || w->count != o->n ||
        w->balls_version != o->balls_version || w->lines_version != o->lines_version)
        return 1;
    double t0 = bp_now();
    size_t n = o->n, f = sizeof(float);
    const int on_device = o->ocells > 0;
    /* on the device: from (n words) and the moves' tmp (n); on the host:
     * the positions (2n floats), then from and bp_order_from's tmp */
    size_t cap = on_device ? 2 * n : 2 * n + bp_order_tmp_bytes(w) / sizeof(float) + 1;
    if (rbuf_reserve(o, cap, "re-sorting", err, errlen))
        return -1;
    if (bp_world_own_ids(w))
        return bp_fail(err, errlen, "opencl engine: out of memory for the ids of %u balls",
                       o->n);
    float *pos = o->rbuf;
    uint32_t *from = on_device ? (uint32_t *)o->rbuf : (uint32_t *)(pos + 2 * n);
    const cl_uint cn = o->n;
    cl_event got = NULL; /* from[] read back (on the device) */
    cl_int rc;
    int bad = 0;
    double t1 = t0, t2 = t0;
    if (on_device) {
        if (o->grid_serial) {
            size_t one = 1;
            bad = enqueue(o, K_ORDER_SERIAL, one, one, NULL, err, errlen);
        } else {
            bad = grid_args(o, o->ocells, o->oblocks, 0u, err, errlen) ||
                  enqueue(o, K_ORDER_CELL, n, o->local, NULL, err, errlen) ||
                  enqueue_grid(o, o->ocells, o->oblocks, NULL, err, errlen);
            /* the step's grid arguments back, whatever happened */
            bad = grid_args(o, o->ncells, o->nblocks, cn, err, errlen) || bad;
        }
        if (!bad) {
            rc = clEnqueueReadBuffer(o->q, o->b[B_SORTED], CL_FALSE, 0, n * sizeof(cl_uint),
                                     from, 0, NULL, &got);
            if (rc != CL_SUCCESS)
                bad = bp_ocl_fail(err, errlen, "clEnqueueReadBuffer(re-sort order)", rc) != 0;
        }
        if (bad) {
            clFinish(o->q);
            return -1;
        }
    } else {
        rc = clEnqueueReadBuffer(o->q, o->b[B_X], CL_FALSE, 0, n * f, pos, 0, NULL, NULL);
        if (rc == CL_SUCCESS)
            rc = clEnqueueReadBuffer(o->q, o->b[B_Y], CL_TRUE, 0, n * f, pos + n, 0, NULL,
                                     NULL);
        if (rc != CL_SUCCESS) {
            clFinish(o->q);
            return bp_ocl_fail(err, errlen, "clEnqueueReadBuffer(re-sort)", rc);
        }
        t1 = bp_now();
        bp_order_from(w, pos, pos + n, from, from + n);
        (void)bp_world_apply_order(w, from, from + n); /* cannot fail: the ids are there */
        t2 = bp_now();
        bad = write_buf(o, B_BEST, n * sizeof(cl_uint), from, err, errlen);
    }
    /* The gather by from[] (sorted[] on the device, uploaded into best[]
     * from the host; both dead between steps) into the backup (copied
     * afresh at the start of every step), sum (four floats a ball) and
     * ncontact (rewritten in pass 3), also dead; then copied back. */
    static const int gather_bufs[] = {B_X,   B_Y,   B_VX,  B_VY,  B_R,   B_M,  B_SPLIT,
                                      B_BX,  B_BY,  B_BVX, B_BVY, B_SUM, B_NCONTACT};
    bad = bad || set_arg(o, K_GATHER, 0, sizeof cn, &cn, err, errlen) ||
          set_mem(o, K_GATHER, 1, on_device ? B_SORTED : B_BEST, err, errlen) ||
          SET_MEMS(o, K_GATHER, 2, gather_bufs, err, errlen) ||
          enqueue(o, K_GATHER, n, o->local, NULL, err, errlen) ||
          enqueue(o, K_GATHER_BACK, n, o->local, NULL, err, errlen);
    if (on_device) {
        /* the host's moves while the device gathers */
        clFlush(o->q);
        rc = clWaitForEvents(1, &got);
        clReleaseEvent(got);
        t1 = bp_now();
        if (rc == CL_SUCCESS && !bad)
            (void)bp_world_apply_order(w, from, from + n); /* cannot fail: the ids are there */
        else if (rc != CL_SUCCESS && !bad)
            bad = bp_ocl_fail(err, errlen, "clWaitForEvents(re-sort order)", rc) != 0;
        t2 = bp_now();
    }
    rc = clFinish(o->q); /* also: from[] is read until here */
    if (bad || rc != CL_SUCCESS) {
        /* the world may have moved, the device may not have: attach again */
        o->attached = 0;
        return bad ? -1 : bp_ocl_fail(err, errlen, "clFinish(re-sort)", rc);
    }
    o->balls_version = w->balls_version;
    if (o->profile)
        fprintf(stderr, "ballpit: opencl re-sort of %u balls: %s %.2f ms, %s %.2f ms, "
                "device %.2f ms\n", o->n, on_device ? "order on the device and read" : "read",
                (t1 - t0) * 1e3, on_device ? "host moves" : "host order and moves",
                (t2 - t1) * 1e3, (bp_now() - t2) * 1e3);
    return 0;
}

/* ---- Create / destroy ------------------------------------------------------- */

/* Where bp_k_steps' counters live. In fine-grained shared virtual memory
 * (OpenCL 2.0) where the device has it and the steps run by bp_k_steps:
 * after a launch's wait the host reads and clears them itself, where a
 * read and a write command after each launch were two more turns of the
 * runtime's scheduler (on PoCL about 30 us a launch outside the kernel,
 * 80 against 50: docs/benchmarks.md, ninety-ninth session). Elsewhere in the
 * buffer B_SYNC, by those commands. BALLPIT_OCL_COUNTERS=auto|svm|commands
 * (A/B runs and the tests, which run both; svm is refused where the
 * device cannot). */
static int choose_counters(ocl_engine *o, char *err, size_t errlen)
{
    static const char *const words[3] = {"auto", "svm", "commands"};
    int k = 0;
    if (bp_env_word("OpenCL: ", "BALLPIT_OCL_COUNTERS", words, 3, &k, err, errlen))
        return -1;
    cl_bitfield caps = 0;
    if (clGetDeviceInfo(o->dev, BP_CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL) !=
        CL_SUCCESS) /* an OpenCL 1.x device */
        caps = 0;
    const int can = o->team && bp_ocl_svm.alloc && (caps & BP_CL_DEVICE_SVM_FINE_GRAIN_BUFFER);
    if (k == 1 && !can)
        return bp_fail(err, errlen, "OpenCL: BALLPIT_OCL_COUNTERS=svm needs bp_k_steps (a CPU "
                       "device) and fine-grained SVM buffers (OpenCL 2.0); %s%s",
                       o->base.device, !o->team ? " runs separate kernels" :
                       !bp_ocl_svm.alloc ? ": the ICD loader has no clSVMAlloc"
                                         : " has no fine-grained SVM buffers");
    if (k == 2 || !can)
        return 0;
    size_t bytes = SYNC_WORDS(o->groups) * sizeof *o->sync_svm;
    o->sync_svm = bp_ocl_svm.alloc(o->ctx, CL_MEM_READ_WRITE | BP_CL_MEM_SVM_FINE_GRAIN_BUFFER,
                                   bytes, 0);
    if (!o->sync_svm && k == 1)
        return bp_fail(err, errlen, "OpenCL: BALLPIT_OCL_COUNTERS=svm: clSVMAlloc of %zu bytes "
                       "failed on %s", bytes, o->base.device);
    return 0; /* auto: the buffer and commands where the allocation failed */
}

static void ocl_destroy(bp_engine *e)
{
    ocl_engine *o = (ocl_engine *)e;
    if (!o)
        return;
    if (o->q)
        clFinish(o->q);
    rbuf_free(o); /* unmapped while the queue is there */
    free(o->sync_rd);
    if (o->sync_svm)
        bp_ocl_svm.free(o->ctx, o->sync_svm);
    for (int b = 0; b < B_NUM; b++)
        if (o->b[b])
            clReleaseMemObject(o->b[b]);
    for (size_t g = 1; o->tm && g < o->groups; g++) {
        if (o->tm[g].k)
            clReleaseKernel(o->tm[g].k);
        if (o->tm[g].q)
            clReleaseCommandQueue(o->tm[g].q);
    }
    free(o->tm);
    for (int k = 0; k < K_COUNT; k++)
        if (o->k[k])
            clReleaseKernel(o->k[k]);
    if (o->prog)
        clReleaseProgram(o->prog);
    if (o->q)
        clReleaseCommandQueue(o->q);
    if (o->ctx)
        clReleaseContext(o->ctx);
    bp_seggrid_free(&o->sg);
    free(o);
}

/* The queues and kernels of the team's threads but the caller's (o->own):
 * group g's on a queue of its own, so that its wait runs its launch. */
static int make_team_queues(ocl_engine *o, char *err, size_t errlen)
{
    o->tm = calloc(o->groups, sizeof *o->tm);
    if (!o->tm)
        return bp_fail(err, errlen, "opencl engine: out of memory for the queues of %zu "
                       "work-groups", o->groups);
    for (size_t g = 1; g < o->groups; g++) {
        cl_int rc;
        team_member *t = &o->tm[g];
        t->q = clCreateCommandQueue(o->ctx, o->dev, 0, &rc);
        if (rc != CL_SUCCESS || !t->q)
            return bp_ocl_fail(err, errlen, "clCreateCommandQueue(team)", rc);
        t->k = clCreateKernel(o->prog, k_names[K_STEPS], &rc);
        if (rc != CL_SUCCESS || !t->k)
            return bp_ocl_fail(err, errlen, "clCreateKernel(bp_k_steps, team)", rc);
        const cl_uint me = (cl_uint)g;
        rc = clSetKernelArg(t->k, STEPS_OWN_g, sizeof me, &me);
        if (rc != CL_SUCCESS)
            return bp_ocl_fail(err, errlen, "clSetKernelArg(bp_k_steps, team)", rc);
    }
    return 0;
}

static const bp_engine_ops ocl_ops = {
    .name = "opencl", .attach = ocl_attach, .step = ocl_step, .read = ocl_read,
    .destroy = ocl_destroy, .reorder = ocl_reorder,
};

bp_engine *bp_ocl_engine_create(const bp_engine_opts *opts, char *err, size_t errlen)
{
    ocl_engine *o = calloc(1, sizeof *o);
    if (!o) {
        bp_fail(err, errlen, "opencl engine: out of memory");
        return NULL;
    }
    o->base.ops = &ocl_ops;
    o->base.kind = BP_BACKEND_OPENCL;
    o->base.threads = 0;
    if (bp_ocl_fault_from_env(&o->fault, err, errlen))
        goto fail;
    const char *prof = getenv("BALLPIT_OCL_PROFILE");
    o->profile = prof && *prof && strcmp(prof, "0") != 0;
    bp_ocl_device d;
    if (pick_device(opts, &d, err, errlen))
        goto fail;
    o->dev = d.device;
    snprintf(o->base.device, sizeof o->base.device, "%s", d.name);
    cl_int rc;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)d.platform, 0};
    o->ctx = clCreateContext(props, 1, &o->dev, NULL, NULL, &rc);
    if (rc != CL_SUCCESS || !o->ctx) {
        bp_ocl_fail(err, errlen, "clCreateContext", rc);
        goto fail;
    }
    o->q = clCreateCommandQueue(o->ctx, o->dev, CL_QUEUE_PROFILING_ENABLE, &rc);
    if (rc != CL_SUCCESS || !o->q) {
        bp_ocl_fail(err, errlen, "clCreateCommandQueue", rc);
        goto fail;
    }
    /* BALLPIT_OCL_ROLES=0: bp_k_steps' groups take their parts by their
     * indices, not by the processors they run on (the same bits; for A/B
     * runs and the tests) */
    o->roles = 1;
    if (env_choice("BALLPIT_OCL_ROLES", "1", "0", &o->roles, err, errlen))
        goto fail;
#ifdef _OPENMP
    /* PoCL's basic device (ocl_api.c asks PoCL for it): bp_k_steps' groups
     * by the engine's own threads (launch_steps) */
    o->own = (d.type & CL_DEVICE_TYPE_CPU) &&
             strcmp(d.platform_name, "Portable Computing Language") == 0 &&
             strncmp(d.name, "basic-", 6) == 0;
#endif
    if (build_program(o, d.type, err, errlen))
        goto fail;
    /* The grid build: serial in one work-item on CPU devices, parallel
     * elsewhere (kernels/ballpit.cl, bp_k_grid_serial, says why);
     * BALLPIT_OCL_GRID=serial|parallel overrides, so tests run both. */
    o->grid_serial = (d.type & CL_DEVICE_TYPE_CPU) != 0;
    if (env_choice("BALLPIT_OCL_GRID", "serial", "parallel", &o->grid_serial, err, errlen))
        goto fail;
    /* The re-sort by place on the device (ocl_reorder), or by the
     * engine's read, sort and attach: BALLPIT_OCL_REORDER=device|host
     * (A/B runs; the same bits). */
    o->reorder = 1;
    if (env_choice("BALLPIT_OCL_REORDER", "device", "host", &o->reorder, err, errlen))
        goto fail;
    /* Where ocl_reorder's order is worked out: on the device (by the
     * parallel grid build's kernels on GPUs, in one work-item on CPU
     * devices), or on the host: BALLPIT_OCL_SORT=device|host (A/B runs;
     * the same bits). */
    o->order_here = 1;
    if (env_choice("BALLPIT_OCL_SORT", "device", "host", &o->order_here, err, errlen))
        goto fail;
    /* A step in one launch (bp_k_steps) on CPU devices, where a kernel
     * boundary costs a sleep and a wake of the runtime's threads; separate
     * kernels on GPUs, whose work-groups must not wait for each other.
     * One group per compute unit, no more than the machine's processors
     * (a group spins while it waits). BALLPIT_OCL_SYNC=spin|kernels and
     * BALLPIT_OCL_GROUPS=G override, BALLPIT_OCL_CHUNK=C fixes the balls a
     * group takes at a time (tests, tuning). */
    o->team = (d.type & CL_DEVICE_TYPE_CPU) != 0;
    if (env_choice("BALLPIT_OCL_SYNC", "spin", "kernels", &o->team, err, errlen))
        goto fail;
    /* BALLPIT_OCL_SEGGAP=0: bp_k_steps' static pass walks the segment
     * cells of every ball's box, not first reading its cell's gap (the
     * same bits; for A/B runs) */
    o->gaps = 1;
    if (env_choice("BALLPIT_OCL_SEGGAP", "1", "0", &o->gaps, err, errlen))
        goto fail;
    /* Seen on an NVIDIA H100: with two or more groups the bits differ from
     * the separate kernels'. OpenCL 1.2 promises no group sees another's
     * writes during a launch; on a GPU they may sit in a core's cache. */
    if (o->team && !(d.type & CL_DEVICE_TYPE_CPU)) {
        bp_fail(err, errlen,
                "OpenCL: BALLPIT_OCL_SYNC=spin needs a CPU device; %s is not one, and "
                "its work-groups need not see each other's writes during a launch",
                o->base.device);
        goto fail;
    }
    cl_uint cus = 1;
    if (clGetDeviceInfo(o->dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL) !=
            CL_SUCCESS || cus < 1)
        cus = 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    /* the basic device has one compute unit; the engine's threads are
     * one a processor */
    const unsigned long units = cores >= 1 && ((long)cus > cores || o->own)
                                    ? (unsigned long)cores : cus;
    unsigned long groups = units;
    unsigned long chunk = 0; /* 0: derived from the ball count at attach */
    if (env_count("BALLPIT_OCL_GROUPS", 1, 256, &groups, err, errlen) ||
        env_count("BALLPIT_OCL_CHUNK", 1, 1ul << 24, &chunk, err, errlen))
        goto fail;
    o->groups = groups;
    o->sync_rd = calloc(SYNC_WORDS(o->groups), sizeof *o->sync_rd);
    if (!o->sync_rd) {
        bp_fail(err, errlen, "opencl engine: out of memory for the %zu counters of %zu "
                "work-groups", SYNC_WORDS(o->groups), o->groups);
        goto fail;
    }
    if (o->own && o->team && make_team_queues(o, err, errlen))
        goto fail;
    if (choose_counters(o, err, errlen))
        goto fail;
    o->chunk_set = (cl_uint)chunk;
    /* How many groups a step's launches of bp_k_steps have
     * (BALLPIT_OCL_TEAM): all the engine's (fixed; also where
     * BALLPIT_OCL_GROUPS asks for a number), the faster of all and one by
     * the steps' times in worlds of fewer than 4,096 balls (adapt, the
     * default with two or more groups: src/sim/team_pick.h, as the CPU
     * engine's threads; PoCL's rain 1k 1.00-1.02 ms a frame on one group
     * against 1.20-1.26 on two, docs/benchmarks.md), or all and one in
     * turn (alternate, for tests). Any number gives the same bits. */
    const char *gv = getenv("BALLPIT_OCL_GROUPS");
    if (bp_team_pick_init(&o->pick, (int)groups, o->team && groups > 1, !(gv && *gv),
                          "OpenCL: ", "BALLPIT_OCL_TEAM", err, errlen))
        goto fail;
    /* a CPU device's runtime runs the kernels on as many of the host's cores */
    o->base.host_cores = (d.type & CL_DEVICE_TYPE_CPU) ? (int)units : 0;
    return &o->base;
fail:
    ocl_destroy(&o->base);
    return NULL;
}
