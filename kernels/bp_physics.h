/* bp_physics.h - ballpit's contact math and per-ball passes, written once.
 *
 * This header is compiled both as C99 (the CPU engine includes it) and as
 * OpenCL C 1.2 (tools/embed_cl.py inlines it into the kernel program), so it
 * uses only their common subset; the few differences sit behind
 * __OPENCL_VERSION__ below. docs/physics.md derives every formula.
 *
 * One sub-step of length h is five passes over the balls; each pass writes
 * only ball i's own outputs, so any number of threads or work-items give the
 * same bits:
 *   1. bp_integrate      gravity, speed cap; cell index; (max speed reduced)
 *   2. bp_grid_build     counting sort by cell, ties in ball-index order
 *   3. bp_contacts       one walk over the neighbours: earliest ball-ball
 *                        impact of ball i (or -1), the sum of its resting
 *                        contacts and overlap corrections but that partner's,
 *                        and its number of contacts
 *   4. bp_resolve        the partner's term (impact if mutual), then the new
 *                        velocity + displacement
 *   5. bp_move_static    swept motion against segments, end points and the
 *                        box with time of impact; writes x, y, vx, vy; the
 *                        engine then keeps the contact count for the next
 *                        sub-step's mass splitting (split[i] = ncontact[i])
 * On CPUs passes 1, 3, 4 and 5 run on blocks of balls in full SIMD lanes
 * instead (bp_block_integrate, bp_block_contacts, bp_block_resolve,
 * bp_block_move, at the end), with the same bits.
 */
#ifndef BP_PHYSICS_H
#define BP_PHYSICS_H

#ifdef __OPENCL_VERSION__
#pragma OPENCL FP_CONTRACT OFF
#define BP_GLOBAL __global
/* PoCL's compiler left bp_pair_soft and bp_search_window as calls, with
 * the bp_side structs passed through memory: 30% of the pile's contact
 * time (docs/benchmarks.md). Every vendor's OpenCL C compiler is
 * clang-based and takes the attribute. */
#define BP_FN static inline __attribute__((always_inline))
#define BP_FN_INLINE BP_FN
/* Functions kept calls even so: bp_once_work_off, which PoCL's
 * one-launch step calls once per list of about 240 pairs from three
 * places; inlined, its registers crowded the screening loops around it
 * (their loop constants went to the stack): 0.92-0.93 of PoCL's rain
 * time as a call (docs/benchmarks.md). And bp_once_fold_list, its fold,
 * for the same reason inside it. */
#define BP_FN_CALLED static __attribute__((noinline))
#define BP_SQRT(x) sqrt(x)
#define BP_FMIN(a, b) fmin(a, b)
#define BP_FMAX(a, b) fmax(a, b)
#define BP_ISFINITE(x) isfinite(x)
typedef uint bp_u32;
typedef int bp_i32;
typedef uchar bp_u8;
typedef ulong bp_u64;
#define BP_K64(c) c##UL /* a 64-bit unsigned constant */
#else
#include <float.h>
#include <math.h>
#include <stdint.h>
#define BP_GLOBAL
#define BP_FN static inline
#define BP_FN_CALLED static inline /* gcc keeps bp_once_work_off a call */
/* inlined even where the compiler would not: bp_vpair_soft, which the
 * CPU engine's pass 3 calls with and without a second ball's terms (as a
 * call, 0.93-0.97 of the frame time on the pile 50k, 0.96-1.0 on the rain) */
#define BP_FN_INLINE static inline __attribute__((always_inline))
#define BP_SQRT(x) sqrtf(x)
#define BP_FMIN(a, b) bp_fminf(a, b)
#define BP_FMAX(a, b) bp_fmaxf(a, b)
#define BP_ISFINITE(x) isfinite(x)
typedef uint32_t bp_u32;
typedef int32_t bp_i32;
typedef uint8_t bp_u8;
typedef uint64_t bp_u64;
#define BP_K64(c) c##ULL
/* fminf/fmaxf without -ffinite-math-only are library calls; these compile to
 * one instruction and, like them, return b when a is NaN (the NaN guards
 * below pass the possibly-NaN value first). */
static inline float bp_fminf(float a, float b) { return a < b ? a : b; }
static inline float bp_fmaxf(float a, float b) { return a > b ? a : b; }
#endif

/* A hint that this thread will soon write the cache line at p: the line is
 * fetched for writing (PREFETCHW, a no-op on x86 processors without it),
 * so that a line another core has read (shared) is taken over while the
 * thread does other work, not when its stores reach it. On x86 in C and
 * on an x86 OpenCL CPU device (PoCL compiles the inline assembly) unless
 * BALLPIT_OCL_PORTABLE=1 asked for the portable forms; a no-op elsewhere. */
#if (defined(__x86_64__) || defined(__i386__)) &&                                      \
    (!defined(__OPENCL_VERSION__) || (defined(BP_OCL_CPU) && !defined(BP_OCL_PORTABLE)))
#define BP_PREFETCHW(p)                                                                  \
    __asm__ __volatile__("prefetchw %0" : : "m"(*(BP_GLOBAL const char *)(p)))
#else
#define BP_PREFETCHW(p) ((void)0)
#endif

/* Several pairs at a time: bp_contacts works out the pairs of a ball
 * BP_LANES neighbours at once in SIMD lanes (float4 in OpenCL C, float8 or
 * float16 when the engine is asked; a GCC/clang vector of 4 floats in C,
 * or 8 and 16 with AVX2 and AVX-512 in the CPU engine's wider builds of
 * the block passes). Each lane does exactly the float operations the
 * scalar functions do, in the same order (IEEE +, -, *, / and sqrt give
 * the same bits in a lane as alone), and the lanes are summed one by one
 * in neighbour order, so the result is the scalar code's to the bit, for
 * any lane count. BP_VGATHER(a, J) loads a[J[0]], a[J[1]], ... */
#ifndef BP_LANES
#define BP_LANES 4
#endif
/* The pair evaluation's two parts (bp_vpair_geom, bp_vpair_eval) always
 * inlined in the C builds: GCC left both calls in the 8-lane build (AVX2),
 * with the pair's vectors passed through memory (the eightieth session, on
 * a Zen 3: 5% fewer instructions), and since the evaluation's loop has
 * three copies (bp_once_work_off) it left bp_vpair_eval a call in two of
 * the 16-lane build's, the copy for worlds of one radius among them, so
 * that the radius was not known there (the ninety-first session, on a
 * Zen 5: the rain 10k 0.98 of the frame time, the pile 50k 0.96-0.97;
 * docs/benchmarks.md). */
#if !defined(__OPENCL_VERSION__)
#define BP_FN_PAIR BP_FN_INLINE
#else
#define BP_FN_PAIR BP_FN
#endif

/* A condition that nearly always holds, for the compilers' layout and
 * register allocation (GCC and clang, every OpenCL C compiler being
 * clang-based). */
#define BP_LIKELY(x) __builtin_expect(!!(x), 1)

#ifdef __OPENCL_VERSION__
/* Clang compiling OpenCL C for an x86 CPU device with AVX2 (PoCL) has
 * AVX2's instructions as builtins. OpenCL C has no mask-to-bits and its
 * shuffle() with lane numbers from memory became, in PoCL's LLVM, a chain
 * of ORs and a store, eight extracts and eight loads and inserts; these
 * two take the one instruction instead (bp_vmask, BP_VPERMD). The same
 * bits either way; other devices keep the portable forms, as does any
 * device with BALLPIT_OCL_PORTABLE=1 (-DBP_OCL_PORTABLE). */
#if defined(__AVX2__) && defined(__has_builtin) && !defined(BP_OCL_PORTABLE)
#if __has_builtin(__builtin_ia32_permvarsi256) && __has_builtin(__builtin_ia32_movmskps256)
#define BP_OCL_AVX2 1
#endif
#endif
/* With AVX-512 too (PoCL on skylake-avx512 and later), 16 lanes take its
 * compress and its permutes across 16 lanes, as the CPU engine's 16-lane
 * build does through the intrinsics (OpenCL C's compress is two permutes
 * from a table in PoCL's build); the gathers, and the contact counts'
 * bytes, are loads, as there (BP_VGATHER and bp_vsplit_n below). */
#if BP_LANES == 16 && defined(BP_OCL_AVX2) && defined(__AVX512F__) && defined(__AVX512DQ__)
#if __has_builtin(__builtin_ia32_compresssi512_mask) &&                                       \
    __has_builtin(__builtin_ia32_permvarsf512) && __has_builtin(__builtin_ia32_permvarsi512) && \
    __has_builtin(__builtin_ia32_cvtd2mask512)
#define BP_OCL_AVX512 1
#endif
#endif
#endif /* __OPENCL_VERSION__ */
/* BP_FN_SLOW: pass 5 (bp_block_move), its slow lanes (bp_vmove_static)
 * and the lines near them (bp_vsegments_near), calls of their own in
 * PoCL's 16-lane build, as GCC leaves them in the C build, where the
 * other segment walks (bp_vsegments_touch, bp_vsweep_segments,
 * bp_vpushout_segment) are inlined into bp_vmove_static as there. With
 * pass 5 inlined into bp_k_steps and every walk a call (the
 * ninety-fourth session's choice) PoCL's rain 10k had taken 1.015x the
 * frame time (two threads, ab_frames in turns), its rain 50k 1.005, its
 * rain 200k 1.007, the pile 10k 1.003 and the pile 50k 0.997; the same
 * bits (hundred-and-third session, docs/benchmarks.md). Inlined
 * elsewhere: PoCL's 8 lanes level, and no GPU takes these lanes. */
#ifdef BP_OCL_AVX512
#define BP_FN_SLOW static __attribute__((noinline))
#else
#define BP_FN_SLOW BP_FN
#endif
/* BP_SKIP_DIVS: whether pass 3 branches round a division that no lane of
 * a group needs (the resting contact's gap / h where every lane
 * overlaps). On a CPU the test is cheap beside the division: the C build
 * and PoCL (-DBP_OCL_CPU, set by the engine on a CPU device) take it (the
 * CPU engine's pile 50k 0.978 of the frame time). On an NVIDIA H100 the
 * branch gave the contact kernel 171 registers instead of 163 and the 4M
 * rain's contact phase 1.39x its time (docs/benchmarks.md, forty-first
 * session), so other devices divide in every group. The same bits. */
#if !defined(__OPENCL_VERSION__) || defined(BP_OCL_CPU)
#define BP_SKIP_DIVS 1
#else
#define BP_SKIP_DIVS 0
#endif
/* A 16-lane gather written as loads: the lanes' elements L(a, J, 0) ..
 * L(a, J, 15), comma separated, for a vector literal (BP_VGATHER of the
 * 16-lane builds, bp_vsplit_n's bytes in C); BP_LANE_LOAD the plain load. */
#define BP_LANE_LOAD(a, J, k) ((a)[(J)[k]])
#define BP_LANES16(L, a, J)                                                                \
    L(a, J, 0), L(a, J, 1), L(a, J, 2), L(a, J, 3), L(a, J, 4), L(a, J, 5), L(a, J, 6),        \
        L(a, J, 7), L(a, J, 8), L(a, J, 9), L(a, J, 10), L(a, J, 11), L(a, J, 12),             \
        L(a, J, 13), L(a, J, 14), L(a, J, 15)
#ifdef __OPENCL_VERSION__
#ifdef BP_OCL_AVX2
#define BP_VPERMD(v, idx) as_uint8(__builtin_ia32_permvarsi256(as_int8(v), as_int8(idx)))
#define BP_MOVMSK8(m) ((uint)__builtin_ia32_movmskps256(as_float8(m)))
#else
#define BP_VPERMD(v, idx) shuffle((v), (idx))
#endif
#if BP_LANES == 16
typedef float16 bp_vf;
typedef int16 bp_vi;
typedef uint16 bp_vu;
#ifdef BP_OCL_AVX512
/* Lane by lane, as the 16-lane C build's: each load volatile, as PoCL's
 * LLVM turned sixteen plain loads back into the gather instruction,
 * which costs a Zen 5 more than the loads (the pile 50k 0.95 of the frame
 * time, the rain 50k 0.975, the rain 10k level on two threads and 0.96
 * on one; ninety-first session, docs/benchmarks.md). Its gathers had come
 * through clang's builtins before. */
#define BP_VLOAD1(a, J, k) (((volatile __typeof__(*(a)) *)(a))[(J)[k]])
#define BP_VGATHER(a, J) ((float16)(BP_LANES16(BP_VLOAD1, a, J)))
#define BP_VGATHERU(a, J) ((uint16)(BP_LANES16(BP_VLOAD1, a, J)))
#else
#define BP_VGATHER(a, J) ((float16)(BP_LANES16(BP_LANE_LOAD, a, J)))
#define BP_VGATHERU(a, J) ((uint16)(BP_LANES16(BP_LANE_LOAD, a, J)))
#endif
#define BP_LANE_IDS \
    ((uint16)(0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 10u, 11u, 12u, 13u, 14u, 15u))
BP_FN uint bp_vmask(int16 m)
{
#if defined(BP_OCL_AVX512)
    return (uint)__builtin_ia32_cvtd2mask512(m);
#elif defined(BP_OCL_AVX2)
    return BP_MOVMSK8(m.lo) | BP_MOVMSK8(m.hi) << 8;
#else
    int16 b = m & (int16)(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384,
                          32768);
    int8 c = b.lo | b.hi;
    int4 d = c.lo | c.hi;
    int2 e = d.lo | d.hi;
    return (uint)(e.x | e.y);
#endif
}
#define BP_VMASK(m) bp_vmask(m)
#define BP_VTOI(v) convert_int16(v)
#define BP_VUTOF(v) convert_float16(v)
#define BP_VASU(v) as_uint16(v)
#define BP_VASI(v) as_int16(v)
#ifdef BP_OCL_AVX512
/* Stores of 16 lanes through types aligned as their lanes, one overload
 * per address space: vstore16 was, in PoCL's build, three stores of 4, 4
 * and 8 lanes (PoCL's rain 0.92-0.93 and pile 0.96 of the frame time with
 * one store). The twenty-fourth session's one store through an integer
 * address could alias anything, and was slower. Loads the same way
 * (bp_vld): vload16 from private memory that a store had just written
 * (a gather's indices, the pair list) came back as the stored vector
 * taken apart and put together again by six shuffles; with the typed
 * loads PoCL's rain 10k took 0.98 of its frame time, the rain 50k and
 * the pile 50k 0.98, the rain 1k 0.96 (fifty-third session,
 * docs/benchmarks.md). */
typedef float16 bp_f16_a4 __attribute__((aligned(4)));
typedef int16 bp_i16_a4 __attribute__((aligned(4)));
typedef uint16 bp_u16_a4 __attribute__((aligned(4)));
#define BP_VST_OV static inline __attribute__((overloadable, always_inline))
BP_VST_OV void bp_vst(float16 v, __global float *p) { *(__global bp_f16_a4 *)p = v; }
BP_VST_OV void bp_vst(float16 v, __private float *p) { *(__private bp_f16_a4 *)p = v; }
BP_VST_OV void bp_vst(int16 v, __global int *p) { *(__global bp_i16_a4 *)p = v; }
BP_VST_OV void bp_vst(int16 v, __private int *p) { *(__private bp_i16_a4 *)p = v; }
BP_VST_OV void bp_vst(uint16 v, __global uint *p) { *(__global bp_u16_a4 *)p = v; }
BP_VST_OV void bp_vst(uint16 v, __private uint *p) { *(__private bp_u16_a4 *)p = v; }
BP_VST_OV float16 bp_vld(const __global float *p) { return *(const __global bp_f16_a4 *)p; }
BP_VST_OV float16 bp_vld(const __private float *p) { return *(const __private bp_f16_a4 *)p; }
BP_VST_OV int16 bp_vld(const __global int *p) { return *(const __global bp_i16_a4 *)p; }
BP_VST_OV int16 bp_vld(const __private int *p) { return *(const __private bp_i16_a4 *)p; }
BP_VST_OV uint16 bp_vld(const __global uint *p) { return *(const __global bp_u16_a4 *)p; }
BP_VST_OV uint16 bp_vld(const __private uint *p) { return *(const __private bp_u16_a4 *)p; }
#define BP_VSTORE(v, p) bp_vst((v), (p))
#define BP_VLOAD(p) bp_vld(p)
#define BP_VLOADU(p) bp_vld(p)
#else
#define BP_VSTORE(v, p) vstore16((v), 0, (p))
#define BP_VLOAD(p) vload16(0, (p))
#define BP_VLOADU(p) vload16(0, (p))
#endif
#elif BP_LANES == 8
typedef float8 bp_vf;
typedef int8 bp_vi;
typedef uint8 bp_vu;
#define BP_VGATHER(a, J)                                                                  \
    ((float8)((a)[J[0]], (a)[J[1]], (a)[J[2]], (a)[J[3]], (a)[J[4]], (a)[J[5]], (a)[J[6]], \
              (a)[J[7]]))
#define BP_VGATHERU(a, J)                                                                 \
    ((uint8)((a)[J[0]], (a)[J[1]], (a)[J[2]], (a)[J[3]], (a)[J[4]], (a)[J[5]], (a)[J[6]], \
             (a)[J[7]]))
#define BP_LANE_IDS ((uint8)(0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u))
BP_FN uint bp_vmask(int8 m)
{
#ifdef BP_OCL_AVX2
    return BP_MOVMSK8(m);
#else
    int8 b = m & (int8)(1, 2, 4, 8, 16, 32, 64, 128);
    int4 c = b.lo | b.hi;
    int2 d = c.lo | c.hi;
    return (uint)(d.x | d.y);
#endif
}
#define BP_VMASK(m) bp_vmask(m)
#define BP_VTOI(v) convert_int8(v)
#define BP_VUTOF(v) convert_float8(v)
#define BP_VASU(v) as_uint8(v)
#define BP_VASI(v) as_int8(v)
#define BP_VSTORE(v, p) vstore8((v), 0, (p))
#define BP_VLOAD(p) vload8(0, (p))
#define BP_VLOADU(p) vload8(0, (p))
#elif BP_LANES == 4
typedef float4 bp_vf;
typedef int4 bp_vi;
typedef uint4 bp_vu;
#define BP_VGATHER(a, J) ((float4)((a)[J[0]], (a)[J[1]], (a)[J[2]], (a)[J[3]]))
#define BP_VGATHERU(a, J) ((uint4)((a)[J[0]], (a)[J[1]], (a)[J[2]], (a)[J[3]]))
#define BP_LANE_IDS ((uint4)(0u, 1u, 2u, 3u))
#define BP_VMASK(m) ((uint)(((m).s0 & 1) | ((m).s1 & 2) | ((m).s2 & 4) | ((m).s3 & 8)))
#define BP_VTOI(v) convert_int4(v)
#define BP_VUTOF(v) convert_float4(v)
#define BP_VASU(v) as_uint4(v)
#define BP_VASI(v) as_int4(v)
#define BP_VSTORE(v, p) vstore4((v), 0, (p))
#define BP_VLOAD(p) vload4(0, (p))
#define BP_VLOADU(p) vload4(0, (p))
#else
#error "BP_LANES must be 4, 8 or 16"
#endif
#define BP_VSPLAT(a) ((bp_vf)(a))
#define BP_VUSPLAT(a) ((bp_vu)(a))
#define BP_VI0 ((bp_vi)(0))
/* m ? a : b per lane (m: -1 or 0 per lane, from a comparison) */
#define BP_VSEL(m, a, b) select((b), (a), (m))
#define BP_VSQRT(a) sqrt(a)
#ifdef BP_OCL_CPU
/* On a CPU device the C build's compare and select, not fmin()'s IEEE
 * minNum, to which PoCL's LLVM adds a NaN test and a blend: the same
 * operations as the CPU engine's lanes (PoCL's pile 0.96-0.97 of the frame
 * time). The scalar fmin() stays: with it a select too, PoCL ran
 * 1.12-1.14x slower. */
#define BP_VMIN(a, b) BP_VSEL((a) < (b), (a), (b))
#define BP_VMAX(a, b) BP_VSEL((a) > (b), (a), (b))
#else
#define BP_VMIN(a, b) fmin(a, b)
#define BP_VMAX(a, b) fmax(a, b)
#endif
#if defined(BP_OCL_AVX2) && BP_LANES > 4
/* any() of 8 or 16 lanes was, in PoCL's LLVM, a chain of extracts, tests
 * and branches, one a lane; the mask's bits by the one instruction */
#define BP_VANY(m) (BP_VMASK(m) != 0u)
#else
#define BP_VANY(m) any(m)
#endif
#elif BP_LANES == 16
/* The CPU engine's block passes on AVX-512 (src/sim/cpu_blocks.c, built
 * for x86-64-v4 and picked at run time). */
#if !defined(__AVX512F__)
#error "16 lanes in C need AVX-512"
#endif
#include <immintrin.h>
typedef float bp_vf __attribute__((vector_size(64)));
typedef int32_t bp_vi __attribute__((vector_size(64)));
typedef uint32_t bp_vu __attribute__((vector_size(64)));
/* Gathers lane by lane (sixteen loads, the vector built from them), not
 * by AVX-512's gather instruction: on a Zen 5 the rain 10k ran in
 * 0.965-0.979 of the time, the pile 50k in 0.947-0.951, with the same
 * bits (ninety-first session, docs/benchmarks.md). PoCL's build takes
 * loads too (its BP_VGATHER). */
#define BP_VGATHER(a, J) ((bp_vf){BP_LANES16(BP_LANE_LOAD, a, J)})
#define BP_VGATHERU(a, J) ((bp_vu){BP_LANES16(BP_LANE_LOAD, a, J)})
#define BP_VTOI(v) __builtin_convertvector((v), bp_vi)
#define BP_VUTOF(v) __builtin_convertvector((v), bp_vf)
#define BP_VASU(v) ((bp_vu)(v))
#define BP_VASI(v) ((bp_vi)(v))
/* Appends the lanes of vals (bp_vu) where m is on to dst[n ...], in lane
 * order, and adds their number to n (it may write BP_LANES slots); the
 * same from the lanes' mask as bits (BP_VCOMPRESS_BITS). */
#define BP_VCOMPRESS(dst, n, m, vals)                                                         \
    BP_VCOMPRESS_BITS(dst, n, _mm512_test_epi32_mask((__m512i)(m), (__m512i)(m)), vals)
#define BP_VCOMPRESS_BITS(dst, n, mk, vals)                                          \
    do {                                                                             \
        __mmask16 mk_ = (__mmask16)(mk);                                             \
        _mm512_storeu_si512((void *)((dst) + (n)),                                   \
                            _mm512_maskz_compress_epi32(mk_, (__m512i)(vals)));        \
        (n) += (bp_u32)__builtin_popcount(mk_);                                      \
    } while (0)
#define BP_LANE_IDS ((bp_vu){0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 10u, 11u, 12u, 13u, 14u, 15u})
#define BP_VSPLAT(a) ((bp_vf)_mm512_set1_ps(a))
#define BP_VUSPLAT(a) ((bp_vu)_mm512_set1_epi32((int)(a)))
#define BP_VI0 ((bp_vi)_mm512_setzero_si512())
#define BP_VSEL(m, a, b) ((bp_vf)(((bp_vi)(a) & (m)) | ((bp_vi)(b) & ~(m))))
/* a < b ? a : b and a > b ? a : b lane by lane (NaN or equal: b), as
 * vminps and vmaxps are, one instruction: the select form let GCC fold
 * its mask into the division an argument held, which it then did twice
 * (masked and not) */
#define BP_VMIN(a, b) ((bp_vf)_mm512_min_ps((__m512)(a), (__m512)(b)))
#define BP_VMAX(a, b) ((bp_vf)_mm512_max_ps((__m512)(a), (__m512)(b)))
#define BP_VSTORE(v, p) __builtin_memcpy((p), &(v), sizeof(v))
#define BP_VLOAD(p) ((bp_vf)_mm512_loadu_ps(p))
#define BP_VLOADU(p) ((bp_vu)_mm512_loadu_si512((const void *)(p)))
#define BP_VSQRT(a) ((bp_vf)_mm512_sqrt_ps((__m512)(a)))
#define BP_VMASK(m) ((unsigned)_mm512_test_epi32_mask((__m512i)(m), (__m512i)(m)))
#define BP_VANY(m) (BP_VMASK(m) != 0u)
#elif BP_LANES == 8
/* The CPU engine's block passes on AVX2 (x86-64-v3; src/sim/cpu_blocks.c). */
#if !defined(__AVX2__)
#error "8 lanes in C need AVX2"
#endif
#include <immintrin.h>
typedef float bp_vf __attribute__((vector_size(32)));
typedef int32_t bp_vi __attribute__((vector_size(32)));
typedef uint32_t bp_vu __attribute__((vector_size(32)));
/* Gathers lane by lane (eight loads and inserts): AVX2's gather
 * instruction is microcoded on AMD's Zen 2 and 3, the processors that take
 * this build (Zen 4 and later have AVX-512), and slow on Intel's since the
 * Gather Data Sampling fix; on a Zen 3 the rain and the pile ran in
 * 0.92-0.93 of the time without it (docs/benchmarks.md). */
#define BP_VGATHER(a, J)                                                         \
    ((bp_vf){(a)[(J)[0]], (a)[(J)[1]], (a)[(J)[2]], (a)[(J)[3]], (a)[(J)[4]], \
             (a)[(J)[5]], (a)[(J)[6]], (a)[(J)[7]]})
#define BP_VGATHERU(a, J)                                                        \
    ((bp_vu){(a)[(J)[0]], (a)[(J)[1]], (a)[(J)[2]], (a)[(J)[3]], (a)[(J)[4]], \
             (a)[(J)[5]], (a)[(J)[6]], (a)[(J)[7]]})
#define BP_VTOI(v) __builtin_convertvector((v), bp_vi)
#define BP_VUTOF(v) __builtin_convertvector((v), bp_vf)
#define BP_VASU(v) ((bp_vu)(v))
#define BP_VASI(v) ((bp_vi)(v))
#define BP_LANE_IDS ((bp_vu){0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u})
#define BP_VSPLAT(a) ((bp_vf)_mm256_set1_ps(a))
#define BP_VUSPLAT(a) ((bp_vu)_mm256_set1_epi32((int)(a)))
#define BP_VI0 ((bp_vi)_mm256_setzero_si256())
#define BP_VSEL(m, a, b) ((bp_vf)(((bp_vi)(a) & (m)) | ((bp_vi)(b) & ~(m))))
#define BP_VMIN(a, b) ((bp_vf)_mm256_min_ps((__m256)(a), (__m256)(b))) /* as at 16 */
#define BP_VMAX(a, b) ((bp_vf)_mm256_max_ps((__m256)(a), (__m256)(b)))
#define BP_VSTORE(v, p) __builtin_memcpy((p), &(v), sizeof(v))
#define BP_VLOAD(p) ((bp_vf)_mm256_loadu_ps(p))
#define BP_VLOADU(p) ((bp_vu)_mm256_loadu_si256((const __m256i *)(p)))
#define BP_VSQRT(a) ((bp_vf)_mm256_sqrt_ps((__m256)(a)))
#define BP_VMASK(m) ((unsigned)_mm256_movemask_ps((__m256)(m)))
#define BP_VANY(m) (BP_VMASK(m) != 0u)
#else
#if BP_LANES != 4
#error "the C engine's lanes are 4 floats, 8 with AVX2 or 16 with AVX-512"
#endif
typedef float bp_vf __attribute__((vector_size(16)));
typedef int32_t bp_vi __attribute__((vector_size(16)));
typedef uint32_t bp_vu __attribute__((vector_size(16)));
#define BP_VGATHER(a, J) ((bp_vf){(a)[J[0]], (a)[J[1]], (a)[J[2]], (a)[J[3]]})
#define BP_VGATHERU(a, J) ((bp_vu){(a)[J[0]], (a)[J[1]], (a)[J[2]], (a)[J[3]]})
#define BP_VTOI(v) __builtin_convertvector((v), bp_vi)
#define BP_VUTOF(v) __builtin_convertvector((v), bp_vf)
#define BP_VASU(v) ((bp_vu)(v))
#define BP_VASI(v) ((bp_vi)(v))
#define BP_LANE_IDS ((bp_vu){0u, 1u, 2u, 3u})
#define BP_VSPLAT(a) ((bp_vf){(a), (a), (a), (a)})
#define BP_VUSPLAT(a) ((bp_vu){(a), (a), (a), (a)})
#define BP_VI0 ((bp_vi){0, 0, 0, 0})
#define BP_VSEL(m, a, b) ((bp_vf)(((bp_vi)(a) & (m)) | ((bp_vi)(b) & ~(m))))
#define BP_VMIN(a, b) BP_VSEL((a) < (b), (a), (b))
#define BP_VMAX(a, b) BP_VSEL((a) > (b), (a), (b))
#define BP_VSTORE(v, p) __builtin_memcpy((p), &(v), sizeof(v))
BP_FN bp_vf bp_vload(const float *p)
{
    bp_vf v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}
#define BP_VLOAD(p) bp_vload(p)
BP_FN bp_vu bp_vloadu(const bp_u32 *p)
{
    bp_vu v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}
#define BP_VLOADU(p) bp_vloadu(p)
#if defined(__SSE__)
#include <xmmintrin.h>
#undef BP_VMIN
#undef BP_VMAX
#define BP_VMIN(a, b) ((bp_vf)_mm_min_ps((__m128)(a), (__m128)(b))) /* as at 16 */
#define BP_VMAX(a, b) ((bp_vf)_mm_max_ps((__m128)(a), (__m128)(b)))
#define BP_VSQRT(a) ((bp_vf)_mm_sqrt_ps((__m128)(a)))
#define BP_VMASK(m) ((unsigned)_mm_movemask_ps((__m128)(m)))
#else
BP_FN bp_vf bp_vsqrt(bp_vf a)
{
    bp_vf r;
    for (int k = 0; k < 4; k++)
        r[k] = sqrtf(a[k]);
    return r;
}
#define BP_VSQRT(a) bp_vsqrt(a)
#define BP_VMASK(m) \
    ((unsigned)(((m)[0] & 1) | ((m)[1] & 2) | ((m)[2] & 4) | ((m)[3] & 8)))
#endif
#define BP_VANY(m) (BP_VMASK(m) != 0u)
#endif
/* Lanes of signed integers to floats: every width's BP_VUTOF converts by
 * its argument's type, so the same conversion, named for the signed
 * argument (AVX2 has no unsigned one: it takes a sequence) */
#define BP_VITOF(v) BP_VUTOF(v)

/* BP_VCOMPRESS(dst, n, m, vals) appends the lanes of vals (bp_vu) where
 * the mask m is on to dst[n], dst[n + 1], ... in lane order and adds their
 * number to n; it may write BP_LANES slots. With AVX-512 a compress in a
 * register and one store (above: the compress straight to memory is
 * microcoded and slow on AMD's Zen 4); with AVX2, and with 8 or 16 lanes
 * in OpenCL C, a permute built from a table of the lanes on for each mask
 * of 8 (below); with 4 lanes the lanes on, for each of the 16 masks, come
 * from two constants (2 bits per lane, a byte per mask) and their number
 * from a third (a nibble per mask). */
#if BP_LANES == 8 || (defined(__OPENCL_VERSION__) && BP_LANES == 16 && !defined(BP_OCL_AVX512))
/* For each mask of 8 lanes, the numbers of the lanes on, a byte each,
 * lowest first (the bytes past them 0): lane b is on in mask m when bit b
 * is set, and goes to byte BP_BELOW(m, b), the number of bits set below
 * it. Constant expressions, so the 2 KiB table is built by the compiler. */
#define BP_BIT(m, b) (((m) >> (b)) & 1u)
#define BP_BELOW(m, b)                                                                    \
    (BP_BIT(m, 0) * (0 < (b)) + BP_BIT(m, 1) * (1 < (b)) + BP_BIT(m, 2) * (2 < (b)) +     \
     BP_BIT(m, 3) * (3 < (b)) + BP_BIT(m, 4) * (4 < (b)) + BP_BIT(m, 5) * (5 < (b)) +     \
     BP_BIT(m, 6) * (6 < (b)))
#define BP_LANE_AT(m, b) (BP_K64(0) + BP_BIT(m, b) * (b)) << (8u * BP_BELOW(m, b))
#define BP_LANES_OF(m)                                                                    \
    ((BP_LANE_AT(m, 0u)) | (BP_LANE_AT(m, 1u)) | (BP_LANE_AT(m, 2u)) |                   \
     (BP_LANE_AT(m, 3u)) | (BP_LANE_AT(m, 4u)) | (BP_LANE_AT(m, 5u)) |                   \
     (BP_LANE_AT(m, 6u)) | (BP_LANE_AT(m, 7u)))
#define BP_LANES_OF4(m) \
    BP_LANES_OF(m), BP_LANES_OF(m + 1u), BP_LANES_OF(m + 2u), BP_LANES_OF(m + 3u)
#define BP_LANES_OF16(m) \
    BP_LANES_OF4(m), BP_LANES_OF4(m + 4u), BP_LANES_OF4(m + 8u), BP_LANES_OF4(m + 12u)
#define BP_LANES_OF64(m) \
    BP_LANES_OF16(m), BP_LANES_OF16(m + 16u), BP_LANES_OF16(m + 32u), BP_LANES_OF16(m + 48u)
#ifdef __OPENCL_VERSION__
__constant ulong bp_lanes_of[256] = {
#else
static const unsigned long long bp_lanes_of[256] = {
#endif
    BP_LANES_OF64(0u), BP_LANES_OF64(64u), BP_LANES_OF64(128u), BP_LANES_OF64(192u),
};
#endif

#if !defined(__OPENCL_VERSION__) && BP_LANES == 8
/* AVX2: the mask's lane numbers widened to a permute that gathers the
 * lanes on to the front, and one store. No branch on the mask (a loop
 * over its bits mispredicts: most masks of the screening are 0 to 3 lanes
 * on, anywhere). */
#define BP_VCOMPRESS(dst, n, m, vals) BP_VCOMPRESS_BITS(dst, n, BP_VMASK(m), vals)
/* the same from the lanes' mask as bits, mk below 256 */
#define BP_VCOMPRESS_BITS(dst, n, mk, vals)                                              \
    do {                                                                                 \
        bp_u32 mk_ = (mk);                                                               \
        __m256i p_ = _mm256_cvtepu8_epi32(                                               \
            _mm_loadl_epi64((const __m128i *)(const void *)(bp_lanes_of + mk_)));        \
        _mm256_storeu_si256((__m256i *)(void *)((dst) + (n)),                            \
                            _mm256_permutevar8x32_epi32((__m256i)(vals), p_));           \
        (n) += (bp_u32)__builtin_popcount(mk_);                                          \
    } while (0)
#elif defined(__OPENCL_VERSION__) && BP_LANES == 8
/* OpenCL C: the same with BP_VPERMD (the permute where the compiler has
 * it, else shuffle()) */
#define BP_VCOMPRESS(dst, n, m, vals)                                                    \
    do {                                                                                 \
        uint mk_ = BP_VMASK(m);                                                          \
        vstore8(BP_VPERMD((vals), convert_uint8(as_uchar8(bp_lanes_of[mk_]))), 0,        \
                (dst) + (n));                                                            \
        (n) += popcount(mk_);                                                            \
    } while (0)
#elif defined(BP_OCL_AVX512)
/* OpenCL C on AVX-512: the compress in a register and one 64-byte store
 * (BP_VSTORE; PoCL's rain 50k and pile 0.97-0.98 of the frame time
 * against vstore16's three stores) */
#define BP_VCOMPRESS(dst, n, m, vals) BP_VCOMPRESS_BITS(dst, n, BP_VMASK(m), vals)
#define BP_VCOMPRESS_BITS(dst, n, mk, vals)                                              \
    do {                                                                                 \
        uint mk_ = (mk);                                                                 \
        BP_VSTORE(as_uint16(__builtin_ia32_compresssi512_mask(as_int16(vals), (int16)(0), \
                                                              (ushort)mk_)),              \
                  (dst) + (n));                                                          \
        (n) += popcount(mk_);                                                            \
    } while (0)
#elif defined(__OPENCL_VERSION__) && BP_LANES == 16
/* OpenCL C, 16 lanes: each half as above, the high one after the low
 * one's lanes on */
#define BP_VCOMPRESS(dst, n, m, vals)                                                    \
    do {                                                                                 \
        uint mk_ = BP_VMASK(m), lo_ = mk_ & 255u;                                        \
        bp_vu v_ = (vals);                                                               \
        vstore8(BP_VPERMD(v_.lo, convert_uint8(as_uchar8(bp_lanes_of[lo_]))), 0,         \
                (dst) + (n));                                                            \
        vstore8(BP_VPERMD(v_.hi, convert_uint8(as_uchar8(bp_lanes_of[mk_ >> 8]))), 0,    \
                (dst) + (n) + popcount(lo_));                                            \
        (n) += popcount(mk_);                                                            \
    } while (0)
#endif

/* a[k] for the scalar fold of a list's terms. PoCL's LLVM (whose cost
 * model is an Intel core's) made the four loads of a pair's terms from the
 * list's four arrays one gather of four lanes with 64-bit addresses, slow
 * on AMD's cores; one load at a time there. */
#ifdef BP_OCL_AVX512
#define BP_SCALAR_READ(a, k) (((volatile float *)(a))[k])
#else
#define BP_SCALAR_READ(a, k) ((a)[k])
#endif
#ifndef BP_VCOMPRESS
#if BP_LANES == 4
#define BP_LANES_WHICH(mk, l) \
    ((bp_u32)((((mk) < 8u ? BP_K64(0x2409080204010000) : BP_K64(0xe439380e340d0c03)) >> (((mk) & 7u) * 8u + (l) * 2u)) & 3u))
#define BP_LANES_ON(mk) ((bp_u32)((BP_K64(0x4332322132212110) >> ((mk) * 4u)) & 15u))
#define BP_VCOMPRESS(dst, n, m, vals)                  \
    do {                                               \
        bp_vu vv_ = (vals);                            \
        bp_vi mm_ = (m);                               \
        bp_u32 v_[4], n_ = (n);                        \
        BP_VSTORE(vv_, v_);                            \
        bp_u32 mk_ = BP_VMASK(mm_);                    \
        (dst)[n_] = v_[BP_LANES_WHICH(mk_, 0u)];       \
        (dst)[n_ + 1u] = v_[BP_LANES_WHICH(mk_, 1u)];  \
        (dst)[n_ + 2u] = v_[BP_LANES_WHICH(mk_, 2u)];  \
        (dst)[n_ + 3u] = v_[BP_LANES_WHICH(mk_, 3u)];  \
        (n) = n_ + BP_LANES_ON(mk_);                   \
    } while (0)
#endif
#endif

/* "No hit" marker for times of impact measured as a fraction of a sweep. */
#define BP_NO_HIT 2.0f
/* Coulomb friction of a resting contact with static geometry (under
 * gravity): the sliding speed loses this share of the normal speed the
 * contact removes (docs/physics.md, "Friction on the floor"). Below the
 * slope of the rain's ramps (0.107), so balls still slide down them. */
#define BP_WALL_MU 0.05f
/* A resting contact's damping takes at most this many times the contact's
 * mass-split share (bp_pair_share), and at most the two-body share: a ball
 * with many contacts is damped no more than the explicit update can take
 * (docs/physics.md, "Many contacts at once"). */
#define BP_DAMP_SPLIT 3.6f
/* Walls and lines are not perfectly smooth: ball i meets them as a disc
 * up to BP_ROUGH of its radius larger than itself, the share fixed by a
 * hash of its index (bp_static_radius). On perfectly smooth geometry a
 * column of equal balls against a wall stands for ever: the wall holds
 * each at exactly one radius, so their lines of centres run exactly along
 * it and no contact ever pushes one out, an unstable equilibrium that no
 * rounding disturbs (docs/physics.md, "Columns along a wall topple"). A
 * thousandth of a radius is 0.0025 px on a ball of 2.5. */
#define BP_ROUGH 0.001f
/* Ball i's share of BP_ROUGH, in [0, 1): 24 bits of a multiplicative hash
 * of i (exact in a float). bp_block_move does the same in lanes. */
#define BP_ROUGH_HASH 2654435761u
BP_FN float bp_rough_share(bp_u32 i)
{
    return (float)((i * BP_ROUGH_HASH) >> 8) * (1.0f / 16777216.0f);
}
/* The radius with which ball i (radius r) meets walls and lines. */
BP_FN float bp_static_radius(bp_u32 i, float r)
{
    return r + r * (BP_ROUGH * bp_rough_share(i));
}
/* At most this many bounces off static geometry per ball per sub-step. */
#define BP_MAX_BOUNCES 4
/* bp_contacts works off its list of neighbours when it holds this many. */
#define BP_CHUNK 32
/* Slack after the last ball in `sorted` and `spos` (balls, not floats):
 * bp_contacts reads a whole group of lanes where a row's run ends. */
#define BP_SCREEN_PAD 16
/* A sweep closer to parallel than this (approach per sweep, in radii) is
 * no hit: after a bounce the rounding left in the normal part of the
 * velocity would otherwise be taken for a new contact at t = 0, again and
 * again, and the ball sliding along a slanted line would stand still for
 * the sub-step. */
#define BP_GRAZE 1e-5f
/* Largest neighbour search radius in cells (bounds the work per ball). */
#define BP_MAX_REACH 64

/* Everything a pass needs besides the arrays; 4-byte fields only so the
 * host and OpenCL layouts match (checked by a _Static_assert in step.c). */
typedef struct bp_step_params {
    float h;              /* sub-step length, s */
    float gx, gy;         /* gravity, px/s^2 */
    float width, height;  /* the box */
    float e;              /* restitution */
    float rest_speed;     /* slower approaches are resting contacts (e = 0) */
    float speed_cap;      /* px/s */
    float beta;           /* share of an overlap removed per sub-step (no gravity) */
    float k_spring;       /* resting contact stiffness per reduced mass, 1/s^2 */
    float k_damp;         /* resting contact damping per reduced mass, 1/s */
    float skin;           /* resting spring engages at gap < skin * rmin */
    float spring_range;   /* deepest overlap the spring sees, * rmin */
    float friction;       /* share of the sliding speed a resting contact removes per sub-step */
    float rmax;           /* largest radius */
    float r0, m0;         /* every ball's radius, mass, where all balls have the same (the
                           * lanes splat it instead of gathering it), else 0 */
    float cell, inv_cell; /* ball grid */
    bp_i32 gw, gh;
    float scell, inv_scell; /* segment grid */
    bp_i32 sgw, sgh;
    bp_u32 n;             /* balls */
    bp_u32 nlines;
    bp_u32 ystride;       /* spos: y of grid slot k at spos[ystride + k], x at spos[k] */
} bp_step_params;

/* The lanes' values of a per-ball array a at balls J: v0 in every lane
 * where every ball has that value (bp_step_params.r0, m0: > 0), else
 * gathered. */
#define BP_VGATHER_OR(v0, a, J) ((v0) > 0.0f ? BP_VSPLAT(v0) : BP_VGATHER(a, J))

/* ---- Small helpers -------------------------------------------------------- */

BP_FN bp_i32 bp_clampi(bp_i32 v, bp_i32 lo, bp_i32 hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* Grid coordinate of a position along one axis, clamped into [0, n-1]. */
BP_FN bp_i32 bp_grid_coord(float v, float inv_cell, bp_i32 n)
{
    /* floor(c) < 0 exactly when c < 0 (and NaN fails both tests), and
     * floor(c) >= n-1 exactly when c >= n-1; in between the conversion's
     * truncation is the floor, with no rounding instruction needed. */
    float c = v * inv_cell;
    if (!(c >= 0.0f))
        return 0;
    if (c >= (float)(n - 1))
        return n - 1;
    return (bp_i32)c;
}

/* The ball grid runs by the world's columns: a row of the grid (its cells
 * in slot order) is a column of the world, so a position's coordinate
 * along a grid row is its y (BP_GX) and its grid row comes from its x
 * (BP_GY); gw is the cells along the world's height, gh along its width.
 * The threads' ranges of slots (and the merge's parts, pass 5's ranges
 * and the re-sort's order with them) are then cut by columns of the
 * world, across the piles that gravity lays down in layers, where rows of
 * the world had cut along them: a range's ghosts (bp_ghost_first) on the
 * landed rain 10k 60-90 balls, not 480-560, on a pile of 10,000 balls in
 * a 1280 px box 55, not 640 (docs/benchmarks.md, seventy-sixth session). */
#define BP_GX(x, y) (y)
#define BP_GY(x, y) (x)

/* The cell of (x, y) in a grid of gw x gh square cells of side
 * 1 / inv_cell, row by row (BP_GX, BP_GY): the ball grid's (bp_cell_of),
 * and the re-sort by place's (src/sim/order.c, and bp_k_order_cell on a
 * GPU). */
BP_FN bp_u32 bp_grid_cell(float x, float y, float inv_cell, bp_i32 gw, bp_i32 gh)
{
    return (bp_u32)(bp_grid_coord(BP_GY(x, y), inv_cell, gh) * gw +
                    bp_grid_coord(BP_GX(x, y), inv_cell, gw));
}

BP_FN bp_u32 bp_cell_of(const bp_step_params *P, float x, float y)
{
    return bp_grid_cell(x, y, P->inv_cell, P->gw, P->gh);
}

/* How far apart two balls whose radii sum to rsum may be and still be
 * close (bp_pair_close): touching, plus the skin, plus a sub-step at
 * rest_speed. A macro so that the scalar test and the SIMD lanes of
 * bp_contact_group (rsum a vector there) compute it the same way. */
#define BP_CLOSE_DIST(P, rsum) ((rsum) * (1.0f + (P)->skin) + (P)->rest_speed * (P)->h)

/* How far from its centre ball i (radius ri, speed vi) must look for
 * neighbours in this sub-step, vmax being the fastest ball's speed. A
 * neighbour j matters if it is close (bp_pair_close: within
 * rsum (1 + skin) + rest_speed h) or can be hit within the sub-step, which
 * needs the gap closed at the relative speed, at most (vi + vmax) h; and
 * rsum <= ri + rmax. 1% more covers the rounding of the exact tests. */
BP_FN float bp_reach(const bp_step_params *P, float ri, float vi, float vmax)
{
    float rsum = ri + P->rmax;
    float close = BP_CLOSE_DIST(P, rsum);
    float hit = rsum + (vi + vmax) * P->h;
    return 1.01f * BP_FMAX(close, hit);
}

/* The block of ball-grid cells that holds every ball within `reach` of a
 * position, at most BP_MAX_REACH cells either side of its own cell (which
 * bounds the work per ball). */
typedef struct bp_window {
    bp_i32 x0, x1, y0, y1;
} bp_window;

BP_FN bp_window bp_search_window(const bp_step_params *P, float x, float y, float reach)
{
    float gx = BP_GX(x, y), gy = BP_GY(x, y);
    bp_i32 cx = bp_grid_coord(gx, P->inv_cell, P->gw), cy = bp_grid_coord(gy, P->inv_cell, P->gh);
    bp_window w;
    w.x0 = bp_clampi(bp_grid_coord(gx - reach, P->inv_cell, P->gw), cx - BP_MAX_REACH, cx);
    w.x1 = bp_clampi(bp_grid_coord(gx + reach, P->inv_cell, P->gw), cx, cx + BP_MAX_REACH);
    w.y0 = bp_clampi(bp_grid_coord(gy - reach, P->inv_cell, P->gh), cy - BP_MAX_REACH, cy);
    w.y1 = bp_clampi(bp_grid_coord(gy + reach, P->inv_cell, P->gh), cy, cy + BP_MAX_REACH);
    return w;
}

/* Scales (vx, vy) down to the speed cap. */
BP_FN void bp_cap_speed(float cap, float *vx, float *vy)
{
    float s2 = *vx * *vx + *vy * *vy;
    if (!(s2 == s2) || !BP_ISFINITE(s2)) { /* never let NaN/inf in */
        *vx = 0.0f;
        *vy = 0.0f;
    } else if (s2 > cap * cap) {
        float k = cap / BP_SQRT(s2);
        *vx *= k;
        *vy *= k;
    }
}

/* ---- Pass 1: integrate ------------------------------------------------- */

/* Gravity and the speed cap for ball i; returns its new speed squared. */
BP_FN float bp_integrate(bp_u32 i, const bp_step_params *P, BP_GLOBAL float *vx,
                         BP_GLOBAL float *vy)
{
    float ux = vx[i] + P->gx * P->h, uy = vy[i] + P->gy * P->h;
    bp_cap_speed(P->speed_cap, &ux, &uy);
    vx[i] = ux;
    vy[i] = uy;
    return ux * ux + uy * uy;
}

/* ---- Pass 2: the grid ----------------------------------------------------- */

/* Counting sort of the balls by cell, serially: sorted[] lists the ball
 * indices cell by cell, ascending within a cell (so the order is the same
 * on every engine and thread count), and start[c] is where cell c begins,
 * start[ncells] = n. Four passes and no cursor array: count into start[],
 * prefix it in place to where each cell ends, then put the balls in from
 * the last one down, each taking the slot just before its cell's end,
 * which leaves start[c] at the cell's beginning. */
BP_FN void bp_grid_build(bp_u32 n, bp_u32 ncells, BP_GLOBAL const bp_u32 *cell,
                         BP_GLOBAL bp_u32 *start, BP_GLOBAL bp_u32 *sorted)
{
    for (bp_u32 c = 0u; c < ncells; c++)
        start[c] = 0u;
    for (bp_u32 i = 0u; i < n; i++)
        start[cell[i]]++;
    bp_u32 run = 0u;
    for (bp_u32 c = 0u; c < ncells; c++) {
        run += start[c];
        start[c] = run;
    }
    for (bp_u32 i = n; i-- > 0u;)
        sorted[--start[cell[i]]] = i;
    start[ncells] = n;
}

/* The re-sort by place's order (src/sim/order.h): each ball's cell of the
 * re-sort's grid (inv_cell, gw x gh cells, ncells in all) into cell[],
 * then bp_grid_build's counting sort into from[], its counts in start[]
 * (ncells + 1 words). The host's bp_order_from and the OpenCL engine's
 * bp_k_order_serial both take it, so their orders are the same. */
BP_FN void bp_order_sort(bp_u32 n, BP_GLOBAL const float *x, BP_GLOBAL const float *y,
                         float inv_cell, bp_i32 gw, bp_i32 gh, bp_u32 ncells,
                         BP_GLOBAL bp_u32 *cell, BP_GLOBAL bp_u32 *start,
                         BP_GLOBAL bp_u32 *from)
{
    for (bp_u32 i = 0u; i < n; i++)
        cell[i] = bp_grid_cell(x[i], y[i], inv_cell, gw, gh);
    bp_grid_build(n, ncells, cell, start, from);
}

/* The same grid built by a team, the balls cut into parts by index, each
 * part's balls counted into its own array of ncells words
 * (bp_grid_count), the cells' offsets from all the counts
 * (bp_grid_offsets), each part put into its cells (bp_grid_place). A
 * cell lists part 0's balls first, then part 1's, ..., each ascending:
 * bp_grid_build's order, for any number of parts. The CPU engine's
 * threads and bp_k_steps' work-groups build it so. */

/* Balls i0..i1-1 counted by cell into cnt. */
BP_FN void bp_grid_count(BP_GLOBAL const bp_u32 *cell, bp_u32 i0, bp_u32 i1,
                         BP_GLOBAL bp_u32 *cnt, bp_u32 ncells)
{
    for (bp_u32 c = 0u; c < ncells; c++)
        cnt[c] = 0u;
    for (bp_u32 i = i0; i < i1; i++)
        cnt[cell[i]]++;
}

/* The counts of `parts` parts become where each part's run of each cell
 * ends (cells in order, parts in order within a cell); cnt[0] is the
 * grid's start[] (ncells + 1 words), whose last word becomes n. _span:
 * cells c..c1-1 only, run words coming before cell c (a team's members
 * each sum a span, its run from the spans' totals, below), not the last
 * word. */
BP_FN void bp_grid_offsets_span(BP_GLOBAL bp_u32 *const *cnt, bp_u32 parts, bp_u32 c,
                                bp_u32 c1, bp_u32 run)
{
    for (; c < c1; c++)
        for (bp_u32 u = 0u; u < parts; u++) {
            run += cnt[u][c];
            cnt[u][c] = run;
        }
}

/* A team sums the offsets in spans of cells, a span a member (the CPU
 * engine's threads, bp_k_steps' groups), each span's run from the totals
 * of the spans before it, which each part sums of its counts after
 * counting them. The cells of a span of ns over ncells: a multiple of 16,
 * whole groups of the 16-lane sum. */
BP_FN bp_u32 bp_grid_span_cells(bp_u32 ncells, bp_u32 ns)
{
    return ((ncells + ns - 1u) / ns + 15u) & ~15u;
}

/* Span k's cells, c0..c1-1, of spans of `span` cells over ncells. */
BP_FN void bp_grid_span_of(bp_u32 k, bp_u32 span, bp_u32 ncells, bp_u32 *c0, bp_u32 *c1)
{
    bp_u64 a = (bp_u64)k * span, b = a + span;
    *c0 = a < ncells ? (bp_u32)a : ncells;
    *c1 = b < ncells ? (bp_u32)b : ncells;
}

/* Count array a's total over each of ns spans but the last (which no
 * span's run takes): tot[0..ns-2]. */
BP_FN void bp_grid_span_totals(BP_GLOBAL const bp_u32 *a, bp_u32 ns, bp_u32 span,
                               bp_u32 ncells, BP_GLOBAL bp_u32 *tot)
{
    for (bp_u32 k = 0u; k + 1u < ns; k++) {
        bp_u32 c0, c1, t = 0u;
        bp_grid_span_of(k, span, ncells, &c0, &c1);
        for (bp_u32 q = c0; q < c1; q++)
            t += a[q];
        tot[k] = t;
    }
}

/* Span k's run: the totals of the spans before it over the parts, part
 * u's at tot + u * stride. */
BP_FN bp_u32 bp_grid_span_run(BP_GLOBAL const bp_u32 *tot, bp_u32 stride, bp_u32 parts,
                              bp_u32 k)
{
    bp_u32 run = 0u;
    for (bp_u32 q = 0u; q < k; q++)
        for (bp_u32 u = 0u; u < parts; u++)
            run += tot[u * stride + q];
    return run;
}

BP_FN void bp_grid_offsets(BP_GLOBAL bp_u32 *const *cnt, bp_u32 parts, bp_u32 ncells, bp_u32 n)
{
    bp_grid_offsets_span(cnt, parts, 0u, ncells, 0u);
    cnt[0][ncells] = n;
}

#if BP_LANES == 16 && defined(__OPENCL_VERSION__)
/* bp_grid_offsets 16 cells at a time, as the CPU engine's below (PoCL's
 * one-launch step on AVX-512: each group sums a span of the cells, or one
 * group all of them): the lanes shifted by shuffles with constant masks.
 * The same words. */
BP_FN void bp_grid_offsets_span_lanes(BP_GLOBAL bp_u32 *const *cnt, bp_u32 parts, bp_u32 c,
                                      bp_u32 c1, bp_u32 run0)
{
    const uint16 zero = (uint16)(0u);
    uint16 carry = (uint16)(run0); /* the words before this group's cells, in every lane */
    for (; c + 16u <= c1; c += 16u) {
        uint16 tot = zero;
        for (bp_u32 u = 0u; u < parts; u++)
            tot += BP_VLOADU(cnt[u] + c);
        uint16 x = tot + shuffle2(zero, tot, (uint16)(0u, 16u, 17u, 18u, 19u, 20u, 21u, 22u, 23u,
                                                      24u, 25u, 26u, 27u, 28u, 29u, 30u));
        x += shuffle2(zero, x, (uint16)(0u, 1u, 16u, 17u, 18u, 19u, 20u, 21u, 22u, 23u, 24u, 25u,
                                        26u, 27u, 28u, 29u));
        x += shuffle2(zero, x, (uint16)(0u, 1u, 2u, 3u, 16u, 17u, 18u, 19u, 20u, 21u, 22u, 23u,
                                        24u, 25u, 26u, 27u));
        x += shuffle2(zero, x, (uint16)(0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 16u, 17u, 18u, 19u, 20u,
                                        21u, 22u, 23u));
        uint16 run = carry + (x - tot);
        for (bp_u32 u = 0u; u < parts; u++) {
            run += BP_VLOADU(cnt[u] + c);
            BP_VSTORE(run, cnt[u] + c); /* one store (vstore16: four, in PoCL's build) */
        }
        carry += (uint16)(x.sf);
    }
    bp_grid_offsets_span(cnt, parts, c, c1, carry.s0); /* the last cells */
}

BP_FN void bp_grid_offsets_lanes(BP_GLOBAL bp_u32 *const *cnt, bp_u32 parts, bp_u32 ncells,
                                 bp_u32 n)
{
    bp_grid_offsets_span_lanes(cnt, parts, 0u, ncells, 0u);
    cnt[0][ncells] = n;
}
#elif BP_LANES == 16
/* bp_grid_offsets 16 cells at a time (the CPU engine's AVX-512 build): the
 * 16 cells' totals over the parts, their running sum across the lanes
 * (adds of the lanes shifted by 1, 2, 4 and 8) on the last group's, then
 * each part's ends from it: the same words as bp_grid_offsets, whose
 * chain of one add a word took 17 us a sub-step on the 50k worlds' 15,000
 * cells (the grid's only serial loop). */
BP_FN void bp_grid_offsets_span_lanes(bp_u32 *const *cnt, bp_u32 parts, bp_u32 c, bp_u32 c1,
                                      bp_u32 run0)
{
    const __m512i zero = _mm512_setzero_si512(), last = _mm512_set1_epi32(15);
    /* the words before this group's cells, in every lane */
    __m512i carry = _mm512_set1_epi32((int)run0);
    for (; c + 16u <= c1; c += 16u) {
        __m512i tot = zero;
        for (bp_u32 u = 0u; u < parts; u++)
            tot = _mm512_add_epi32(tot, _mm512_loadu_si512((const void *)(cnt[u] + c)));
        __m512i x = _mm512_add_epi32(tot, _mm512_alignr_epi32(tot, zero, 15));
        x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 14));
        x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 12));
        x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 8));
        __m512i run = _mm512_add_epi32(carry, _mm512_sub_epi32(x, tot));
        for (bp_u32 u = 0u; u < parts; u++) {
            run = _mm512_add_epi32(run, _mm512_loadu_si512((const void *)(cnt[u] + c)));
            _mm512_storeu_si512((void *)(cnt[u] + c), run);
        }
        carry = _mm512_add_epi32(carry, _mm512_permutexvar_epi32(last, x));
    }
    bp_grid_offsets_span(cnt, parts, c, c1,
                         (bp_u32)_mm_cvtsi128_si32(_mm512_castsi512_si128(carry)));
}

BP_FN void bp_grid_offsets_lanes(bp_u32 *const *cnt, bp_u32 parts, bp_u32 ncells, bp_u32 n)
{
    bp_grid_offsets_span_lanes(cnt, parts, 0u, ncells, 0u);
    cnt[0][ncells] = n;
}
#else
/* The widths with no scan across their lanes: one word at a time. */
BP_FN void bp_grid_offsets_span_lanes(BP_GLOBAL bp_u32 *const *cnt, bp_u32 parts, bp_u32 c,
                                      bp_u32 c1, bp_u32 run)
{
    bp_grid_offsets_span(cnt, parts, c, c1, run);
}

BP_FN void bp_grid_offsets_lanes(BP_GLOBAL bp_u32 *const *cnt, bp_u32 parts, bp_u32 ncells,
                                 bp_u32 n)
{
    bp_grid_offsets(cnt, parts, ncells, n);
}
#endif

/* Balls i0..i1-1 (a part) put into their cells from the back, with their
 * positions in grid order (bp_grid_position's spos, from x and y read in
 * order rather than gathered through sorted): cnt ends as where this
 * part's runs begin (for part 0, the grid's start[]). */
BP_FN void bp_grid_place(BP_GLOBAL const bp_u32 *cell, bp_u32 i0, bp_u32 i1,
                         BP_GLOBAL bp_u32 *cnt, BP_GLOBAL bp_u32 *sorted,
                         BP_GLOBAL const float *x, BP_GLOBAL const float *y,
                         BP_GLOBAL float *spos, bp_u32 ystride)
{
    for (bp_u32 i = i1; i-- > i0;) {
        bp_u32 k = --cnt[cell[i]];
        sorted[k] = i;
        spos[k] = x[i];
        spos[ystride + k] = y[i];
    }
}

/* The position of the ball in slot k of the grid's order, where bp_contacts
 * screens it (x at spos[k], y at spos[ystride + k]: two planes, so a
 * screening step loads BP_LANES of each, with no index to follow and no
 * shuffle to part x from y). */
BP_FN void bp_grid_position(bp_u32 k, BP_GLOBAL const bp_u32 *sorted, BP_GLOBAL const float *x,
                            BP_GLOBAL const float *y, BP_GLOBAL float *spos, bp_u32 ystride)
{
    bp_u32 j = sorted[k];
    spos[k] = x[j];
    spos[ystride + k] = y[j];
}

/* ---- Ball-ball contacts -------------------------------------------------- */

/* Time of impact of two discs within [0, h]: ball j sits at d = pj - pi
 * relative to ball i, which moves at rv = vi - vj relative to j. Solves
 * |d - rv t| = rsum (seed 002's quadratic, in the form that does not cancel).
 * Returns 0 when they already overlap and approach, -1 when they do not
 * meet within h or move apart. */
BP_FN float bp_pair_toi(float dx, float dy, float rvx, float rvy, float rsum, float h)
{
    float dr = dx * rvx + dy * rvy; /* > 0: approaching */
    if (dr <= 0.0f)
        return -1.0f;
    float c = dx * dx + dy * dy - rsum * rsum;
    if (c <= 0.0f)
        return 0.0f;
    if (c > 2.0f * dr * h) /* the gap cannot close within h */
        return -1.0f;
    float a = rvx * rvx + rvy * rvy;
    float disc = dr * dr - a * c;
    if (disc < 0.0f)
        return -1.0f;
    float t = c / (dr + BP_SQRT(disc));
    return t <= h ? t : -1.0f;
}

/* What the neighbours of a ball do to it in one sub-step: the velocity
 * change and the displacement, summed over pairs. */
typedef struct bp_push {
    float dvx, dvy, px, py;
} bp_push;

BP_FN void bp_push_add(bp_push *a, bp_push b)
{
    a->dvx += b.dvx;
    a->dvy += b.dvy;
    a->px += b.px;
    a->py += b.py;
}

/* A ball's sums in memory: one record of four floats per ball, ball i's at
 * sum[4i] (dvx, dvy, px, py; pass 4 turns them into its velocity and
 * displacement), so a pair's term is added to them with one 4-float load,
 * add and store (the four IEEE additions of bp_push_add, each in its
 * place). */
#ifdef __OPENCL_VERSION__
/* (a record is 16-byte aligned in its buffer; PoCL's vload4 is two 8-byte
 * loads) */
typedef float4 bp_f4;
#define BP_F4(a, b, c, d) ((float4)((a), (b), (c), (d)))
#define BP_F4LOAD(p) (*(__global const float4 *)(p))
#define BP_F4STORE(v, p) (*(__global float4 *)(p) = (v))
#else
typedef float bp_f4 __attribute__((vector_size(16)));
#define BP_F4(a, b, c, d) ((bp_f4){(a), (b), (c), (d)})
static inline bp_f4 bp_f4load(const float *p)
{
    bp_f4 v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}
#define BP_F4LOAD(p) bp_f4load(p)
#define BP_F4STORE(v, p) __builtin_memcpy((p), &(v), sizeof(bp_f4))
#endif
#define BP_F4PUSH(c) BP_F4((c).dvx, (c).dvy, (c).px, (c).py)

/* BP_LANES records of four floats from four vectors and back: ball k's
 * record (a_k, b_k, c_k, d_k) at p + 4k (bp_vstore_records,
 * bp_vload_records), or, where the order does not matter (the pair
 * list's terms), at p + 4 BP_REC(k) (bp_vstore_records_any: with AVX2
 * and AVX-512 a transpose within each 128-bit chunk only). */
/* The shuffles of two vectors, constant lanes (__builtin_shufflevector:
 * gcc from 12, clang; one unpack, shuffle or permute instruction each)
 * within each 128-bit chunk: the interleaves of the low and the high
 * pairs, and of the first two and the last two lanes of a and b */
#if BP_LANES == 16
#define BP_SV_ZIPLO(a, b) \
    __builtin_shufflevector(a, b, 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29)
#define BP_SV_ZIPHI(a, b) \
    __builtin_shufflevector(a, b, 2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31)
#define BP_SV_LO2(a, b) \
    __builtin_shufflevector(a, b, 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29)
#define BP_SV_HI2(a, b) \
    __builtin_shufflevector(a, b, 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31)
/* chunks (a0, a1, b0, b1), (a2, a3, b2, b3), (a0, a2, b0, b2), (a1, a3, b1, b3) */
#define BP_SV_C01(a, b) \
    __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23)
#define BP_SV_C23(a, b) \
    __builtin_shufflevector(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31)
#define BP_SV_C02(a, b) \
    __builtin_shufflevector(a, b, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27)
#define BP_SV_C13(a, b) \
    __builtin_shufflevector(a, b, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31)
/* the 4 x 4 transpose of the chunks of w, x, y, z: the record of lane
 * 4 L + m, in chunk L of the m-th, to chunk m of the L-th, and back */
#define BP_CHUNKS(w, x, y, z)                                                          \
    do {                                                                               \
        bp_vf u0_ = BP_SV_C01(w, x), u1_ = BP_SV_C01(y, z);                            \
        bp_vf u2_ = BP_SV_C23(w, x), u3_ = BP_SV_C23(y, z);                            \
        w = BP_SV_C02(u0_, u1_);                                                       \
        x = BP_SV_C13(u0_, u1_);                                                       \
        y = BP_SV_C02(u2_, u3_);                                                       \
        z = BP_SV_C13(u2_, u3_);                                                       \
    } while (0)
#define BP_CHUNKS_BACK BP_CHUNKS
#elif BP_LANES == 8
#define BP_SV_ZIPLO(a, b) __builtin_shufflevector(a, b, 0, 8, 1, 9, 4, 12, 5, 13)
#define BP_SV_ZIPHI(a, b) __builtin_shufflevector(a, b, 2, 10, 3, 11, 6, 14, 7, 15)
#define BP_SV_LO2(a, b) __builtin_shufflevector(a, b, 0, 1, 8, 9, 4, 5, 12, 13)
#define BP_SV_HI2(a, b) __builtin_shufflevector(a, b, 2, 3, 10, 11, 6, 7, 14, 15)
/* chunks (a0, b0) and (a1, b1) */
#define BP_SV_C00(a, b) __builtin_shufflevector(a, b, 0, 1, 2, 3, 8, 9, 10, 11)
#define BP_SV_C11(a, b) __builtin_shufflevector(a, b, 4, 5, 6, 7, 12, 13, 14, 15)
/* the record of lane 4 L + m, in chunk L of the m-th, to lane order, and
 * back */
#define BP_CHUNKS(w, x, y, z)                                                          \
    do {                                                                               \
        bp_vf u0_ = BP_SV_C00(w, x), u1_ = BP_SV_C00(y, z);                            \
        bp_vf u2_ = BP_SV_C11(w, x), u3_ = BP_SV_C11(y, z);                            \
        w = u0_;                                                                       \
        x = u1_;                                                                       \
        y = u2_;                                                                       \
        z = u3_;                                                                       \
    } while (0)
#define BP_CHUNKS_BACK(w, x, y, z)                                                     \
    do {                                                                               \
        bp_vf u0_ = BP_SV_C00(w, y), u1_ = BP_SV_C11(w, y);                            \
        bp_vf u2_ = BP_SV_C00(x, z), u3_ = BP_SV_C11(x, z);                            \
        w = u0_;                                                                       \
        x = u1_;                                                                       \
        y = u2_;                                                                       \
        z = u3_;                                                                       \
    } while (0)
#else
#define BP_SV_ZIPLO(a, b) __builtin_shufflevector(a, b, 0, 4, 1, 5)
#define BP_SV_ZIPHI(a, b) __builtin_shufflevector(a, b, 2, 6, 3, 7)
#define BP_SV_LO2(a, b) __builtin_shufflevector(a, b, 0, 1, 4, 5)
#define BP_SV_HI2(a, b) __builtin_shufflevector(a, b, 2, 3, 6, 7)
#define BP_CHUNKS(w, x, y, z) /* one chunk: in lane order */
#define BP_CHUNKS_BACK(w, x, y, z)
#endif
/* the 4 x 4 transpose within each 128-bit chunk of w, x, y, z */
#define BP_T4X4(w, x, y, z)                                                            \
    do {                                                                               \
        bp_vf t0_ = BP_SV_ZIPLO(w, x), t1_ = BP_SV_ZIPHI(w, x);                        \
        bp_vf t2_ = BP_SV_ZIPLO(y, z), t3_ = BP_SV_ZIPHI(y, z);                        \
        w = BP_SV_LO2(t0_, t2_);                                                       \
        x = BP_SV_HI2(t0_, t2_);                                                       \
        y = BP_SV_LO2(t1_, t3_);                                                       \
        z = BP_SV_HI2(t1_, t3_);                                                       \
    } while (0)
/* The OP of all of v's lanes (of type T) into every lane: v OP v's lanes
 * turned by half, a quarter, ... of the width; BP_VHMAX_STEPS the largest
 * lane of a bp_vi */
#define BP_VIMAX(a, b) ((((a) > (b)) & (a)) | (~((a) > (b)) & (b)))
#if BP_LANES == 16
#define BP_VH_STEPS(T, v, OP)                                                          \
    do {                                                                               \
        T r_ =                                                                         \
            __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7); \
        v = OP(v, r_);                                                                 \
        r_ = __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, \
                                     11);                                              \
        v = OP(v, r_);                                                                 \
        r_ = __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, \
                                     13);                                              \
        v = OP(v, r_);                                                                 \
        r_ = __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, \
                                     14);                                              \
        v = OP(v, r_);                                                                 \
    } while (0)
#elif BP_LANES == 8
#define BP_VH_STEPS(T, v, OP)                                                          \
    do {                                                                               \
        T r_ = __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3);                  \
        v = OP(v, r_);                                                                 \
        r_ = __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5);                    \
        v = OP(v, r_);                                                                 \
        r_ = __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6);                    \
        v = OP(v, r_);                                                                 \
    } while (0)
#else
#define BP_VH_STEPS(T, v, OP)                                                          \
    do {                                                                               \
        T r_ = __builtin_shufflevector(v, v, 2, 3, 0, 1);                              \
        v = OP(v, r_);                                                                 \
        r_ = __builtin_shufflevector(v, v, 1, 0, 3, 2);                                \
        v = OP(v, r_);                                                                 \
    } while (0)
#endif
#define BP_VHMAX_STEPS(v) BP_VH_STEPS(bp_vi, v, BP_VIMAX)
BP_FN bp_i32 bp_vhmax(bp_vi v)
{
    BP_VHMAX_STEPS(v);
    bp_i32 l[BP_LANES];
    BP_VSTORE(v, l);
    return l[0];
}

/* The smallest lane of v. */
BP_FN float bp_vhminf(bp_vf v)
{
    BP_VH_STEPS(bp_vf, v, BP_VMIN);
    float l[BP_LANES];
    BP_VSTORE(v, l);
    return l[0];
}

/* The largest lane of v. */
BP_FN float bp_vhmaxf(bp_vf v)
{
    BP_VH_STEPS(bp_vf, v, BP_VMAX);
    float l[BP_LANES];
    BP_VSTORE(v, l);
    return l[0];
}

#define BP_STORE4(w, x, y, z, p)                                                       \
    do {                                                                               \
        BP_VSTORE(w, (p));                                                             \
        BP_VSTORE(x, (p) + BP_LANES);                                                  \
        BP_VSTORE(y, (p) + 2 * BP_LANES);                                              \
        BP_VSTORE(z, (p) + 3 * BP_LANES);                                              \
    } while (0)
/* (private memory in OpenCL C) */
BP_FN void bp_vstore_records_any(bp_vf a, bp_vf b, bp_vf c, bp_vf d, float *p)
{
    BP_T4X4(a, b, c, d);
    BP_STORE4(a, b, c, d, p);
}
BP_FN void bp_vstore_records(bp_vf a, bp_vf b, bp_vf c, bp_vf d, BP_GLOBAL float *p)
{
    BP_T4X4(a, b, c, d);
    BP_CHUNKS(a, b, c, d);
    BP_STORE4(a, b, c, d, p);
}
BP_FN void bp_vload_records(BP_GLOBAL const float *p, bp_vf *a, bp_vf *b, bp_vf *c, bp_vf *d)
{
    bp_vf w = BP_VLOAD(p), x = BP_VLOAD(p + BP_LANES);
    bp_vf y = BP_VLOAD(p + 2 * BP_LANES), z = BP_VLOAD(p + 3 * BP_LANES);
    BP_CHUNKS_BACK(w, x, y, z);
    BP_T4X4(w, x, y, z);
    *a = w;
    *b = x;
    *c = y;
    *d = z;
}
/* The records of balls I[0 .. BP_LANES-1] (p + 4 I[k]) as
 * bp_vload_records gives those of balls in a row (pass 5's balls near a
 * wall or a line, pass 4's with an impact partner). In the 16-lane
 * builds sixteen 16-byte loads, four into each vector in the chunk order
 * BP_CHUNKS_BACK leaves, and the transpose within the chunks, where four
 * gathers of sixteen floats each had made sixty-four loads: in one
 * process, PoCL's rain 10k and 50k 0.98 of the frame time, the CPU
 * engine's 0.99, the pile 50k level; the same bits (ninety-second
 * session, docs/benchmarks.md). Elsewhere the four gathers. */
#if BP_LANES == 16 && (!defined(__OPENCL_VERSION__) || defined(BP_OCL_AVX512))
#ifdef __OPENCL_VERSION__
#define BP_REC_AT(p, I, k) BP_F4LOAD((p) + 4u * (I)[k])
#define BP_REC4(p, I, k) ((float16)(BP_REC_AT(p, I, k), BP_REC_AT(p, I, k + 4), \
                                    BP_REC_AT(p, I, k + 8), BP_REC_AT(p, I, k + 12)))
#else
#define BP_REC_AT(p, I, k) _mm_loadu_ps((p) + 4u * (I)[k])
#define BP_REC4(p, I, k)                                                                     \
    ((bp_vf)_mm512_insertf32x4(                                                              \
        _mm512_insertf32x4(_mm512_insertf32x4(_mm512_castps128_ps512(BP_REC_AT(p, I, k)),    \
                                              BP_REC_AT(p, I, k + 4), 1),                    \
                           BP_REC_AT(p, I, k + 8), 2),                                       \
        BP_REC_AT(p, I, k + 12), 3))
#endif
BP_FN void bp_vgather_records(BP_GLOBAL const float *p, const bp_u32 *I, bp_vf *a, bp_vf *b,
                              bp_vf *c, bp_vf *d)
{
    bp_vf w = BP_REC4(p, I, 0), x = BP_REC4(p, I, 1), y = BP_REC4(p, I, 2), z = BP_REC4(p, I, 3);
    BP_T4X4(w, x, y, z);
    *a = w;
    *b = x;
    *c = y;
    *d = z;
}
#else
BP_FN_INLINE void bp_vgather_records(BP_GLOBAL const float *p, const bp_u32 *I, bp_vf *a,
                                     bp_vf *b, bp_vf *c, bp_vf *d)
{
    bp_vu ids = BP_VLOADU(I);
    bp_u32 R[4][BP_LANES]; /* the fields of the balls' records */
    for (int f = 0; f < 4; f++) {
        bp_vu rf = ids * 4u + BP_VUSPLAT((bp_u32)f);
        BP_VSTORE(rf, R[f]);
    }
    *a = BP_VGATHER(p, R[0]);
    *b = BP_VGATHER(p, R[1]);
    *c = BP_VGATHER(p, R[2]);
    *d = BP_VGATHER(p, R[3]);
}
#endif
/* Where bp_vstore_records_any puts lane k's record (k counted from a
 * multiple of BP_LANES): lane 4 L + m of a group at m BP_LANES / 4 + L. */
#define BP_REC(k)                                                                   \
    (((k) & ~(bp_u32)(BP_LANES - 1)) | (((k) & 3u) * (bp_u32)(BP_LANES / 4)) |      \
     (((k) & (bp_u32)(BP_LANES - 1)) >> 2))
/* The lane k whose record is at BP_REC(k) = r. */
#define BP_REC_INV(r)                                                               \
    (((r) & ~(bp_u32)(BP_LANES - 1)) | (((r) & (bp_u32)(BP_LANES / 4 - 1)) << 2) |  \
     (((r) & (bp_u32)(BP_LANES - 1)) / (bp_u32)(BP_LANES / 4)))

/* The unit vector from ball i towards ball j, dist = |(dx, dy)| apart;
 * balls on the same centre are split along x, by index order. */
BP_FN void bp_pair_normal(bp_u32 i, bp_u32 j, float dx, float dy, float dist, float *nx,
                          float *ny)
{
    if (dist > 0.0f) {
        *nx = dx / dist;
        *ny = dy / dist;
    } else {
        *nx = j > i ? 1.0f : -1.0f;
        *ny = 0.0f;
    }
}

/* Ball j is close enough to ball i (d2 apart, radii summing to rsum) for a
 * resting contact or an overlap correction. */
BP_FN int bp_pair_close(const bp_step_params *P, float d2, float rsum)
{
    float near_ = BP_CLOSE_DIST(P, rsum);
    return d2 < near_ * near_;
}

/* Impact of ball i with its mutual partner j: seed 003's normal/tangent
 * formula with restitution, v1n' = v1n - (1+e) m2/(m1+m2) (v1n - v2n):
 * momentum exact, energy exact for e = 1. Speculative: applied when the
 * time of impact falls inside this sub-step, so the pair never passes
 * through. The normal is the line of centres at the moment of contact, not
 * at the start of the sub-step. mu = m_j / (m_i + m_j). */
BP_FN void bp_pair_impact(const bp_step_params *P, bp_u32 i, bp_u32 j, float dx, float dy,
                          float d2, float rvx, float rvy, float rsum, float mu, bp_push *acc)
{
    float dist = BP_SQRT(d2), nx, ny;
    bp_pair_normal(i, j, dx, dy, dist, &nx, &ny);
    float gap = dist - rsum;
    float t = BP_FMAX(bp_pair_toi(dx, dy, rvx, rvy, rsum, P->h), 0.0f);
    float cx_ = dx - rvx * t, cy_ = dy - rvy * t;
    float cl = BP_SQRT(cx_ * cx_ + cy_ * cy_);
    if (cl > 0.0f) {
        nx = cx_ / cl;
        ny = cy_ / cl;
    }
    float vn = rvx * nx + rvy * ny;
    float k_ = (1.0f + P->e) * mu * vn;
    acc->dvx -= k_ * nx;
    acc->dvy -= k_ * ny;
    if (gap < 0.0f) {
        acc->px += mu * P->beta * gap * nx;
        acc->py += mu * P->beta * gap * ny;
    }
}

/* What a contact needs to know of one of its balls besides its motion:
 * where it is, its radius and mass, and how many balls it touched last
 * sub-step (n, at least 1). */
typedef struct bp_side {
    float x, y, r, m, n;
} bp_side;

/* A ball's contact count as mass splitting takes it: at least 1. */
BP_FN float bp_split_n(bp_u8 n)
{
    return n > 0 ? (float)n : 1.0f;
}

/* bp_split_n of split[J[0]], split[J[1]], ... in lanes. With AVX2 one
 * gather of the aligned 32-bit words that hold the bytes (so it reads
 * only whole words of the array: the world's capacity is a multiple of 4
 * balls, src/sim/world.c), shifted and masked; max(n, 1) is bp_split_n's
 * value for every count (the counts read one by one into an array and
 * loaded back as a vector stalled that load, 8% of the pairs'
 * evaluation). The 16-lane builds read the sixteen bytes into the
 * vector's lanes directly, as their BP_VGATHER does: on a Zen 5 the C
 * build's rain 10k and pile 50k 1-2% faster than by the word gather
 * (ninety-first session), PoCL's pile 50k 0.96-0.97 and rain 10k 0.98,
 * its loads volatile so that its LLVM does not make them the gather again
 * (ninety-second session, docs/benchmarks.md). Elsewhere through an
 * array, lane by lane. */
#if !defined(__OPENCL_VERSION__) && BP_LANES == 16
BP_FN bp_vf bp_vsplit_n(const bp_u8 *split, const bp_u32 *J)
{
    bp_vi w = {BP_LANES16(BP_LANE_LOAD, split, J)};
    return BP_VMAX(__builtin_convertvector(w, bp_vf), BP_VSPLAT(1.0f));
}
#elif !defined(__OPENCL_VERSION__) && BP_LANES == 8
BP_FN bp_vf bp_vsplit_n(const bp_u8 *split, const bp_u32 *J)
{
    bp_vu j = BP_VLOADU(J);
    bp_vu w = (bp_vu)_mm256_i32gather_epi32((const int *)(const void *)split,
                                            (__m256i)(j >> 2u), 4);
    bp_vf n = __builtin_convertvector((bp_vi)((w >> ((j & 3u) * 8u)) & 0xffu), bp_vf);
    return BP_VMAX(n, BP_VSPLAT(1.0f));
}
#elif defined(BP_OCL_AVX512)
BP_FN bp_vf bp_vsplit_n(BP_GLOBAL const bp_u8 *split, const bp_u32 *J)
{
    bp_vi w = (bp_vi)(BP_LANES16(BP_VLOAD1, split, J));
    return BP_VMAX(convert_float16(w), BP_VSPLAT(1.0f));
}
#elif defined(BP_OCL_AVX2) && BP_LANES == 8 && __has_builtin(__builtin_ia32_gatherd_d256)
/* PoCL's 8 lanes with AVX2: the word gather as the CPU engine's 8-lane
 * build takes it (its base passed as an address: PoCL's CPU devices have
 * one flat memory) */
BP_FN bp_vf bp_vsplit_n(BP_GLOBAL const bp_u8 *split, const bp_u32 *J)
{
    bp_vu j = BP_VLOADU(J);
    bp_vu w = as_uint8(__builtin_ia32_gatherd_d256((int8)(0), (const int *)(size_t)split,
                                                   as_int8(j >> 2u), (int8)(-1), 4));
    bp_vf n = convert_float8(as_int8((w >> ((j & 3u) * 8u)) & 0xffu));
    return BP_VMAX(n, BP_VSPLAT(1.0f));
}
#else
BP_FN bp_vf bp_vsplit_n(BP_GLOBAL const bp_u8 *split, const bp_u32 *J)
{
    float n[BP_LANES];
    for (bp_u32 k = 0; k < BP_LANES; k++)
        n[k] = bp_split_n(split[J[k]]);
    return BP_VLOAD(n);
}
#endif

/* a[base + d[0]], a[base + d[1]], ... for lane offsets d below BP_LANES:
 * one load of BP_LANES floats from a + base and a permute across lanes,
 * where a gather would load each lane alone (the CPU engine's pair groups,
 * whose balls i lie close together in the list); bp_vperm_split_n the
 * same of bp_split_n(split[...]). Only with AVX2 and AVX-512
 * (BP_HAVE_VPERM). */
#if !defined(__OPENCL_VERSION__) && BP_LANES == 16
#define BP_HAVE_VPERM 1
BP_FN bp_vf bp_vperm(const float *a, bp_u32 base, bp_vu d)
{
    return (bp_vf)_mm512_permutexvar_ps((__m512i)d, _mm512_loadu_ps(a + base));
}
BP_FN bp_vf bp_vperm_split_n(const bp_u8 *split, bp_u32 base, bp_vu d)
{
    __m512i w = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(split + base)));
    bp_vf n = __builtin_convertvector((bp_vi)_mm512_permutexvar_epi32((__m512i)d, w), bp_vf);
    return BP_VMAX(n, BP_VSPLAT(1.0f));
}
#elif !defined(__OPENCL_VERSION__) && BP_LANES == 8
#define BP_HAVE_VPERM 1
BP_FN bp_vf bp_vperm(const float *a, bp_u32 base, bp_vu d)
{
    return (bp_vf)_mm256_permutevar8x32_ps(_mm256_loadu_ps(a + base), (__m256i)d);
}
BP_FN bp_vf bp_vperm_split_n(const bp_u8 *split, bp_u32 base, bp_vu d)
{
    __m256i w = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(split + base)));
    bp_vf n = __builtin_convertvector((bp_vi)_mm256_permutevar8x32_epi32(w, (__m256i)d), bp_vf);
    return BP_VMAX(n, BP_VSPLAT(1.0f));
}
#elif defined(BP_OCL_AVX512) || \
    (defined(BP_OCL_AVX2) && BP_LANES == 8 && __has_builtin(__builtin_ia32_permvarsf256))
/* PoCL's 16 lanes with AVX-512 and 8 lanes with AVX2: vpermps and vpermd
 * through clang's builtins of the lanes' width (OpenCL C's shuffle() was
 * a store, eight extracts and eight inserts in PoCL's 8-lane build: tried
 * that way in the eleventh round, slower) */
#define BP_HAVE_VPERM 1
#if BP_LANES == 16
#define BP_OCL_PERMPS(v, d) __builtin_ia32_permvarsf512((v), as_int16(d))
#define BP_OCL_PERMD(v, d) __builtin_ia32_permvarsi512((v), as_int16(d))
#define BP_OCL_VLOADN(p) vload16(0, (p))
#else
#define BP_OCL_PERMPS(v, d) __builtin_ia32_permvarsf256((v), as_int8(d))
#define BP_OCL_PERMD(v, d) __builtin_ia32_permvarsi256((v), as_int8(d))
#define BP_OCL_VLOADN(p) vload8(0, (p))
#endif
BP_FN bp_vf bp_vperm(BP_GLOBAL const float *a, bp_u32 base, bp_vu d)
{
    return BP_OCL_PERMPS(BP_OCL_VLOADN(a + base), d);
}
BP_FN bp_vf bp_vperm_split_n(BP_GLOBAL const bp_u8 *split, bp_u32 base, bp_vu d)
{
    bp_vi w = BP_VTOI(BP_OCL_VLOADN(split + base)); /* the bytes widened */
    bp_vf n = BP_VUTOF(BP_OCL_PERMD(w, d));
    return BP_VMAX(n, BP_VSPLAT(1.0f));
}
#endif
/* bp_vperm from a private array (OpenCL C's pointers name their space) */
#if defined(BP_OCL_PERMPS)
#define BP_VPERM_P(a, base, d) BP_OCL_PERMPS(BP_OCL_VLOADN((a) + (base)), (d))
#elif defined(BP_HAVE_VPERM)
#define BP_VPERM_P(a, base, d) bp_vperm((a), (base), (d))
#endif

BP_FN bp_side bp_side_of(float x, float y, float r, float m, bp_u8 n)
{
    bp_side s;
    s.x = x;
    s.y = y;
    s.r = r;
    s.m = m;
    s.n = bp_split_n(n);
    return s;
}

/* Which walls of the box a ball touches: *wx = +1 the left wall, -1 the
 * right one, 0 neither; *wy the same for the top and the floor (the
 * direction away from the wall). */
BP_FN void bp_side_walls(const bp_step_params *P, bp_side s, float *wx, float *wy)
{
    float near_ = s.r * (1.0f + P->skin);
    *wx = s.x < near_ ? 1.0f : (s.x > P->width - near_ ? -1.0f : 0.0f);
    *wy = s.y < near_ ? 1.0f : (s.y > P->height - near_ ? -1.0f : 0.0f);
}

/* The share of a contact's closing speed, and of its overlap, that ball i
 * (side a) takes from its neighbour j (side b), by mass splitting (Tonge,
 * Benevolenski and Voroshilov 2012): a ball in contact with n balls lends
 * each contact m/n of its mass,
 *   share = (1/m_i) / (n_i/m_i + n_j/m_j) = m_j / (n_i m_j + n_j m_i),
 * m_j/(m_i+m_j) for a lone pair. The contacts of a ball are summed
 * (Jacobi), each computed from the old velocities; with whole masses a
 * ball between several neighbours on one side is stopped by each of them
 * in full and leaves faster than it came (docs/physics.md, "Mass
 * splitting"). The same impulse from both ends: momentum is exact. */
BP_FN float bp_pair_share(bp_side a, bp_side b)
{
    return b.m / (a.n * b.m + b.n * a.m);
}

/* The direction in which a deep overlap (beyond the spring's range) of
 * balls i and j is pushed apart: the line of centres (nx, ny), except for
 * two balls against the same wall. The wall holds both at one radius
 * from it (and BP_ROUGH of one at most), so their line of centres runs
 * along it, and a row of balls squeezed along a wall (by the flow behind,
 * the pile above) could never let one out: the pushes along the row
 * cancel inside it. There the higher-index ball is taken as lying half a
 * radius further from the wall (the lower one as nearer, so both ends
 * agree), and a squeezed ball climbs out of the row as it would in a real
 * pile. */
BP_FN void bp_deep_normal(const bp_step_params *P, bp_u32 i, bp_u32 j, float dx, float dy,
                          float rmin, bp_side a, bp_side b, float nx, float ny, float *ox,
                          float *oy)
{
    float awx, awy, bwx, bwy;
    bp_side_walls(P, a, &awx, &awy);
    bp_side_walls(P, b, &bwx, &bwy);
    float sg = j > i ? 0.5f * rmin : -0.5f * rmin;
    float ex = dx + (awx == bwx ? awx * sg : 0.0f);
    float ey = dy + (awy == bwy ? awy * sg : 0.0f);
    float el = BP_SQRT(ex * ex + ey * ey);
    *ox = el > 0.0f ? ex / el : nx;
    *oy = el > 0.0f ? ey / el : ny;
}

/* Any other close neighbour j of ball i (bp_pair_close):
 *  - gravity on: a damped spring on the overlap (soft contact), so a pile
 *    comes to rest with zero velocity and an overlap of a few thousandths
 *    of a pixel per layer;
 *  - gravity off: an overlap is pushed apart by displacement only (no
 *    energy).
 * Returns whether the pair counts as a contact for mass splitting (all
 * but a pair moving apart outside the skin). */
BP_FN int bp_pair_soft(const bp_step_params *P, bp_u32 i, bp_u32 j, float dx, float dy, float d2,
                        float rvx, float rvy, bp_side si, bp_side sj, bp_push *acc)
{
    float h = P->h, rest = P->rest_speed, ri = si.r, rj = sj.r;
    if (rest > 0.0f) {
        /* Outside the skin and moving apart: no spring, no approach to
         * stop; nothing to do (and no square root). */
        float skin_out = ri + rj + P->skin * BP_FMIN(ri, rj);
        if (d2 >= skin_out * skin_out && dx * rvx + dy * rvy <= 0.0f)
            return 0;
    }
    float dist = BP_SQRT(d2), nx, ny;
    bp_pair_normal(i, j, dx, dy, dist, &nx, &ny);
    float vn = rvx * nx + rvy * ny; /* > 0: approaching */
    float gap = dist - (ri + rj);
    float mu = sj.m / (si.m + sj.m), ms = bp_pair_share(si, sj);
    if (rest > 0.0f) {
        /* A damped spring, stiffness and damping per unit reduced mass
         * (the damping's share cut by the contact counts: BP_DAMP_SPLIT),
         * pushing only. It engages a thin skin before the discs touch, so
         * the small compression a pile needs to carry its weight happens
         * mostly in the skin; an overlap deeper than the spring's range is
         * removed by displacement instead, so deep overlaps never explode. */
        float rmin = BP_FMIN(ri, rj);
        float depth = P->skin * rmin - gap;
        /* A fast approach that is not this sub-step's impact pair is
         * stopped inelastically before it can dig in: it may close the
         * gap, or approach at rest_speed, no faster. */
        float tvx = rvx - vn * nx, tvy = rvy - vn * ny; /* sliding */
        /* Written without branches (a zero term where a branch would skip):
         * which case applies varies from pair to pair at random, and the
         * mispredicted branches cost more than the arithmetic. */
        float allowed = BP_FMAX(rest, gap / h);
        float over = vn > allowed ? vn - allowed : 0.0f;
        float k_ = ms * over;
        acc->dvx -= k_ * nx;
        acc->dvy -= k_ * ny;
        vn = BP_FMIN(vn, allowed);
        float range = P->spring_range * rmin;
        float md = BP_FMIN(mu, BP_DAMP_SPLIT * ms);
        float f = mu * (P->k_spring * BP_FMIN(depth, range)) + md * (P->k_damp * vn);
        int push = depth > 0.0f && f > 0.0f;
        float ks = push ? f * h : 0.0f;
        float kf = push ? mu * P->friction : 0.0f; /* viscous friction */
        acc->dvx -= ks * nx;
        acc->dvy -= ks * ny;
        acc->dvx -= kf * tvx;
        acc->dvy -= kf * tvy;
        float deep = depth > range ? depth - range : 0.0f;
        float dnx = nx, dny = ny;
        if (deep > 0.0f)
            bp_deep_normal(P, i, j, dx, dy, rmin, si, sj, nx, ny, &dnx, &dny);
        acc->px -= ms * P->beta * deep * dnx;
        acc->py -= ms * P->beta * deep * dny;
    } else if (gap < 0.0f) {
        acc->px += ms * P->beta * gap * nx;
        acc->py += ms * P->beta * gap * ny;
    }
    return 1;
}

/* ---- The same pair functions, BP_LANES pairs at a time -------------------- */

/* bp_pair_toi in BP_LANES lanes. */
BP_FN bp_vf bp_vpair_toi(bp_vf dx, bp_vf dy, bp_vf rvx, bp_vf rvy, bp_vf rsum, float h)
{
    bp_vf zero = BP_VSPLAT(0.0f), no = BP_VSPLAT(-1.0f);
    bp_vf dr = dx * rvx + dy * rvy;
    bp_vf c = dx * dx + dy * dy - rsum * rsum;
    bp_vf a = rvx * rvx + rvy * rvy;
    bp_vf disc = dr * dr - a * c;
    bp_vf t = c / (dr + BP_VSQRT(BP_VMAX(disc, zero)));
    bp_vf res = BP_VSEL(t <= BP_VSPLAT(h), t, no);
    res = BP_VSEL(disc < zero, no, res);
    res = BP_VSEL(c > 2.0f * dr * h, no, res);
    res = BP_VSEL(c <= zero, zero, res);
    return BP_VSEL(dr <= zero, no, res);
}

/* BP_LANES pairs (i, j): both balls' own data, and the pair's. bp_contacts
 * fills a group with neighbours of one ball i (the i side the same in
 * every lane); the CPU engine's pair list, with pairs of several balls. */
typedef struct bp_vpair {
    bp_vu i, j;
    bp_vf xi, yi, ri, mi, ni;   /* ball i: position, radius, mass, contacts (>= 1) */
    bp_vf xj, yj, rj, mj, nj;   /* the same of ball j */
    bp_vf dx, dy, d2, rvx, rvy; /* pj - pi, |pj - pi|^2, vi - vj */
    bp_vf rsum;
} bp_vpair;

/* Terms of BP_LANES pairs for one of their balls: velocity change and
 * displacement. */
typedef struct bp_vpush {
    bp_vf dvx, dvy, px, py;
} bp_vpush;

/* What the terms of bp_vpair_soft share between the pair's two balls,
 * seen from ball i: the unit normal towards j, the sliding velocity and
 * the direction of a deep overlap's push (from ball j these change sign,
 * exactly: every value is a difference or product taken the other way
 * round), and the speeds and depths, the same from both ends. */
typedef struct bp_vgeom {
    bp_vf nx, ny, tvx, tvy, dnx, dny;
    bp_vf vn, over, depth, range, deep, gap;
    bp_vi act;
} bp_vgeom;

/* bp_pair_soft's geometry in BP_LANES lanes, for the lanes in `on`; act
 * is the lanes that count as contacts. A deep overlap takes
 * bp_deep_normal one lane at a time (it is rare). */
BP_FN_PAIR void bp_vpair_geom(const bp_step_params *P, const bp_vpair *q, bp_vi on, bp_vgeom *g)
{
    float h = P->h, rest = P->rest_speed;
    bp_vf zero = BP_VSPLAT(0.0f), ri = q->ri, rj = q->rj;
    bp_vf dx = q->dx, dy = q->dy, rvx = q->rvx, rvy = q->rvy;
    g->act = on;
    if (rest > 0.0f) {
        bp_vf skin_out = ri + rj + P->skin * BP_VMIN(ri, rj);
        g->act = on & ~((q->d2 >= skin_out * skin_out) & (dx * rvx + dy * rvy <= zero));
    }
    bp_vf dist = BP_VSQRT(q->d2);
    bp_vf away = BP_VSEL(q->j > q->i, BP_VSPLAT(1.0f), BP_VSPLAT(-1.0f));
    bp_vi pos = dist > zero;
    bp_vf nx = BP_VSEL(pos, dx / dist, away), ny = BP_VSEL(pos, dy / dist, zero);
    bp_vf vn = rvx * nx + rvy * ny;
    g->nx = nx;
    g->ny = ny;
    g->gap = dist - (ri + rj);
    g->dnx = nx;
    g->dny = ny;
    g->tvx = g->tvy = g->vn = g->over = g->depth = g->range = g->deep = zero;
    if (rest > 0.0f) {
        bp_vf rmin = BP_VMIN(ri, rj);
        g->depth = P->skin * rmin - g->gap;
        g->tvx = rvx - vn * nx;
        g->tvy = rvy - vn * ny;
        /* gap / h is at most 0 where the balls overlap, and rest > 0:
         * a group whose lanes all overlap (a settled pile's) needs no
         * division (a NaN gap takes it); BP_SKIP_DIVS above */
        bp_vf allowed = BP_VSPLAT(rest);
        if (!BP_SKIP_DIVS || BP_VANY(~(g->gap <= zero) & on))
            allowed = BP_VMAX(allowed, g->gap / h);
        g->over = BP_VSEL(vn > allowed, vn - allowed, zero);
        g->vn = BP_VMIN(vn, allowed);
        g->range = P->spring_range * rmin;
        g->deep = BP_VSEL(g->depth > g->range, g->depth - g->range, zero);
        bp_vi isdeep = (g->deep > zero) & g->act;
        if (BP_VANY(isdeep)) {
            float l[11][BP_LANES], ox[BP_LANES], oy[BP_LANES];
            bp_i32 lk[BP_LANES];
            bp_u32 li[BP_LANES], lj[BP_LANES];
            BP_VSTORE(isdeep, lk);
            BP_VSTORE(q->i, li);
            BP_VSTORE(q->j, lj);
            BP_VSTORE(q->xi, l[8]);
            BP_VSTORE(q->yi, l[9]);
            BP_VSTORE(ri, l[10]);
            BP_VSTORE(dx, l[0]);
            BP_VSTORE(dy, l[1]);
            BP_VSTORE(rmin, l[2]);
            BP_VSTORE(nx, l[3]);
            BP_VSTORE(ny, l[4]);
            BP_VSTORE(q->xj, l[5]);
            BP_VSTORE(q->yj, l[6]);
            BP_VSTORE(rj, l[7]);
            for (int k = 0; k < BP_LANES; k++) {
                ox[k] = l[3][k];
                oy[k] = l[4][k];
                if (lk[k]) /* the mass and count do not enter */
                    bp_deep_normal(P, li[k], lj[k], l[0][k], l[1][k], l[2][k],
                                   bp_side_of(l[8][k], l[9][k], l[10][k], 1.0f, 1),
                                   bp_side_of(l[5][k], l[6][k], l[7][k], 1.0f, 1), l[3][k],
                                   l[4][k], &ox[k], &oy[k]);
            }
            g->dnx = BP_VLOAD(ox);
            g->dny = BP_VLOAD(oy);
        }
    }
}

/* The four terms of bp_vpair_soft for one ball of the pairs, whose mass
 * shares (bp_pair_share) are mu = mj / (mi + mj) and
 * ms = mj / (ni mj + nj mi) (mass m and contact count n, its
 * neighbour's mj and nj); (nx, ny), (tvx, tvy) and (dnx, dny) g's,
 * negated for ball j. Added to (*dvx, *dvy, *px, *py) in bp_pair_soft's
 * order of float operations, in the lanes of g->act (the others keep
 * theirs): from zeros, the pairs' terms (bp_vpair_soft); from a ball's
 * sums, the sums as bp_resolve adds the term (bp_vresolve_partnered). */
BP_FN void bp_vsoft_terms(const bp_step_params *P, const bp_vgeom *g, bp_vf nx, bp_vf ny,
                          bp_vf tvx, bp_vf tvy, bp_vf dnx, bp_vf dny, bp_vf mu, bp_vf ms,
                          bp_vf *dvx, bp_vf *dvy, bp_vf *px, bp_vf *py)
{
    float h = P->h;
    bp_vf zero = BP_VSPLAT(0.0f);
    bp_vf ax = *dvx, ay = *dvy, bx = *px, by = *py;
    if (P->rest_speed > 0.0f) {
        bp_vf k_ = ms * g->over;
        ax = ax - k_ * nx;
        ay = ay - k_ * ny;
        bp_vf md = BP_VMIN(mu, BP_DAMP_SPLIT * ms);
        bp_vf f = mu * (P->k_spring * BP_VMIN(g->depth, g->range)) + md * (P->k_damp * g->vn);
        bp_vi push = (g->depth > zero) & (f > zero);
        bp_vf ks = BP_VSEL(push, f * h, zero);
        bp_vf kf = BP_VSEL(push, mu * P->friction, zero);
        ax = ax - ks * nx;
        ay = ay - ks * ny;
        ax = ax - kf * tvx;
        ay = ay - kf * tvy;
        bx = bx - ms * P->beta * g->deep * dnx;
        by = by - ms * P->beta * g->deep * dny;
    } else {
        bp_vi ov = g->gap < zero;
        bx = BP_VSEL(ov, bx + ms * P->beta * g->gap * nx, bx);
        by = BP_VSEL(ov, by + ms * P->beta * g->gap * ny, by);
    }
    *dvx = BP_VSEL(g->act, ax, *dvx);
    *dvy = BP_VSEL(g->act, ay, *dvy);
    *px = BP_VSEL(g->act, bx, *px);
    *py = BP_VSEL(g->act, by, *py);
}

/* bp_pair_soft in BP_LANES lanes, for the lanes in `on`: the pairs' terms
 * for ball i into (*dvx, *dvy, *px, *py), 0 in the lanes that give none;
 * with oj (else 0), ball j's terms from the same pairs into oj's. Returns
 * the lanes that count as contacts (for both balls). one_mass: the
 * caller knows every ball of the world has the mass P->m0 (positive, and
 * m0 + m0 finite), which the lanes' test below would find anyway. */
BP_FN_INLINE bp_vi bp_vpair_soft(const bp_step_params *P, const bp_vpair *q, bp_vi on,
                                 bp_vf *dvx, bp_vf *dvy, bp_vf *px, bp_vf *py, bp_vpush *oj,
                                 int one_mass)
{
    bp_vgeom g;
    bp_vpair_geom(P, q, on, &g);
    /* The mass shares of both balls. Where the two balls of every lane
     * have the same mass m (positive, and m + m finite: every pair of a
     * world of one mass) mu is m / (m + m), exactly 0.5 for either ball,
     * and ms is the same float for ball j as for ball i (its
     * denominator's two products are ball i's, added the other way
     * round): three divisions of seven a group fewer. */
    bp_vi one_m = (q->mi == q->mj) & (q->mi > BP_VSPLAT(0.0f)) &
                  (q->mi + q->mj <= BP_VSPLAT(FLT_MAX));
    int same = one_mass || !BP_VANY(~one_m);
    bp_vf ms = q->mj / (q->ni * q->mj + q->nj * q->mi);
    bp_vf mu = same ? BP_VSPLAT(0.5f) : q->mj / (q->mi + q->mj);
    *dvx = *dvy = *px = *py = BP_VSPLAT(0.0f);
    bp_vsoft_terms(P, &g, g.nx, g.ny, g.tvx, g.tvy, g.dnx, g.dny, mu, ms, dvx, dvy, px, py);
    if (oj) {
        oj->dvx = oj->dvy = oj->px = oj->py = BP_VSPLAT(0.0f);
        bp_vf msj = same ? ms : q->mi / (q->nj * q->mi + q->ni * q->mj);
        bp_vf muj = same ? mu : q->mi / (q->mj + q->mi);
        bp_vsoft_terms(P, &g, -g.nx, -g.ny, -g.tvx, -g.tvy, -g.dnx, -g.dny, muj, msj, &oj->dvx,
                       &oj->dvy, &oj->px, &oj->py);
    }
    return g.act;
}

/* What BP_LANES pairs give, lane by lane, before bp_fold_pair sums them. */
typedef struct bp_vterms {
    bp_vf t;                 /* time of impact within the sub-step, or -1 */
    bp_vf dvx, dvy, px, py;  /* the soft term (0 unless close) */
    bp_vi close, cand, soft; /* close (bp_pair_close); may be the impact partner; a contact */
} bp_vterms;

/* Fills the i side of v with one ball i in every lane. */
BP_FN void bp_vpair_with_i(bp_vpair *v, bp_u32 i, bp_side si)
{
    v->i = BP_VUSPLAT(i);
    v->xi = BP_VSPLAT(si.x);
    v->yi = BP_VSPLAT(si.y);
    v->ri = BP_VSPLAT(si.r);
    v->mi = BP_VSPLAT(si.m);
    v->ni = BP_VSPLAT(si.n);
}

/* Fills the j side of v (balls J[0..BP_LANES-1]) and the pair fields,
 * its i side (xi, yi, ri; velocity vxi, vyi) being set. */
BP_FN void bp_vpair_with_j(bp_vpair *v, bp_vf vxi, bp_vf vyi, BP_GLOBAL const float *x,
                           BP_GLOBAL const float *y, BP_GLOBAL const float *r, float r0,
                           BP_GLOBAL const float *vx, BP_GLOBAL const float *vy,
                           const bp_u32 *J)
{
    v->j = BP_VLOADU(J);
    v->xj = BP_VGATHER(x, J);
    v->yj = BP_VGATHER(y, J);
    v->rj = BP_VGATHER_OR(r0, r, J);
    v->dx = v->xj - v->xi;
    v->dy = v->yj - v->yi;
    v->d2 = v->dx * v->dx + v->dy * v->dy;
    v->rsum = v->ri + v->rj;
    v->rvx = vxi - BP_VGATHER(vx, J);
    v->rvy = vyi - BP_VGATHER(vy, J);
}

/* The pair terms of the lanes in `lane` of v (whose i and j sides, and
 * pair fields, are filled; mj and nj are gathered here from m and split
 * at J, only when a lane is close; with one_mass, a world whose balls all
 * have the mass P->m0 (bp_vpair_soft), mj is v's mi). Returns 0 when no
 * lane adds anything (then *o is not written), which is most groups of
 * the rain. */
BP_FN_PAIR int bp_vpair_eval(const bp_step_params *P, bp_vpair *v, bp_vi lane,
                             BP_GLOBAL const float *m, BP_GLOBAL const bp_u8 *split,
                             const bp_u32 *J, bp_vterms *o, bp_vpush *oj, int one_mass)
{
    bp_vf near_d = BP_CLOSE_DIST(P, v->rsum);
    bp_vi close = (v->d2 < near_d * near_d) & lane;
    bp_vf zero = BP_VSPLAT(0.0f);
    bp_vf dr = v->dx * v->rvx + v->dy * v->rvy;
    /* When the pair meets within the sub-step, or -1; under gravity never
     * for balls that already touch: those are soft contacts, not impacts.
     * Lanes that bp_vpair_toi would send to -1 before its square root
     * (separating, or the gap too wide for this sub-step: the same float
     * expressions as there), or that touch under gravity, are known
     * without it; most groups have no other lane, and a group with no
     * close lane either adds nothing at all. */
    bp_vf gap2 = v->d2 - v->rsum * v->rsum;
    bp_vi touch = P->rest_speed > 0.0f ? v->d2 < v->rsum * v->rsum : BP_VI0;
    bp_vi no_hit = (dr <= zero) | ((gap2 > 2.0f * dr * P->h) & ~(gap2 <= zero)) | touch;
    bp_vf t = BP_VSPLAT(-1.0f);
    if (BP_VANY(~no_hit & lane)) {
        t = BP_VSEL(touch, t, bp_vpair_toi(v->dx, v->dy, v->rvx, v->rvy, v->rsum, P->h));
    } else if (!BP_VANY(close)) {
        return 0;
    }
    /* May be ball i's impact partner: they meet within the sub-step,
     * approaching faster than the resting threshold (dr/|d| > rest_speed,
     * without a square root). */
    o->t = t;
    o->cand = (t >= zero) & (dr > zero) &
              (dr * dr > P->rest_speed * P->rest_speed * v->d2) & lane;
    o->close = close;
    o->dvx = zero;
    o->dvy = zero;
    o->px = zero;
    o->py = zero;
    o->soft = BP_VI0;
    if (oj)
        oj->dvx = oj->dvy = oj->px = oj->py = zero;
    if (BP_VANY(close)) {
        v->mj = one_mass ? v->mi : BP_VGATHER_OR(P->m0, m, J);
        v->nj = bp_vsplit_n(split, J);
        o->soft = bp_vpair_soft(P, v, close, &o->dvx, &o->dvy, &o->px, &o->py, oj, one_mass);
    }
    return 1;
}

/* Where ball i's sums stand in the walk over its neighbours (bp_contacts). */
typedef struct bp_fold {
    bp_push acc, held; /* the sum, and the best candidate's term held back */
    bp_i32 b;          /* the best impact candidate so far, or -1 */
    float best_t;      /* its time of impact */
    bp_u32 count;      /* contacts */
} bp_fold;

BP_FN bp_fold bp_fold_start(void)
{
    bp_fold f;
    f.acc.dvx = f.acc.dvy = f.acc.px = f.acc.py = 0.0f;
    f.held = f.acc;
    f.b = -1;
    f.best_t = 3.0e38f;
    f.count = 0u;
    return f;
}

/* Adds one pair (neighbour j) to ball i's sums, in neighbour order: the
 * soft term joins the sum unless j is the best impact candidate so far
 * (earliest, ties to the lower index), whose term is held back. */
BP_FN void bp_fold_pair(bp_fold *f, bp_i32 j, float t, int close, int cand, int soft,
                        bp_push c)
{
    if (!close && t < 0.0f)
        return;
    f->count += soft ? 1u : 0u;
    if (cand && (t < f->best_t || (t == f->best_t && j < f->b))) {
        bp_push_add(&f->acc, f->held);
        f->held = c;
        f->b = j;
        f->best_t = t;
    } else {
        bp_push_add(&f->acc, c);
    }
}

/* Pass 3's work on up to BP_LANES neighbours of ball i at once, near[0 ..
 * left-1] (left >= 1; a short group repeats its first ball in the unused
 * lanes): the pair terms in SIMD lanes (bp_vpair_eval), then, in neighbour
 * order, the choice of the impact partner and the sums, exactly as one
 * pair at a time would give them. */
BP_FN void bp_contact_group(bp_u32 i, const bp_step_params *P, BP_GLOBAL const float *x,
                            BP_GLOBAL const float *y, BP_GLOBAL const float *vx,
                            BP_GLOBAL const float *vy, BP_GLOBAL const float *r,
                            BP_GLOBAL const float *m, BP_GLOBAL const bp_u8 *split,
                            bp_side si, float vxi, float vyi, const bp_u32 *near_,
                            bp_u32 left, bp_fold *f)
{
    bp_u32 J[BP_LANES];
    for (bp_u32 k = 0; k < BP_LANES; k++)
        J[k] = near_[k < left ? k : 0u];
    bp_vpair v;
    bp_vpair_with_i(&v, i, si);
    bp_vpair_with_j(&v, BP_VSPLAT(vxi), BP_VSPLAT(vyi), x, y, r, P->r0, vx, vy, J);
    bp_vterms o;
    if (!bp_vpair_eval(P, &v, BP_LANE_IDS < BP_VUSPLAT(left), m, split, J, &o, 0, 0))
        return;
    float lt[BP_LANES], l[4][BP_LANES];
    bp_i32 lclose[BP_LANES], lcand[BP_LANES], lsoft[BP_LANES];
    BP_VSTORE(o.t, lt);
    BP_VSTORE(o.dvx, l[0]);
    BP_VSTORE(o.dvy, l[1]);
    BP_VSTORE(o.px, l[2]);
    BP_VSTORE(o.py, l[3]);
    BP_VSTORE(o.close, lclose);
    BP_VSTORE(o.cand, lcand);
    BP_VSTORE(o.soft, lsoft);
    for (bp_u32 k = 0; k < BP_LANES && k < left; k++) {
        bp_push c;
        c.dvx = l[0][k];
        c.dvy = l[1][k];
        c.px = l[2][k];
        c.py = l[3][k];
        bp_fold_pair(f, (bp_i32)J[k], lt[k], lclose[k], lcand[k], lsoft[k], c);
    }
}

/* One step of the screening of a grid row's run (bp_contacts, and
 * bp_block_contacts_one): of the balls in slots k .. k + BP_LANES - 1 of
 * the grid's order, the lanes of those within reach of ball i (at xi, yi:
 * d^2 <= reach2), before the run's end k1 and not i itself; their indices
 * into *jv. */
BP_FN bp_vi bp_screen(BP_GLOBAL const float *spos, bp_u32 ystride,
                      BP_GLOBAL const bp_u32 *sorted, bp_u32 k, bp_u32 k1, bp_u32 i, float xi,
                      float yi, float reach2, bp_vu *jv)
{
    bp_vf px = BP_VLOAD(spos + k), py = BP_VLOAD(spos + ystride + k);
    *jv = BP_VLOADU(sorted + k);
    bp_vf dx = px - xi, dy = py - yi;
    return (dx * dx + dy * dy <= reach2) & (BP_VUSPLAT(k) + BP_LANE_IDS < BP_VUSPLAT(k1)) &
           (*jv != BP_VUSPLAT(i));
}

/* Writes ball i's sums of pass 3 out of its fold. */
BP_FN void bp_fold_store(const bp_fold *f, bp_u32 i, BP_GLOBAL bp_i32 *best,
                         BP_GLOBAL bp_u8 *ncontact, BP_GLOBAL float *sum)
{
    best[i] = f->b;
    ncontact[i] = (bp_u8)(f->count < 255u ? f->count : 255u);
    bp_f4 a = BP_F4PUSH(f->acc);
    BP_F4STORE(a, sum + 4u * i);
}

/* Appends lane l of the screening to bp_contacts' list if it is in reach
 * (written out per lane: PoCL's LLVM left the loop rolled, a chain of
 * stores and reloads). */
#define BP_PUSH_NEAR(l)                     \
    do {                                    \
        near_[nn] = lj[l];                  \
        nn += (bp_u32)lin[l] & 1u;          \
    } while (0)

/* Pass 3, the one walk over ball i's neighbours:
 *  - its impact partner: the ball j it hits first in this sub-step,
 *    approaching faster than rest_speed, ties to the lower index, or -1.
 *    The time of impact is the same float from both sides (every term
 *    changes sign twice), so a pair that picks each other does so from
 *    both ends;
 *  - the sum of bp_pair_soft over its close neighbours except that partner,
 *    whose term bp_resolve adds once it knows whether the choice is mutual
 *    (the soft term of the best candidate so far is held back, and joins
 *    the sum when a better candidate replaces it).
 * Jacobi: reads the old state of all, writes ball i's slots only. */
BP_FN void bp_contacts(bp_u32 i, const bp_step_params *P, float vmax, BP_GLOBAL const float *x,
                       BP_GLOBAL const float *y, BP_GLOBAL const float *vx,
                       BP_GLOBAL const float *vy, BP_GLOBAL const float *r,
                       BP_GLOBAL const float *m, BP_GLOBAL const bp_u8 *split,
                       BP_GLOBAL const bp_u32 *cell_start, BP_GLOBAL const bp_u32 *sorted,
                       BP_GLOBAL const float *spos, BP_GLOBAL bp_u8 *ncontact,
                       BP_GLOBAL bp_i32 *best, BP_GLOBAL float *sum)
{
    float xi = x[i], yi = y[i], vxi = vx[i], vyi = vy[i], ri = r[i], mi = m[i];
    bp_side si = bp_side_of(xi, yi, ri, mi, split[i]);
    float reach = bp_reach(P, ri, BP_SQRT(vxi * vxi + vyi * vyi), vmax);
    float reach2 = reach * reach;
    bp_window win = bp_search_window(P, xi, yi, reach);
    bp_fold f = bp_fold_start();
    bp_u32 near_[BP_CHUNK + BP_LANES];
    bp_u32 nn = 0;
    for (bp_i32 gy = win.y0; gy <= win.y1; gy++) {
        bp_u32 row = (bp_u32)(gy * P->gw);
        bp_u32 k0 = cell_start[row + (bp_u32)win.x0], k1 = cell_start[row + (bp_u32)win.x1 + 1u];
        /* Cells of a row are contiguous in `sorted`, and their positions
         * in `spos`: one run per row. It is screened BP_LANES balls at a
         * time in SIMD lanes (a row of the rain is 2-3 balls, so one step
         * and no mispredicted loop exit), lanes past the run masked off
         * (the arrays have BP_SCREEN_PAD slots of slack); the balls
         * within reach go to near_ in run order, without a branch. */
        for (bp_u32 k = k0; k < k1; k += BP_LANES) {
            bp_vu jv;
            bp_vi in = bp_screen(spos, P->ystride, sorted, k, k1, i, xi, yi, reach2, &jv);
            bp_u32 lj[BP_LANES];
            bp_i32 lin[BP_LANES];
            BP_VSTORE(jv, lj);
            BP_VSTORE(in, lin);
            BP_PUSH_NEAR(0);
            BP_PUSH_NEAR(1);
            BP_PUSH_NEAR(2);
            BP_PUSH_NEAR(3);
#if BP_LANES >= 8
            BP_PUSH_NEAR(4);
            BP_PUSH_NEAR(5);
            BP_PUSH_NEAR(6);
            BP_PUSH_NEAR(7);
#endif
#if BP_LANES == 16
            BP_PUSH_NEAR(8);
            BP_PUSH_NEAR(9);
            BP_PUSH_NEAR(10);
            BP_PUSH_NEAR(11);
            BP_PUSH_NEAR(12);
            BP_PUSH_NEAR(13);
            BP_PUSH_NEAR(14);
            BP_PUSH_NEAR(15);
#endif
            /* ...and then BP_LANES at a time (bp_contact_group), across
             * rows, so that the lanes are mostly full: the list is worked
             * off when it holds a chunk's worth (it had less than that
             * before this step, so it never holds more than BP_LANES
             * more). */
            if (nn >= BP_CHUNK) {
                bp_u32 q = 0;
                for (; q + BP_LANES <= nn; q += BP_LANES)
                    bp_contact_group(i, P, x, y, vx, vy, r, m, split, si, vxi, vyi, near_ + q,
                                     BP_LANES, &f);
                for (bp_u32 k2 = q; k2 < nn; k2++)
                    near_[k2 - q] = near_[k2];
                nn -= q;
            }
        }
    }
    for (bp_u32 q = 0; q < nn; q += BP_LANES)
        bp_contact_group(i, P, x, y, vx, vy, r, m, split, si, vxi, vyi, near_ + q, nn - q, &f);
    bp_fold_store(&f, i, best, ncontact, sum);
}

/* Pass 4: ball i's partner term, an impact if the choice is mutual, else
 * its soft term (as bp_contacts would have added it), then the new
 * velocity (capped) and displacement (at most half the radius per
 * sub-step; the rest is spread over later steps). In place over pass 3's
 * sums, which it turns into the new velocity and displacement. */
BP_FN void bp_resolve(bp_u32 i, const bp_step_params *P, BP_GLOBAL const float *x,
                      BP_GLOBAL const float *y, BP_GLOBAL const float *vx,
                      BP_GLOBAL const float *vy, BP_GLOBAL const float *r,
                      BP_GLOBAL const float *m, BP_GLOBAL const bp_u8 *split,
                      BP_GLOBAL const bp_i32 *best, BP_GLOBAL float *sum)
{
    float xi = x[i], yi = y[i], vxi = vx[i], vyi = vy[i], ri = r[i], mi = m[i];
    bp_push acc;
    acc.dvx = sum[4u * i];
    acc.dvy = sum[4u * i + 1u];
    acc.px = sum[4u * i + 2u];
    acc.py = sum[4u * i + 3u];
    bp_i32 b = best[i];
    if (b >= 0) {
        bp_u32 j = (bp_u32)b;
        float dx = x[j] - xi, dy = y[j] - yi;
        float rj = r[j], rsum = ri + rj;
        float d2 = dx * dx + dy * dy;
        float rvx = vxi - vx[j], rvy = vyi - vy[j];
        float mu = m[j] / (mi + m[j]);
        if (best[j] == (bp_i32)i)
            bp_pair_impact(P, i, j, dx, dy, d2, rvx, rvy, rsum, mu, &acc);
        else if (bp_pair_close(P, d2, rsum))
            bp_pair_soft(P, i, j, dx, dy, d2, rvx, rvy, bp_side_of(xi, yi, ri, mi, split[i]),
                         bp_side_of(x[j], y[j], rj, m[j], split[j]), &acc);
    }
    float ux = vxi + acc.dvx, uy = vyi + acc.dvy;
    bp_cap_speed(P->speed_cap, &ux, &uy);
    float px = acc.px, py = acc.py;
    float p2 = px * px + py * py, lim = 0.5f * ri;
    if (p2 > lim * lim) {
        float k_ = lim / BP_SQRT(p2);
        px *= k_;
        py *= k_;
    }
    bp_f4 out = BP_F4(ux, uy, px, py);
    BP_F4STORE(out, sum + 4u * i);
}

/* ---- Static geometry: segments, end points, the box ------------------------ */

/* Seed 002, corner: the disc of radius r whose centre moves from c + w by
 * the displacement D (t in [0,1]) first touches the point c at the smaller
 * root of |w + D t| = r. Returns t or BP_NO_HIT; n = unit(w + D t), the
 * normal from the point towards the centre. */
BP_FN float bp_sweep_point(float wx, float wy, float Dx, float Dy, float r, float *nx, float *ny)
{
    float b = wx * Dx + wy * Dy; /* half the linear coefficient */
    if (b >= -BP_GRAZE * r * r)
        return BP_NO_HIT; /* moving away or sideways */
    float c = wx * wx + wy * wy - r * r;
    float t = 0.0f;
    if (c > 0.0f) {
        float a = Dx * Dx + Dy * Dy;
        float disc = b * b - a * c;
        if (disc < 0.0f)
            return BP_NO_HIT;
        t = c / (BP_SQRT(disc) - b);
        if (t > 1.0f)
            return BP_NO_HIT;
    }
    float hx = wx + Dx * t, hy = wy + Dy * t;
    float l = BP_SQRT(hx * hx + hy * hy);
    if (l > 0.0f) {
        *nx = hx / l;
        *ny = hy / l;
    } else { /* centre exactly on the point: send it back the way it came */
        float dl = BP_SQRT(Dx * Dx + Dy * Dy);
        *nx = -Dx / dl;
        *ny = -Dy / dl;
    }
    return t;
}

/* Swept disc against the segment a-b: the earliest t in [0,1] at which the
 * disc moving by D touches the segment's interior (an offset line, seed 001's
 * projection test at the moment of contact) or an end point (seed 002).
 * A zero-length segment is a point. n is the contact normal towards the ball. */
BP_FN float bp_sweep_segment(float px, float py, float Dx, float Dy, float r, float ax, float ay,
                             float bx, float by, float *nx, float *ny)
{
    float ex = bx - ax, ey = by - ay;
    float L2 = ex * ex + ey * ey;
    if (L2 > 1e-12f) {
        float L = BP_SQRT(L2);
        float ux = ex / L, uy = ey / L;
        float lx = -uy, ly = ux; /* unit normal of the line */
        float s0 = (px - ax) * lx + (py - ay) * ly;
        float dn = Dx * lx + Dy * ly;
        float side = s0 > 0.0f ? 1.0f : (s0 < 0.0f ? -1.0f : (dn > 0.0f ? -1.0f : 1.0f));
        float dist0 = s0 * side, approach = -dn * side;
        if (approach > BP_GRAZE * r) {
            float t = dist0 > r ? (dist0 - r) / approach : 0.0f;
            if (t <= 1.0f) {
                float u = (px + Dx * t - ax) * ux + (py + Dy * t - ay) * uy;
                if (u >= 0.0f && u <= L) {
                    *nx = lx * side;
                    *ny = ly * side;
                    return t;
                }
            }
        }
    }
    float n1x = 0.0f, n1y = 0.0f, n2x = 0.0f, n2y = 0.0f;
    float t1 = bp_sweep_point(px - ax, py - ay, Dx, Dy, r, &n1x, &n1y);
    float t2 = bp_sweep_point(px - bx, py - by, Dx, Dy, r, &n2x, &n2y);
    if (t2 < t1) {
        *nx = n2x;
        *ny = n2y;
        return t2;
    }
    *nx = n1x;
    *ny = n1y;
    return t1;
}

/* The point q of the segment a-b closest to p (projection with clamp, seed
 * 001); returns |p - q|^2. */
BP_FN float bp_segment_closest(float px, float py, float ax, float ay, float bx, float by,
                               float *qx, float *qy)
{
    float ex = bx - ax, ey = by - ay;
    float L2 = ex * ex + ey * ey;
    float t = L2 > 0.0f ? ((px - ax) * ex + (py - ay) * ey) / L2 : 0.0f;
    t = BP_FMIN(BP_FMAX(t, 0.0f), 1.0f);
    *qx = ax + ex * t;
    *qy = ay + ey * t;
    float dx = px - *qx, dy = py - *qy;
    return dx * dx + dy * dy;
}

/* Moves a centre that overlaps the segment a-b out to distance r along the
 * line from the closest point. */
BP_FN void bp_pushout_segment(float *px, float *py, float r, float ax, float ay, float bx,
                              float by)
{
    float qx, qy;
    float d2 = bp_segment_closest(*px, *py, ax, ay, bx, by, &qx, &qy);
    if (d2 >= r * r)
        return;
    float dx = *px - qx, dy = *py - qy;
    float d = BP_SQRT(d2);
    float ex = bx - ax, ey = by - ay;
    float L2 = ex * ex + ey * ey;
    if (d > 1e-6f * r) {
        *px = qx + dx / d * r;
        *py = qy + dy / d * r;
    } else if (L2 > 0.0f) { /* centre on the segment: out along its normal */
        float L = BP_SQRT(L2);
        *px = qx - ey / L * r;
        *py = qy + ex / L * r;
    } else {
        *py = qy - r;
    }
}

/* The box as four walls: earliest t in [0,1] at which the disc moving by D
 * touches one, with its inward normal; improves *best only. */
BP_FN void bp_sweep_box(const bp_step_params *P, float px, float py, float Dx, float Dy, float r,
                        float *best, float *nx, float *ny)
{
    if (Dx < 0.0f) {
        float t = BP_FMAX(px - r, 0.0f) / -Dx;
        if (t < *best) { *best = t; *nx = 1.0f; *ny = 0.0f; }
    } else if (Dx > 0.0f) {
        float t = BP_FMAX(P->width - r - px, 0.0f) / Dx;
        if (t < *best) { *best = t; *nx = -1.0f; *ny = 0.0f; }
    }
    if (Dy < 0.0f) {
        float t = BP_FMAX(py - r, 0.0f) / -Dy;
        if (t < *best) { *best = t; *nx = 0.0f; *ny = 1.0f; }
    } else if (Dy > 0.0f) {
        float t = BP_FMAX(P->height - r - py, 0.0f) / Dy;
        if (t < *best) { *best = t; *nx = 0.0f; *ny = -1.0f; }
    }
}

/* The cells of the segment grid that the disc of radius r moving by D can
 * touch: its swept box, clamped to the grid. */
BP_FN void bp_swept_cells(const bp_step_params *P, float px, float py, float Dx, float Dy,
                          float r, bp_window *w)
{
    w->x0 = bp_grid_coord(BP_FMIN(px, px + Dx) - r, P->inv_scell, P->sgw);
    w->x1 = bp_grid_coord(BP_FMAX(px, px + Dx) + r, P->inv_scell, P->sgw);
    w->y0 = bp_grid_coord(BP_FMIN(py, py + Dy) - r, P->inv_scell, P->sgh);
    w->y1 = bp_grid_coord(BP_FMAX(py, py + Dy) + r, P->inv_scell, P->sgh);
}

/* Whether any segment is registered in those cells: the cells of a grid
 * row are contiguous in the segment list, so a row costs two reads. */
BP_FN int bp_segments_near(const bp_step_params *P, float px, float py, float Dx, float Dy,
                           float r, BP_GLOBAL const bp_u32 *seg_start)
{
    bp_window w;
    bp_swept_cells(P, px, py, Dx, Dy, r, &w);
    for (bp_i32 gy = w.y0; gy <= w.y1; gy++) {
        bp_u32 row = (bp_u32)(gy * P->sgw);
        if (seg_start[row + (bp_u32)w.x1 + 1u] != seg_start[row + (bp_u32)w.x0])
            return 1;
    }
    return 0;
}

/* Whether a segment registered in the cells of the disc's swept box may
 * come within r of its centre during the move by D: 0 only when every one
 * stays clear by a margin. The centre is always within |D|/2 <= (|Dx| +
 * |Dy|)/2 of the move's midpoint m, so a segment farther than r + that
 * from m is never touched: the pushout leaves the ball alone (it is more
 * than r away) and neither sweep of bp_sweep_segment reaches t <= 1 (each
 * finds a moment at distance r). The margin, 1% of that reach plus 1e-5
 * of the world's size (about 80 float steps of its largest coordinate),
 * covers the rounding of both computations. The segment grid's 32 px
 * cells, with a cell of slack either side, flag about 20% of the rain's
 * ball-steps as near a line; most are tens of pixels from it, and this
 * test (one division per segment) spares them the pushout and the sweeps.
 * NaN counts as near. */
BP_FN int bp_segments_touch(const bp_step_params *P, float px, float py, float Dx, float Dy,
                            float r, BP_GLOBAL const float *lx1, BP_GLOBAL const float *ly1,
                            BP_GLOBAL const float *lx2, BP_GLOBAL const float *ly2,
                            BP_GLOBAL const bp_u32 *seg_start, BP_GLOBAL const bp_u32 *seg_list)
{
    bp_window w;
    bp_swept_cells(P, px, py, Dx, Dy, r, &w);
    float mx = px + 0.5f * Dx, my = py + 0.5f * Dy;
    float reach = r + 0.5f * (BP_FMAX(Dx, -Dx) + BP_FMAX(Dy, -Dy));
    float lim = 1.01f * reach + 1e-5f * (P->width + P->height);
    float lim2 = lim * lim;
    for (bp_i32 gy = w.y0; gy <= w.y1; gy++) {
        for (bp_i32 gx = w.x0; gx <= w.x1; gx++) {
            bp_u32 c = (bp_u32)(gy * P->sgw + gx);
            for (bp_u32 k = seg_start[c]; k < seg_start[c + 1u]; k++) {
                bp_u32 s = seg_list[k];
                float qx, qy;
                if (!(bp_segment_closest(mx, my, lx1[s], ly1[s], lx2[s], ly2[s], &qx, &qy) > lim2))
                    return 1;
            }
        }
    }
    return 0;
}

/* Earliest contact of the disc moving by D with any segment registered in
 * the segment-grid cells its swept box touches; improves *best only. */
BP_FN void bp_sweep_segments(const bp_step_params *P, float px, float py, float Dx, float Dy,
                             float r, BP_GLOBAL const float *lx1, BP_GLOBAL const float *ly1,
                             BP_GLOBAL const float *lx2, BP_GLOBAL const float *ly2,
                             BP_GLOBAL const bp_u32 *seg_start, BP_GLOBAL const bp_u32 *seg_list,
                             float *best, float *nx, float *ny)
{
    bp_window w;
    bp_swept_cells(P, px, py, Dx, Dy, r, &w);
    for (bp_i32 gy = w.y0; gy <= w.y1; gy++) {
        for (bp_i32 gx = w.x0; gx <= w.x1; gx++) {
            bp_u32 c = (bp_u32)(gy * P->sgw + gx);
            for (bp_u32 k = seg_start[c]; k < seg_start[c + 1u]; k++) {
                bp_u32 s = seg_list[k];
                float sx = 0.0f, sy = 0.0f;
                float t = bp_sweep_segment(px, py, Dx, Dy, r, lx1[s], ly1[s], lx2[s], ly2[s], &sx, &sy);
                if (t < *best) {
                    *best = t;
                    *nx = sx;
                    *ny = sy;
                }
            }
        }
    }
}

/* Pass 5: ball i moves through the sub-step with its new velocity plus its
 * displacement, bouncing off segments, end points and walls at their time
 * of impact and continuing the rest of the sub-step with the new velocity.
 * Restitution e, or 0 below rest_speed so resting balls do not chatter. */
BP_FN void bp_move_static(bp_u32 i, const bp_step_params *P, BP_GLOBAL float *x,
                          BP_GLOBAL float *y, BP_GLOBAL float *vx, BP_GLOBAL float *vy,
                          BP_GLOBAL const float *sum, BP_GLOBAL const float *r,
                          BP_GLOBAL const float *lx1, BP_GLOBAL const float *ly1,
                          BP_GLOBAL const float *lx2,
                          BP_GLOBAL const float *ly2, BP_GLOBAL const bp_u32 *seg_start,
                          BP_GLOBAL const bp_u32 *seg_list)
{
    float ri = bp_static_radius(i, r[i]);
    float px = BP_FMIN(BP_FMAX(x[i], ri), P->width - ri);
    float py = BP_FMIN(BP_FMAX(y[i], ri), P->height - ri);
    float ux = sum[4u * i], uy = sum[4u * i + 1u]; /* pass 4's velocity */
    float vx0 = vx[i], vy0 = vy[i]; /* before this sub-step's ball contacts */
    float qx = sum[4u * i + 2u], qy = sum[4u * i + 3u]; /* displacement still to make */
    float Dx = qx + ux * P->h, Dy = qy + uy * P->h;
    /* Most balls are far from every line: then neither the pushout nor
     * the first sweep below has a segment to look at, or none it could
     * reach (bp_segments_touch), and both are skipped (the swept box
     * holds the pushout's box). */
    int lines = P->nlines > 0u && bp_segments_near(P, px, py, Dx, Dy, ri, seg_start) &&
                bp_segments_touch(P, px, py, Dx, Dy, ri, lx1, ly1, lx2, ly2, seg_start, seg_list);
    if (lines) { /* first leave any segment the ball overlaps */
        bp_i32 x0 = bp_grid_coord(px - ri, P->inv_scell, P->sgw);
        bp_i32 x1 = bp_grid_coord(px + ri, P->inv_scell, P->sgw);
        bp_i32 y0 = bp_grid_coord(py - ri, P->inv_scell, P->sgh);
        bp_i32 y1 = bp_grid_coord(py + ri, P->inv_scell, P->sgh);
        for (bp_i32 gy = y0; gy <= y1; gy++)
            for (bp_i32 gx = x0; gx <= x1; gx++) {
                bp_u32 c = (bp_u32)(gy * P->sgw + gx);
                for (bp_u32 k = seg_start[c]; k < seg_start[c + 1u]; k++) {
                    bp_u32 s = seg_list[k];
                    bp_pushout_segment(&px, &py, ri, lx1[s], ly1[s], lx2[s], ly2[s]);
                }
            }
        px = BP_FMIN(BP_FMAX(px, ri), P->width - ri);
        py = BP_FMIN(BP_FMAX(py, ri), P->height - ri);
    }
    float left = 1.0f;
    for (int bounce = 0; bounce < BP_MAX_BOUNCES; bounce++) {
        float t = BP_NO_HIT, nx = 0.0f, ny = 0.0f;
        bp_sweep_box(P, px, py, Dx, Dy, ri, &t, &nx, &ny);
        if (lines || (bounce > 0 && P->nlines > 0u)) /* a bounce turns the sweep */
            bp_sweep_segments(P, px, py, Dx, Dy, ri, lx1, ly1, lx2, ly2, seg_start, seg_list, &t,
                              &nx, &ny);
        if (t > 1.0f) {
            px += Dx;
            py += Dy;
            break;
        }
        px += Dx * t;
        py += Dy * t;
        float vn = ux * nx + uy * ny;
        if (vn < 0.0f) { /* reflect the normal part: v' = v - (1+e)(v.n)n */
            /* Bounce only off an approach the ball brought into this
             * sub-step: a kick from a resting neighbour's spring that
             * sends it into a wall is absorbed, or a ball wedged between
             * a wall and a pile would rattle (under gravity only; without
             * it every wall contact is elastic with e). */
            float brought = -(vx0 * nx + vy0 * ny);
            int bounce_ = -vn > P->rest_speed && (P->rest_speed <= 0.0f || brought > P->rest_speed);
            float k_ = (bounce_ ? 1.0f + P->e : 1.0f) * vn;
            ux -= k_ * nx;
            uy -= k_ * ny;
            if (!bounce_ && P->rest_speed > 0.0f) {
                /* resting: Coulomb friction against the sliding part */
                float un = ux * nx + uy * ny;
                float tx = ux - un * nx, ty = uy - un * ny;
                float tl = BP_SQRT(tx * tx + ty * ty);
                if (tl > 0.0f) {
                    float f = BP_FMIN(tl, -BP_WALL_MU * vn) / tl;
                    ux -= f * tx;
                    uy -= f * ty;
                }
            }
        }
        left *= 1.0f - t;
        /* The rest of the displacement slides along what was hit (its
         * part into it is dropped): a ball pushed out of a corner by its
         * neighbours along the floor must not lose the push because it
         * also pressed into the floor. */
        qx *= 1.0f - t;
        qy *= 1.0f - t;
        float qn = BP_FMIN(qx * nx + qy * ny, 0.0f);
        qx -= qn * nx;
        qy -= qn * ny;
        Dx = qx + ux * P->h * left;
        Dy = qy + uy * P->h * left;
    }
    bp_cap_speed(P->speed_cap, &ux, &uy);
    x[i] = BP_FMIN(BP_FMAX(px, ri), P->width - ri);
    y[i] = BP_FMIN(BP_FMAX(py, ri), P->height - ri);
    vx[i] = ux;
    vy[i] = uy;
}

/* ---- Passes 1, 3, 4 and 5 on blocks of balls, in full lanes (CPUs) ------
 *
 * The CPU engine runs these (src/sim/cpu_blocks.c), and the OpenCL engine's
 * one-launch step on CPU devices; GPUs keep a work-item per ball.
 *
 * Pass 1 (bp_block_integrate) is the per-ball function in lanes. Pass 4
 * (bp_block_resolve) takes only the balls with an impact partner, the
 * rare ones whose term reads another ball, by bp_resolve; the others'
 * records are resolved by pass 5 in its lanes as it reads them
 * (bp_vresolve_own: bp_resolve's own part, in the same float operations),
 * one walk over the balls fewer a sub-step.
 *
 * Pass 3: bp_contacts takes one ball at a time, so its groups of lanes
 * hold that ball's neighbours only: 1-2 of 4 lanes on the rain. Here the
 * balls of a block are screened as there (the same rows, the same reach),
 * their pairs (i, j) appended to one list, and the list is evaluated
 * BP_LANES pairs at a time whatever ball they belong to (bp_vpair_eval,
 * each lane doing what bp_contacts' lane does); then the pairs are folded
 * into their balls' sums in list order (bp_fold_pair), which is each
 * ball's neighbour order. So the sums are bp_contacts' bits. The CPU engine
 * takes bp_once_contacts (below) instead, each pair evaluated once: the
 * same bits.
 *
 * Pass 5: most balls hit nothing in a sub-step. BP_LANES balls at a time go
 * through the first steps of bp_move_static in lanes (the same float
 * operations), and those that reach no wall and have no line near finish
 * there; the others take bp_move_static itself. */

/* Balls per block, and the pairs the list holds before it is worked off. */
#define BP_BLOCK 256u
/* Balls a call of bp_block_move takes where a thread moves a range of
 * balls (pass 1 of the next sub-step follows it on the same balls): its
 * slow lanes (a wall or a line near) wait for BP_LANES of them across the
 * whole span, where a block's last few took the scalar bp_move_static or
 * a part-filled group. Since the grid by columns each block holds a few
 * of the balls at the floor and the ramps, and spans of one block took
 * the rain 10k and the pile 10k 1.03-1.04x as long (seventy-sixth
 * session). */
#define BP_MOVE_SPAN (4u * BP_BLOCK)
#define BP_PAIRS_CAP 256u

/* What the passes read and write (the arguments of bp_contacts and
 * bp_move_static). */
typedef struct bp_block_arrays {
    BP_GLOBAL float *x, *y, *vx, *vy;
    BP_GLOBAL const float *r, *m;
    BP_GLOBAL bp_u8 *split;       /* contact counts; pass 5 sets them from ncontact */
    BP_GLOBAL const bp_u32 *cell_start, *sorted;
    BP_GLOBAL const float *spos;
    BP_GLOBAL bp_i32 *best;
    BP_GLOBAL bp_u8 *ncontact;
    BP_GLOBAL float *sum; /* pass 3's sums, pass 4's velocity and displacement: 4 a ball
                           * (the balls with best >= 0; the others' sums until pass 5) */
    BP_GLOBAL const float *lx1, *ly1, *lx2, *ly2;
    BP_GLOBAL const bp_u32 *seg_start, *seg_list;
    BP_GLOBAL const bp_u32 *seg_gap; /* bp_seggrid.gap, or 0 (then unused) */
} bp_block_arrays;

/* The pair list keeps a pair's ball i as i - BP_LI_BASE(i0), of type
 * bp_li: in C a byte, i - i0 (a block is 256 balls), as the screening
 * writes BP_LANES copies of it per step and keeps only the popcount (as
 * 32-bit words, those stores made the pile 3% slower); in OpenCL C the
 * ball's index in a 32-bit word (bytes there made PoCL's rain 1.4x
 * slower, and an offset 1% slower). BP_BSPLAT(b, p) writes BP_LANES
 * copies of b at p; BP_BLOAD(p) loads BP_LANES of them into a bp_vu. */
#if defined(__OPENCL_VERSION__)
typedef bp_u32 bp_li;
#define BP_LI_BASE(i0) 0u
#define BP_BSPLAT(b, p) BP_VSTORE(BP_VUSPLAT(b), (p))
#define BP_BLOAD(p) BP_VLOADU(p)
#else
typedef bp_u8 bp_li;
#define BP_LI_BASE(i0) (i0)
#if BP_LANES == 16
#define BP_BSPLAT(b, p) _mm_storeu_si128((__m128i *)(void *)(p), _mm_set1_epi8((char)(b)))
#define BP_BLOAD(p) \
    ((bp_vu)_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p))))
#else /* 8 or 4 copies: the bytes of one 64-bit word */
#define BP_BSPLAT(b, p)                                                \
    do {                                                               \
        uint64_t w_ = (uint64_t)(b) * BP_K64(0x0101010101010101);      \
        __builtin_memcpy((p), &w_, BP_LANES);                          \
    } while (0)
#if BP_LANES == 8
#define BP_BLOAD(p) \
    ((bp_vu)_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(p))))
#else
#define BP_BLOAD(p) ((bp_vu){(p)[0], (p)[1], (p)[2], (p)[3]})
#endif
#endif
#endif

typedef struct bp_pair_list {
    bp_li i[BP_PAIRS_CAP + BP_LANES]; /* ball i - BP_LI_BASE(i0) */
    bp_u32 j[BP_PAIRS_CAP + BP_LANES];
    float t[BP_PAIRS_CAP + BP_LANES];
    float dvx[BP_PAIRS_CAP + BP_LANES], dvy[BP_PAIRS_CAP + BP_LANES];
    float px[BP_PAIRS_CAP + BP_LANES], py[BP_PAIRS_CAP + BP_LANES];
    bp_i32 close[BP_PAIRS_CAP + BP_LANES], cand[BP_PAIRS_CAP + BP_LANES];
    bp_i32 soft[BP_PAIRS_CAP + BP_LANES];
    bp_u32 live[BP_PAIRS_CAP + BP_LANES]; /* the pairs that add something, in order */
    bp_u32 n;
} bp_pair_list;

/* Fills the i side of v (v->i set; ball b0 its first lane's) from A, and
 * ball i's velocity into (*vxi, *vyi). A list holds its pairs ball by
 * ball, so a group's balls i are mostly fewer than BP_LANES apart (the
 * unused lanes repeat its first): then, with AVX2 or AVX-512, one load and
 * a permute per array; else a gather through I, v->i's lanes in memory
 * (or 0 in C: then v->i is stored for it). */
BP_FN void bp_vpair_i_side(const bp_step_params *P, const bp_block_arrays *A, bp_vpair *v,
                           bp_u32 b0, const bp_u32 *I, bp_vf *vxi, bp_vf *vyi)
{
#ifdef BP_HAVE_VPERM
    bp_vu d = v->i - BP_VUSPLAT(b0);
    if (b0 + BP_LANES <= P->n && !BP_VANY(d >= BP_VUSPLAT(BP_LANES))) {
        v->xi = bp_vperm(A->x, b0, d);
        v->yi = bp_vperm(A->y, b0, d);
        v->ri = bp_vperm(A->r, b0, d);
        v->mi = bp_vperm(A->m, b0, d);
        v->ni = bp_vperm_split_n(A->split, b0, d);
        *vxi = bp_vperm(A->vx, b0, d);
        *vyi = bp_vperm(A->vy, b0, d);
        return;
    }
#else
    (void)P;
    (void)b0;
#endif
#ifndef __OPENCL_VERSION__
    bp_u32 own[BP_LANES];
    if (!I) {
        BP_VSTORE(v->i, own);
        I = own;
    }
#endif
    v->xi = BP_VGATHER(A->x, I);
    v->yi = BP_VGATHER(A->y, I);
    v->ri = BP_VGATHER_OR(P->r0, A->r, I);
    v->mi = BP_VGATHER_OR(P->m0, A->m, I);
    v->ni = bp_vsplit_n(A->split, I);
    *vxi = BP_VGATHER(A->vx, I);
    *vyi = BP_VGATHER(A->vy, I);
}

/* Evaluates the list's pairs and folds them into st (the block's sums,
 * ball i at st[i - i0]); empties the list. */
BP_FN void bp_pairs_work_off(bp_pair_list *L, const bp_step_params *P, const bp_block_arrays *A,
                             bp_fold *st, bp_u32 i0)
{
    bp_u32 n = L->n, nlive = 0u;
    if (n == 0u)
        return;
    for (bp_u32 k = n; k % BP_LANES; k++) { /* the last group's unused lanes: its first pair */
        L->i[k] = L->i[n - n % BP_LANES];
        L->j[k] = L->j[n - n % BP_LANES];
    }
    for (bp_u32 p = 0u; p < n; p += BP_LANES) {
        const bp_u32 *J = L->j + p;
        bp_vpair v;
        bp_vf vxi, vyi;
        v.i = BP_BLOAD(L->i + p) + BP_VUSPLAT(BP_LI_BASE(i0));
#ifdef __OPENCL_VERSION__
        bp_vpair_i_side(P, A, &v, L->i[p], L->i + p, &vxi, &vyi);
#else
        bp_vpair_i_side(P, A, &v, BP_LI_BASE(i0) + L->i[p], 0, &vxi, &vyi);
#endif
        bp_vpair_with_j(&v, vxi, vyi, A->x, A->y, A->r, P->r0, A->vx, A->vy, J);
        bp_vterms o;
        bp_vi lane = BP_LANE_IDS < BP_VUSPLAT(n - p);
        if (!bp_vpair_eval(P, &v, lane, A->m, A->split, J, &o, 0, 0))
            continue; /* no lane adds anything */
        BP_VSTORE(o.t, L->t + p);
        BP_VSTORE(o.dvx, L->dvx + p);
        BP_VSTORE(o.dvy, L->dvy + p);
        BP_VSTORE(o.px, L->px + p);
        BP_VSTORE(o.py, L->py + p);
        BP_VSTORE(o.close, L->close + p);
        BP_VSTORE(o.cand, L->cand + p);
        BP_VSTORE(o.soft, L->soft + p);
        /* The lanes that change the sums: a contact (soft), or a possible
         * impact partner. bp_fold_pair would also take the other close
         * lanes and those with a time of impact, but their terms are +0
         * and they count no contact, and a sum started at +0 never holds
         * -0 (x + -x rounds to +0), so adding them changes no bit. */
        BP_VCOMPRESS(L->live, nlive, (o.soft | o.cand) & lane, BP_LANE_IDS + BP_VUSPLAT(p));
    }
    for (bp_u32 q = 0u; q < nlive; q++) {
        bp_u32 p = L->live[q];
        bp_push c;
        c.dvx = BP_SCALAR_READ(L->dvx, p);
        c.dvy = BP_SCALAR_READ(L->dvy, p);
        c.px = BP_SCALAR_READ(L->px, p);
        c.py = BP_SCALAR_READ(L->py, p);
        bp_fold_pair(st + (L->i[p] + BP_LI_BASE(i0) - i0), (bp_i32)L->j[p], L->t[p],
                     L->close[p], L->cand[p], L->soft[p], c);
    }
    L->n = 0u;
}

/* bp_grid_coord, lane by lane: c clamped into [0, n - 1] as a float and
 * then truncated. BP_VMAX and BP_VMIN give their second operand for a NaN
 * (and where equal), so a NaN c is 0, as !(c >= 0) makes it there, and
 * c >= n - 1 is n - 1 (a float exactly: n < 2^24); in between the
 * truncation is bp_grid_coord's. Four vector instructions where the
 * selects by two compares took about nine (the 8-lane build's rain 10k
 * 1.5% fewer instructions in all; eighty-third session), and no lane
 * converted out of range. */
BP_FN bp_vi bp_vgrid_coord(bp_vf v, float inv_cell, bp_i32 n)
{
    return BP_VTOI(BP_VMIN(BP_VMAX(v * inv_cell, BP_VSPLAT(0.0f)), BP_VSPLAT((float)(n - 1))));
}

/* bp_clampi, lane by lane. */
BP_FN bp_vi bp_vclamp(bp_vi v, bp_vi lo, bp_vi hi)
{
    bp_vi under = v < lo, over = v > hi;
    return (under & lo) | (~under & ((over & hi) | (~over & v)));
}

/* The larger of a and b, lane by lane. */
BP_FN bp_vi bp_vmaxi(bp_vi a, bp_vi b)
{
    bp_vi gt = a > b;
    return (gt & a) | (~gt & b);
}

/* Where a block's balls look for neighbours: bp_reach squared and
 * bp_search_window, ball i at i - i0. */
typedef struct bp_block_reach {
    float reach2[BP_BLOCK];
    bp_i32 x0[BP_BLOCK], x1[BP_BLOCK], y0[BP_BLOCK], y1[BP_BLOCK];
    /* for bp_once_screen (bp_slot_block_lanes, bp_slot_block_one): the
     * window's first cell (y0 gw + x0), its rows and its cells a row */
    bp_u32 c0[BP_BLOCK], nrow[BP_BLOCK], span[BP_BLOCK];
} bp_block_reach;

/* bp_reach and bp_search_window of BP_LANES balls at (x, y), moving at
 * (vx, vy), of radius r, in lanes (the same float operations, so the same
 * reach and cells): reach^2, the balls' own grid row cy, and the window's
 * columns x0..x1 and rows y0..y1 (bp_block_windows, bp_slot_block_lanes). */
typedef struct bp_vwin {
    bp_vf reach2;
    bp_vi cy, x0, x1, y0, y1;
} bp_vwin;

BP_FN bp_vwin bp_vwindow(const bp_step_params *P, float vmax, bp_vf x, bp_vf y, bp_vf vx,
                         bp_vf vy, bp_vf r)
{
    bp_vwin v;
    bp_vf rsum = r + P->rmax;
    bp_vf close = BP_CLOSE_DIST(P, rsum);
    bp_vf hit = rsum + (BP_VSQRT(vx * vx + vy * vy) + vmax) * P->h;
    bp_vf reach = 1.01f * BP_VMAX(close, hit);
    v.reach2 = reach * reach;
    bp_vf gx = BP_GX(x, y), gy = BP_GY(x, y);
    bp_vi cx = bp_vgrid_coord(gx, P->inv_cell, P->gw);
    v.cy = bp_vgrid_coord(gy, P->inv_cell, P->gh);
    v.x0 = bp_vclamp(bp_vgrid_coord(gx - reach, P->inv_cell, P->gw), cx - BP_MAX_REACH, cx);
    v.x1 = bp_vclamp(bp_vgrid_coord(gx + reach, P->inv_cell, P->gw), cx, cx + BP_MAX_REACH);
    v.y0 = bp_vclamp(bp_vgrid_coord(gy - reach, P->inv_cell, P->gh), v.cy - BP_MAX_REACH, v.cy);
    v.y1 = bp_vclamp(bp_vgrid_coord(gy + reach, P->inv_cell, P->gh), v.cy, v.cy + BP_MAX_REACH);
    return v;
}

/* Windows v into W at w. */
BP_FN void bp_vwin_store(bp_vwin v, bp_block_reach *W, bp_u32 w)
{
    BP_VSTORE(v.reach2, W->reach2 + w);
    BP_VSTORE(v.x0, W->x0 + w);
    BP_VSTORE(v.x1, W->x1 + w);
    BP_VSTORE(v.y0, W->y0 + w);
    BP_VSTORE(v.y1, W->y1 + w);
}

/* bp_reach and bp_search_window of one ball, into W at w. */
BP_FN void bp_window_one(const bp_step_params *P, float vmax, float x, float y, float vx,
                         float vy, float r, bp_block_reach *W, bp_u32 w)
{
    float reach = bp_reach(P, r, BP_SQRT(vx * vx + vy * vy), vmax);
    bp_window win = bp_search_window(P, x, y, reach);
    W->reach2[w] = reach * reach;
    W->x0[w] = win.x0;
    W->x1[w] = win.x1;
    W->y0[w] = win.y0;
    W->y1[w] = win.y1;
}

/* The windows of balls i0..i1-1, BP_LANES at a time in lanes, the last
 * few one at a time; ball i at i - i0. */
BP_FN void bp_block_windows(const bp_step_params *P, const bp_block_arrays *A, float vmax,
                            bp_u32 i0, bp_u32 i1, bp_block_reach *W)
{
    bp_u32 i = i0;
    for (; i + BP_LANES <= i1; i += BP_LANES)
        bp_vwin_store(bp_vwindow(P, vmax, BP_VLOAD(A->x + i), BP_VLOAD(A->y + i),
                                 BP_VLOAD(A->vx + i), BP_VLOAD(A->vy + i), BP_VLOAD(A->r + i)),
                      W, i - i0);
    for (; i < i1; i++)
        bp_window_one(P, vmax, A->x[i], A->y[i], A->vx[i], A->vy[i], A->r[i], W, i - i0);
}

/* Pass 3 for balls i0..i1-1, at most BP_BLOCK of them. */
BP_FN void bp_block_contacts_one(const bp_step_params *P, const bp_block_arrays *A, float vmax,
                                 bp_u32 i0, bp_u32 i1, bp_pair_list *L, bp_fold *st,
                                 bp_block_reach *W)
{
    BP_GLOBAL const bp_u32 *cell_start = A->cell_start, *sorted = A->sorted;
    BP_GLOBAL const float *spos = A->spos;
    L->n = 0u;
    bp_block_windows(P, A, vmax, i0, i1, W);
    for (bp_u32 i = i0; i < i1; i++) {
        st[i - i0] = bp_fold_start();
        float xi = A->x[i], yi = A->y[i], reach2 = W->reach2[i - i0];
        bp_i32 x0 = W->x0[i - i0], x1 = W->x1[i - i0];
        /* bp_contacts' screening: a row's run BP_LANES balls at a time */
        for (bp_i32 gy = W->y0[i - i0]; gy <= W->y1[i - i0]; gy++) {
            bp_u32 row = (bp_u32)(gy * P->gw);
            bp_u32 k0 = cell_start[row + (bp_u32)x0], k1 = cell_start[row + (bp_u32)x1 + 1u];
            for (bp_u32 k = k0; k < k1; k += BP_LANES) {
                if (L->n > BP_PAIRS_CAP - BP_LANES)
                    bp_pairs_work_off(L, P, A, st, i0);
                bp_vu jv;
                bp_vi in = bp_screen(spos, P->ystride, sorted, k, k1, i, xi, yi, reach2, &jv);
                BP_BSPLAT(i - BP_LI_BASE(i0), L->i + L->n);
                BP_VCOMPRESS(L->j, L->n, in, jv);
            }
        }
    }
    bp_pairs_work_off(L, P, A, st, i0);
    for (bp_u32 i = i0; i < i1; i++)
        bp_fold_store(st + (i - i0), i, A->best, A->ncontact, A->sum);
}

/* Pass 3 for balls i0..i1-1, BP_BLOCK at a time. */
BP_FN void bp_block_contacts(const bp_step_params *P, const bp_block_arrays *A, float vmax,
                             bp_u32 i0, bp_u32 i1)
{
    bp_pair_list L;
    bp_fold st[BP_BLOCK];
    bp_block_reach W;
    for (bp_u32 b = i0; b < i1; b += BP_BLOCK)
        bp_block_contacts_one(P, A, vmax, b, i1 - b > BP_BLOCK ? b + BP_BLOCK : i1, &L, st, &W);
}

/* ---- Pass 3 with each pair evaluated once (CPU engine, CPU devices) -----
 *
 * bp_block_contacts evaluates a pair (i, j) twice, once for each ball.
 * Ball i folds its pairs in the order of its neighbours' slots in the
 * grid's order (its window's rows in turn, each row's run in slot order:
 * ascending slots). So the balls are walked here in slot order, each
 * screening only the slots after its own, and each pair's terms for both
 * balls come out of one evaluation (bp_vpair_eval with oj: the geometry
 * once, the masses' shares for each ball) and are folded into both at
 * once. A ball then gets the pairs of the balls before it as those are
 * walked, in their slot order, and then its own, in its neighbours' slot
 * order: the order and the terms of bp_block_contacts, so its bits. (Ball
 * j's terms use ball i's normal, sliding velocity and push direction
 * negated: the floats its own evaluation would give, every one a
 * difference or product taken the other way round, up to the sign of a
 * zero, which no sum started at +0 can see. A pair that adds something is
 * within reach of both balls: reach bounds what each ball can touch or
 * hit, and the tests are symmetric; the other pairs add +0 and count
 * nothing, as there.)
 *
 * The sums are kept in the output arrays (sum, ncontact, best) from the
 * start, zeroed a block ahead of the walk (as each block of balls is
 * filled in, up to the last slot its windows reach: one loop a block, not
 * one of varying length a grid row), each pair's terms added to
 * both its balls' records (bp_f4: one load, add and store a ball). bp_fold holds
 * the best candidate's term and time back; here they are computed again,
 * by bp_resolve's scalar functions (the lanes' bits), the rare times a
 * ball with a candidate meets another.
 *
 * A thread walks one range of slots a..b-1. The balls before a with pairs
 * in the range (its ghosts, within a few rows) are walked first, folding
 * only their partners' terms; a pair of the range's balls with a ball at
 * b or after folds only the range's side (the j of the list flagged
 * BP_ONCE_NOJ): the other range folds it from its ghosts. */

#define BP_ONCE_NOJ 0x80000000u
/* A pair's word in the list: ball j in the low BP_ONCE_ISHIFT bits (a
 * world has at most 2^22 balls: BP_MAX_BALLS), ball i's slot - the
 * block's first (below BP_BLOCK, 256) in the 8 bits above, and
 * BP_ONCE_NOJ. One compress and one store a screening step, where a list
 * of i beside it took BP_LANES copies of i a step too (PoCL writes those
 * 16 words in four stores). */
#define BP_ONCE_ISHIFT 23u
#define BP_ONCE_JBITS (~(255u << BP_ONCE_ISHIFT))   /* ball j and BP_ONCE_NOJ */
#define BP_ONCE_I(word) (((word) >> BP_ONCE_ISHIFT) & 255u)

/* The lists and blocks of lanes on a thread's stack start on a cache line,
 * and each of their arrays is a whole number of lines, so a 16-lane store
 * at a multiple of 16 does not straddle two lines. GCC placed them so
 * anyway; in PoCL's build where they fell depended on the run, and with
 * BP_VSTORE's 64-byte stores a run could take 1.10x the CPU engine's
 * frame with one group against 0.985 aligned (PoCL 0.82-0.87 of the frame
 * time in whole benches; the CPU engine level). */
#define BP_ALIGN64 __attribute__((aligned(64)))

typedef struct bp_once_list {
    /* ball j, i's slot, BP_ONCE_NOJ; 64-byte aligned, as every array after
     * it then is (BP_ALIGN64) */
    BP_ALIGN64 bp_u32 j[BP_PAIRS_CAP + BP_LANES];
    float t[BP_PAIRS_CAP + BP_LANES];
    /* pair p's terms for ball i and for ball j, at BP_REC(p) (tj is not
     * written in a world of one mass: bp_once_work_off's negj) */
    bp_f4 ti[BP_PAIRS_CAP + BP_LANES], tj[BP_PAIRS_CAP + BP_LANES];
    /* The pairs that add something, in list order, as the fold reads
     * them: in live, ball i, BP_ONCE_CAND if it may be an impact,
     * BP_ONCE_SOFT if a contact; in livej, the pair's word with BP_REC(p)
     * in place of i's slot (p < BP_PAIRS_CAP: 8 bits). Two compresses a
     * group of lanes, where the fold had looked p's word, ball i and
     * record up through p (the pile 0.97 of the frame time,
     * docs/benchmarks.md). */
    bp_u32 live[BP_PAIRS_CAP + BP_LANES], livej[BP_PAIRS_CAP + BP_LANES];
} bp_once_list;
#define BP_ONCE_CAND 0x80000000u
#define BP_ONCE_SOFT 0x40000000u

/* The screening's steps: bp_once_step_bits (the lanes in the run cut
 * from the distance compare's bits by bzhi) where the build has BMI2,
 * bp_once_step (the lanes' count compared in a vector) elsewhere. From
 * the forty-second to the ninety-second session the CPU engine's 16-lane
 * build took steps of its own (BP_ROW_MASKED, bp_once_batch: the lanes in
 * the run and past the range by compares of the lanes' slots, masks into
 * the distance compare); the bits were 1.1-1.5% faster (ninety-third
 * session, docs/benchmarks.md). From the forty-second to the forty-sixth
 * session that build also gathered each window's first-row run
 * (cell_start at the row's two ends) in lanes as the block was filled
 * (BP_ROW_RUNS); without it the rain and the pile were level on the Xeon
 * and 0.963-0.970 of the frame time on a Zen 5, whose gathers cost more
 * (docs/benchmarks.md, forty-seventh session). */

/* A block of slots' balls i in slot order, slot k at k - k0 (so the pairs'
 * i sides load and permute as bp_vpair_i_side's do), or the balls of a
 * list of slots, entry w the list's w-th (k0 0: the ghosts of
 * bp_once_contacts), with their windows: position, velocity, radius, mass,
 * bp_split_n, the ball's index; the last BP_LANES + 1 are padding (0). */
typedef struct bp_slot_block {
    BP_ALIGN64 float x[BP_BLOCK + BP_LANES];
    float y[BP_BLOCK + BP_LANES];
    float vx[BP_BLOCK + BP_LANES], vy[BP_BLOCK + BP_LANES];
    float r[BP_BLOCK + BP_LANES], m[BP_BLOCK + BP_LANES], n[BP_BLOCK + BP_LANES];
    bp_u32 id[BP_BLOCK + BP_LANES];
    bp_block_reach W;
    bp_u32 k0;
} bp_slot_block;

/* The time of impact and ball q's term of its pair with ball b, as the
 * lanes gave them when b became q's best candidate (bp_resolve's scalar
 * functions). */
BP_FN float bp_once_held(const bp_step_params *P, const bp_block_arrays *A, bp_u32 q, bp_u32 b,
                         bp_push *c)
{
    float xi = A->x[q], yi = A->y[q], ri = A->r[q], mi = A->m[q];
    float dx = A->x[b] - xi, dy = A->y[b] - yi;
    float rj = A->r[b], rsum = ri + rj;
    float d2 = dx * dx + dy * dy;
    float rvx = A->vx[q] - A->vx[b], rvy = A->vy[q] - A->vy[b];
    c->dvx = c->dvy = c->px = c->py = 0.0f;
    if (bp_pair_close(P, d2, rsum))
        bp_pair_soft(P, q, b, dx, dy, d2, rvx, rvy, bp_side_of(xi, yi, ri, mi, A->split[q]),
                     bp_side_of(A->x[b], A->y[b], rj, A->m[b], A->split[b]), c);
    return bp_pair_toi(dx, dy, rvx, rvy, rsum, P->h);
}

/* bp_fold_pair into ball q's sums in the output arrays: pair (q, j) that
 * adds something (soft or cand). */
BP_FN void bp_once_fold(const bp_step_params *P, const bp_block_arrays *A, bp_u32 q, bp_u32 j,
                        float t, int cand, int soft, bp_f4 c)
{
    if (soft && A->ncontact[q] < 255u)
        A->ncontact[q]++;
    if (cand) {
        bp_i32 b = A->best[q];
        if (b < 0) { /* the first candidate: its term held back (the old one is +0) */
            A->best[q] = (bp_i32)j;
            return;
        }
        bp_push held;
        float tb = bp_once_held(P, A, q, (bp_u32)b, &held);
        if (t < tb || (t == tb && (bp_i32)j < b)) {
            A->best[q] = (bp_i32)j;
            c = BP_F4PUSH(held);
        }
    }
    bp_f4 a = BP_F4LOAD(A->sum + 4u * q) + c;
    BP_F4STORE(a, A->sum + 4u * q);
}

/* The i side of v from S: v->i holds the lanes' entries of S (b0 its
 * first lane's), and is left holding the balls' indices (S->id). Always
 * inlined in C: once the 16-lane build's gathers became loads, GCC left
 * it a call, its vectors returned through memory (on a Zen 5 the rain
 * 10k 0.975 of the frame time inlined, the pile 50k 0.97; ninety-first
 * session, docs/benchmarks.md). */
BP_FN_INLINE void bp_once_i_side(const bp_slot_block *S, bp_vpair *v, bp_u32 b0, bp_vf *vxi,
                          bp_vf *vyi)
{
#ifdef BP_HAVE_VPERM
    bp_vu d = v->i - BP_VUSPLAT(b0);
    if (!BP_VANY(d >= BP_VUSPLAT(BP_LANES))) {
        v->i = BP_VASU(BP_VPERM_P((const float *)(const void *)S->id, b0, d));
        v->xi = BP_VPERM_P(S->x, b0, d);
        v->yi = BP_VPERM_P(S->y, b0, d);
        v->ri = BP_VPERM_P(S->r, b0, d);
        v->mi = BP_VPERM_P(S->m, b0, d);
        v->ni = BP_VPERM_P(S->n, b0, d);
        *vxi = BP_VPERM_P(S->vx, b0, d);
        *vyi = BP_VPERM_P(S->vy, b0, d);
        return;
    }
#else
    (void)b0;
#endif
    bp_u32 I[BP_LANES];
    BP_VSTORE(v->i, I);
    v->i = BP_VGATHERU(S->id, I);
    v->xi = BP_VGATHER(S->x, I);
    v->yi = BP_VGATHER(S->y, I);
    v->ri = BP_VGATHER(S->r, I);
    v->mi = BP_VGATHER(S->m, I);
    v->ni = BP_VGATHER(S->n, I);
    *vxi = BP_VGATHER(S->vx, I);
    *vyi = BP_VGATHER(S->vy, I);
}

/* Folds the list's nlive live pairs (bp_once_work_off) into their balls'
 * records in list order, which is each ball's neighbour order (ball j's
 * terms from tj, or with negj ball i's negated); without a
 * branch but for the rare pair that may be a ball's impact partner
 * (bp_once_fold). Keeping ball i's sums in registers over its run of
 * pairs paid while a sum was four arrays: a record is one load and one
 * store. A call of its own in OpenCL C: inside bp_once_work_off, PoCL's
 * build kept the arrays' addresses on the stack, crowded out by the
 * evaluation's registers, and loaded them again for every pair (PoCL's
 * rain 10k 0.985 of the frame time as a call, the piles 0.97-0.975,
 * fifty-third session, docs/benchmarks.md). GCC's build keeps them in
 * registers either way, and inlines it. */
#ifdef __OPENCL_VERSION__
#define BP_FN_FOLD BP_FN_CALLED /* also bp_once_fold_cand's, below */
#else
#define BP_FN_FOLD BP_FN_INLINE /* GCC's inlining as when it was written in place */
#endif
/* One side of a pair that is not a candidate, in bp_once_fold_list: its
 * terms c added to ball b's record, and a soft contact to its count (at
 * most 255), without a branch. Forced inline, so GCC's object code is the
 * same as when both sides were written out. */
BP_FN_INLINE void bp_once_add(BP_GLOBAL float *sum, BP_GLOBAL bp_u8 *nc, bp_u32 b, bp_f4 c,
                              bp_u32 soft)
{
    bp_f4 a = BP_F4LOAD(sum + 4u * b) + c;
    BP_F4STORE(a, sum + 4u * b);
    bp_u32 n = nc[b];
    nc[b] = (bp_u8)(n + (n < 255u ? soft : 0u));
}

/* The rare live pair that may be an impact (BP_ONCE_CAND), folded into
 * both its balls by bp_once_fold. A call of its own in OpenCL C: written
 * in bp_once_fold_list's loop, its registers (bp_once_held's) pushed the
 * loop's two array addresses to the stack in PoCL's build, reloaded for
 * every pair (PoCL's 50k rows 0.98-0.99 of the frame time without them,
 * the rain 10k 0.994; seventy-ninth session, docs/benchmarks.md);
 * inlined in C, as the fold itself (BP_FN_FOLD). */
BP_FN_FOLD void bp_once_fold_cand(const bp_once_list *L, bp_u32 i, bp_u32 j, bp_u32 rp,
                                  int soft, const bp_step_params *P, const bp_block_arrays *A,
                                  int fold_i, int negj)
{
    float t = L->t[BP_REC_INV(rp)];
    if (fold_i)
        bp_once_fold(P, A, i, j & ~BP_ONCE_NOJ, t, 1, soft, L->ti[rp]);
    if (!(j & BP_ONCE_NOJ))
        bp_once_fold(P, A, j, i, t, 1, soft, negj ? -L->ti[rp] : L->tj[rp]);
}

BP_FN_FOLD void bp_once_fold_list(const bp_once_list *L, bp_u32 nlive,
                                    const bp_step_params *P, const bp_block_arrays *A,
                                    int fold_i, int negj)
{
    BP_GLOBAL float *sum = A->sum;
    BP_GLOBAL bp_u8 *nc = A->ncontact;
    for (bp_u32 q = 0u; q < nlive; q++) {
        bp_u32 lv = L->live[q], jw = L->livej[q];
        bp_u32 i = lv & ~(BP_ONCE_CAND | BP_ONCE_SOFT), rp = BP_ONCE_I(jw);
        bp_u32 j = jw & BP_ONCE_JBITS;
        bp_u32 soft = (lv / BP_ONCE_SOFT) & 1u;
        if (lv & BP_ONCE_CAND) {
            bp_once_fold_cand(L, i, j, rp, (int)soft, P, A, fold_i, negj);
            continue;
        }
        bp_f4 ti = L->ti[rp];
        if (fold_i)
            bp_once_add(sum, nc, i, ti, soft);
        if (!(j & BP_ONCE_NOJ))
            bp_once_add(sum, nc, j, negj ? -ti : L->tj[rp], soft);
    }
}

/* Evaluates the list's n pairs (balls i of block S), n > 0, and folds
 * each into its ball i (if fold_i) and its ball j (unless flagged); with
 * negj, ball j's terms as ball i's negated, every ball having the mass
 * P->m0, and with one_r too every ball the radius P->r0
 * (bp_once_work_off, below). */
BP_FN_INLINE void bp_once_work_off_as(bp_once_list *L, bp_u32 n, const bp_step_params *P,
                                      const bp_block_arrays *A, const bp_slot_block *S,
                                      int fold_i, int negj, int one_r)
{
    bp_u32 nlive = 0u;
    const bp_vf r0 = BP_VSPLAT(P->r0), m0 = BP_VSPLAT(P->m0);
    for (bp_u32 k = n; k % BP_LANES; k++) /* the last group's unused lanes: its first pair */
        L->j[k] = L->j[n - n % BP_LANES];
    for (bp_u32 p = 0u; p < n; p += BP_LANES) {
        bp_u32 J[BP_LANES];
        bp_vu word = BP_VLOADU(L->j + p);
        bp_vu jm = word & BP_VUSPLAT(BP_ONCE_JBITS & ~BP_ONCE_NOJ);
        BP_VSTORE(jm, J);
        bp_vpair v;
        bp_vf vxi, vyi;
        v.i = (word >> BP_ONCE_ISHIFT) & BP_VUSPLAT(255u);
        bp_once_i_side(S, &v, BP_ONCE_I(L->j[p]), &vxi, &vyi);
        bp_vpair_with_j(&v, vxi, vyi, A->x, A->y, A->r, P->r0, A->vx, A->vy, J);
        /* The same floats the lanes hold (S's radii and masses, and
         * bp_vpair_with_j's, are r0 and m0 in every lane of such a world),
         * but the compiler now sees them the same in every group: the
         * permutes of S's radii and masses and the gather of ball j's
         * masses drop out, and so do every sum, product and minimum of
         * the radii (the contact, skin and spring distances) and the
         * lanes' test for one mass, made once a call instead of once a
         * group; fewer vectors live across the group, fewer spilled. */
        if (one_r) {
            v.ri = v.rj = r0;
            v.rsum = r0 + r0;
        }
        if (negj)
            v.mi = m0;
        bp_vterms o;
        bp_vpush oj;
        bp_vi lane = BP_LANE_IDS < BP_VUSPLAT(n - p);
        if (!bp_vpair_eval(P, &v, lane, A->m, A->split, J, &o, negj ? 0 : &oj, negj))
            continue;
        bp_vi live = (o.soft | o.cand) & lane;
        if (BP_VANY(o.cand & lane)) /* the times, for the rare candidates only */
            BP_VSTORE(o.t, L->t + p);
        bp_vstore_records_any(o.dvx, o.dvy, o.px, o.py, (float *)(L->ti + p));
        if (!negj)
            bp_vstore_records_any(oj.dvx, oj.dvy, oj.px, oj.py, (float *)(L->tj + p));
        bp_vu flags = (BP_VASU(o.cand) & BP_VUSPLAT(BP_ONCE_CAND)) |
                      (BP_VASU(o.soft) & BP_VUSPLAT(BP_ONCE_SOFT));
        bp_vu rec = BP_REC(BP_LANE_IDS + BP_VUSPLAT(p));
        bp_u32 nj = nlive;
        BP_VCOMPRESS(L->live, nlive, live, v.i | flags);
        BP_VCOMPRESS(L->livej, nj, live,
                     (word & BP_VUSPLAT(BP_ONCE_JBITS)) | (rec << BP_ONCE_ISHIFT));
    }
    bp_once_fold_list(L, nlive, P, A, fold_i, negj);
}

/* In a world of one mass (bp_step_params.m0, and m0 + m0 finite: every
 * lane of every group takes bp_vpair_soft's `same`) ball j's terms are
 * ball i's negated, up to the sign of a zero: the same mass shares, and
 * every product with a normal, sliding velocity or push direction taken
 * the other way round, each difference and sum of them a rounding of the
 * negated exact value. So the evaluation leaves ball j's terms out (no
 * second bp_vsoft_terms and no records of them, negj) and the fold adds
 * ball i's record negated to ball j's sums: the same bits, as no sum
 * started at +0 can see a zero's sign (x + -0 and x + +0 are x, +0 for
 * x = +0). The pile 50k 0.91-0.96 of the frame time, the rain 10k
 * 0.96, PoCL 0.96 and 0.98-0.99 (eighty-fifth session,
 * docs/benchmarks.md). A world of one mass and one radius too (the
 * rain's, the pile's: bp_step_params.r0) takes a copy of its own
 * (bp_once_work_off_as's one_r), whose radii and masses the compiler
 * sees as the same in every group (eighty-seventh session). */
BP_FN_CALLED void bp_once_work_off(bp_once_list *L, bp_u32 n, const bp_step_params *P,
                                   const bp_block_arrays *A, const bp_slot_block *S, int fold_i)
{
    if (n == 0u)
        return;
    const int one_mass = P->m0 > 0.0f && P->m0 + P->m0 <= FLT_MAX;
    if (one_mass && P->r0 > 0.0f)
        bp_once_work_off_as(L, n, P, A, S, fold_i, 1, 1);
    else if (one_mass)
        bp_once_work_off_as(L, n, P, A, S, fold_i, 1, 0);
    else
        bp_once_work_off_as(L, n, P, A, S, fold_i, 0, 0);
}

/* Clears the sums of the balls in slots *z .. to-1; *z = to (if more).
 * The arrays' addresses are taken from A once: the contact count's store,
 * a byte, may alias anything, so the loop had loaded all four again after
 * each (the rain 10k about 1% faster without, sixty-ninth session). */
BP_FN void bp_once_zero(const bp_block_arrays *A, bp_u32 *z, bp_u32 to)
{
    BP_GLOBAL const bp_u32 *sorted = A->sorted;
    BP_GLOBAL bp_i32 *best = A->best;
    BP_GLOBAL bp_u8 *nc = A->ncontact;
    BP_GLOBAL float *sum = A->sum;
    bp_f4 zero = BP_F4(0.0f, 0.0f, 0.0f, 0.0f);
    /* four slots a loop turn in GCC's builds: the loop's own three
     * instructions were a third of a slot's nine (eighty-sixth session) */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__OPENCL_VERSION__)
#pragma GCC unroll 4
#endif
    for (bp_u32 k = *z; k < to; k++) {
        bp_u32 q = sorted[k];
        best[q] = -1;
        nc[q] = 0u;
        BP_F4STORE(zero, sum + 4u * q);
    }
    *z = *z > to ? *z : to;
}

/* Entries w .. w + BP_LANES - 1 of S: the balls J (indices) at x, y. */
BP_FN void bp_slot_block_lanes(const bp_step_params *P, const bp_block_arrays *A, float vmax,
                               bp_vf x, bp_vf y, const bp_u32 *J, bp_u32 w, bp_slot_block *S)
{
    bp_vf vx = BP_VGATHER(A->vx, J), vy = BP_VGATHER(A->vy, J);
    bp_vf r = BP_VGATHER_OR(P->r0, A->r, J), m = BP_VGATHER_OR(P->m0, A->m, J);
    bp_vf nn = bp_vsplit_n(A->split, J);
    BP_VSTORE(x, S->x + w);
    BP_VSTORE(y, S->y + w);
    BP_VSTORE(vx, S->vx + w);
    BP_VSTORE(vy, S->vy + w);
    BP_VSTORE(r, S->r + w);
    BP_VSTORE(m, S->m + w);
    BP_VSTORE(nn, S->n + w);
    bp_vu id = BP_VLOADU(J);
    BP_VSTORE(id, S->id + w);
    bp_vwin v = bp_vwindow(P, vmax, x, y, vx, vy, r);
    /* the rows above the ball's own hold only slots before its own,
     * which this pass does not screen: its window starts at its row */
    v.y0 = v.cy;
    bp_vwin_store(v, &S->W, w);
    /* the window's first cell, rows and span for bp_once_screen, made
     * here in lanes: made there, ball by ball, they had cost it a
     * multiply and six more instructions a ball (eighty-sixth session).
     * From the window's vectors, not loaded back from S: PoCL's LLVM
     * had rebuilt the stored vectors from their halves, 12 shuffles a
     * group of 8 (eighty-ninth session). */
    bp_vu c0 = BP_VASU(v.y0 * P->gw + v.x0), nr = BP_VASU(v.y1 - v.y0 + 1),
          sp = BP_VASU(v.x1 - v.x0 + 1);
    BP_VSTORE(c0, S->W.c0 + w);
    BP_VSTORE(nr, S->W.nrow + w);
    BP_VSTORE(sp, S->W.span + w);
}

/* Entry w of S: the ball in slot k, or padding (0) where there is none. */
BP_FN void bp_slot_block_one(const bp_step_params *P, const bp_block_arrays *A, float vmax,
                             int any, bp_u32 k, bp_u32 w, bp_slot_block *S)
{
    S->x[w] = S->y[w] = S->vx[w] = S->vy[w] = S->r[w] = S->m[w] = S->n[w] = 0.0f;
    S->id[w] = 0u;
    if (!any)
        return;
    bp_u32 i = A->sorted[k];
    S->x[w] = A->spos[k];
    S->y[w] = A->spos[P->ystride + k];
    S->vx[w] = A->vx[i];
    S->vy[w] = A->vy[i];
    S->r[w] = A->r[i];
    S->m[w] = A->m[i];
    S->n[w] = bp_split_n(A->split[i]);
    S->id[w] = i;
    bp_window_one(P, vmax, S->x[w], S->y[w], S->vx[w], S->vy[w], S->r[w], &S->W, w);
    S->W.y0[w] = bp_grid_coord(BP_GY(S->x[w], S->y[w]), P->inv_cell, P->gh);
    S->W.c0[w] = (bp_u32)(S->W.y0[w] * P->gw + S->W.x0[w]);
    S->W.nrow[w] = (bp_u32)(S->W.y1[w] - S->W.y0[w] + 1);
    S->W.span[w] = (bp_u32)(S->W.x1[w] - S->W.x0[w] + 1);
}

/* J: the BP_LANES indices at p for a gather, in private memory in OpenCL
 * C (a copy), read where they are in C. */
#ifdef __OPENCL_VERSION__
#define BP_GATHER_INDICES(J, p)                                              \
    bp_u32 J[BP_LANES];                                                        \
    BP_VSTORE(BP_VLOADU(p), J)
#else
#define BP_GATHER_INDICES(J, p) const bp_u32 *J = (p)
#endif

/* Fills S with the balls in slots k0..k1-1 (at most BP_BLOCK). */
BP_FN void bp_slot_block_fill(const bp_step_params *P, const bp_block_arrays *A, float vmax,
                              bp_u32 k0, bp_u32 k1, bp_slot_block *S)
{
    BP_GLOBAL const float *spos = A->spos;
    bp_u32 k = k0;
    S->k0 = k0;
    for (; k + BP_LANES <= k1; k += BP_LANES) {
        BP_GATHER_INDICES(J, A->sorted + k);
        bp_slot_block_lanes(P, A, vmax, BP_VLOAD(spos + k), BP_VLOAD(spos + P->ystride + k), J,
                            k - k0, S);
    }
    for (; k < k1 + BP_LANES; k++)
        bp_slot_block_one(P, A, vmax, k < k1, k, k - k0, S);
}

/* Fills S with the balls in the slots K[0..nb-1] (at most BP_BLOCK), entry
 * w the ball in slot K[w]; S->k0 0. */
BP_FN void bp_slot_block_fill_at(const bp_step_params *P, const bp_block_arrays *A,
                                 float vmax, const bp_u32 *K, bp_u32 nb, bp_slot_block *S)
{
    bp_u32 w = 0u;
    S->k0 = 0u;
    BP_GLOBAL const float *sposy = A->spos + P->ystride;
    for (; w + BP_LANES <= nb; w += BP_LANES) {
        const bp_u32 *Kw = K + w;
        bp_u32 J[BP_LANES];
        bp_vu id = BP_VGATHERU(A->sorted, Kw);
        BP_VSTORE(id, J);
        bp_slot_block_lanes(P, A, vmax, BP_VGATHER(A->spos, Kw), BP_VGATHER(sposy, Kw), J, w, S);
    }
    for (; w < nb + BP_LANES; w++)
        bp_slot_block_one(P, A, vmax, w < nb, w < nb ? K[w] : 0u, w, S);
}

/* One screening step of bp_once_screen's portable form (PoCL's, and the
 * 8- and 4-lane C builds'): the BP_LANES slots from s, those in the run
 * (the lanes below left, each lane holding the slots the run has left
 * from s on) and within reach of ball i (at xi, yi) into the list,
 * flagged BP_ONCE_NOJ at b or after where past; the list must have room
 * for BP_LANES more. The run's end as the lanes' count left, counted
 * down a step at a time, and signed (a run is under 2^31 slots): one
 * subtract and one compare a step, where the lanes' slots against the
 * run's end had been a splat, an add and an unsigned compare (a subtract
 * and a signed compare in AVX2). past a constant: the steps of a block
 * whose windows do not reach b test nothing for it (the C 16-lane step's
 * compare for b left out so: the same bits, one thread 0.97-0.99 of the
 * frame time, two level; seventy-second session). */
BP_FN_INLINE void bp_once_step(bp_once_list *L, bp_u32 *ln, BP_GLOBAL const float *spos,
                               BP_GLOBAL const float *sposy, BP_GLOBAL const bp_u32 *sorted,
                               bp_u32 s, bp_vi left, float xi, float yi, float reach2, bp_u32 b,
                               bp_u32 w, int past)
{
    bp_vf dx = BP_VLOAD(spos + s) - xi, dy = BP_VLOAD(sposy + s) - yi;
    bp_vu jv = BP_VLOADU(sorted + s);
    bp_vi in = (dx * dx + dy * dy <= reach2) & (BP_VASI(BP_LANE_IDS) < left);
    if (past && s + BP_LANES > b)
        jv = jv | (BP_VASU(BP_LANE_IDS + BP_VUSPLAT(s) >= BP_VUSPLAT(b)) &
                   BP_VUSPLAT(BP_ONCE_NOJ));
    BP_VCOMPRESS(L->j, *ln, in, jv | BP_VUSPLAT(w << BP_ONCE_ISHIFT));
}

#if (!defined(__OPENCL_VERSION__) && BP_LANES >= 8 && defined(__BMI2__)) ||                 \
    (defined(BP_OCL_AVX512) && defined(__BMI2__) && __has_builtin(__builtin_ia32_bzhi_si))
#ifdef __OPENCL_VERSION__ /* PoCL on a CPU with AVX-512 and BMI2 */
#define BP_BZHI(a, n) ((bp_u32)__builtin_ia32_bzhi_si((a), (n)))
#else
#define BP_BZHI(a, n) _bzhi_u32((a), (n))
#endif
/* The 8- and 16-lane C builds (x86-64-v3 and v4, which have BMI2): the
 * lanes in the run cut from the compare's mask as bits, the run's lanes
 * left a count in a general register (below 256: bzhi reads its low 8
 * bits; the long runs' path clamps it) instead of a vector counted down
 * and compared: one instruction fewer a step, and no splat of the count a
 * row (the 8-lane build's rain 10k 3.5% fewer instructions, eighty-sixth
 * session). The same lanes. PoCL's AVX-512 build takes it too: the
 * portable step's lane test, a second compare masked by the distance's,
 * had followed the distance's compare on the way to the compress (a
 * compare's latency more a step). With the bits, PoCL's rain 10k to 200k
 * and pile 50k 0.980-0.988 of the frame time in one process, both
 * orders; the lane test first, as a mask from the count (through clang's
 * masked compare builtin), was 0.5-1.4% slower than the bits. The 16-lane
 * C build's own step had tested the lanes first, so (bp_once_batch, until
 * the ninety-second session); the bits were 1.1-1.5% faster there too
 * (ninety-third session, docs/benchmarks.md). */
#define BP_ONCE_BITS 1
BP_FN_INLINE void bp_once_step_bits(bp_once_list *L, bp_u32 *ln, BP_GLOBAL const float *spos,
                                    BP_GLOBAL const float *sposy,
                                    BP_GLOBAL const bp_u32 *sorted, bp_u32 s,
                                    bp_u32 left, float xi, float yi, float reach2, bp_u32 b,
                                    bp_u32 w, int past)
{
    bp_vf dx = BP_VLOAD(spos + s) - xi, dy = BP_VLOAD(sposy + s) - yi;
    bp_vu jv = BP_VLOADU(sorted + s);
#if !defined(__OPENCL_VERSION__) && BP_LANES == 16
    /* the compare straight into a mask register: through BP_VMASK's
     * vector, GCC had made it one and tested it back (two instructions) */
    bp_u32 mk = BP_BZHI(_mm512_cmp_ps_mask((__m512)(dx * dx + dy * dy), _mm512_set1_ps(reach2),
                                           _CMP_LE_OQ),
                        left);
#else
    bp_u32 mk = BP_BZHI(BP_VMASK(dx * dx + dy * dy <= reach2), left);
#endif
    if (past && s + BP_LANES > b)
        jv = jv | (BP_VASU(BP_LANE_IDS + BP_VUSPLAT(s) >= BP_VUSPLAT(b)) &
                   BP_VUSPLAT(BP_ONCE_NOJ));
    BP_VCOMPRESS_BITS(L->j, *ln, mk, jv | BP_VUSPLAT(w << BP_ONCE_ISHIFT));
}
#endif

/* The pairs of the ball in slot k of block S with the balls in slots
 * lo..hi-1 of its window into the list (*ln pairs in it), those at b or
 * after flagged BP_ONCE_NOJ (the sums they add to are cleared before:
 * bp_slot_block_reach). Each row's run of slots is taken BP_LANES at a
 * time (bp_once_step_bits, bp_once_step). Until the forty-third session the 16-lane
 * builds (C, and PoCL's through its builtins) first packed the runs of
 * a window's rows into full vectors by expands, so a row of a few balls
 * did not take a whole step; the packing cost more than the steps it
 * saved (the rain 0.95-0.97 of the frame time without it, PoCL's
 * 0.91-0.98, the piles level to 0.985; docs/benchmarks.md). The same
 * candidates in the same order either way. (lo > k, so j is never i.) */
#define BP_ONCE_ALL 0xffffffffu /* hi for no end but the rows' */
/* What bp_once_screen reads of P and A, taken once a call of
 * bp_once_contacts into its locals: read through P and A, GCC loaded
 * them again for every ball, as the list's stores or the call of
 * bp_once_work_off might have changed them for all it knew (6 of the
 * rain 10k's 236 instructions a ball-step, eighty-sixth session). */
typedef struct bp_once_src {
    BP_GLOBAL const bp_u32 *cell_start, *sorted;
    BP_GLOBAL const float *spos, *sposy;
    bp_u32 gw;
} bp_once_src;

BP_FN void bp_once_screen(const bp_step_params *P, const bp_block_arrays *A,
                          const bp_once_src *R, bp_once_list *L, bp_u32 *ln,
                          const bp_slot_block *S, bp_u32 k, bp_u32 lo, bp_u32 hi, bp_u32 b,
                          int fold_i, int past, int own)
{
    BP_GLOBAL const bp_u32 *cell_start = R->cell_start, *sorted = R->sorted;
    BP_GLOBAL const float *spos = R->spos, *sposy = R->sposy;
    bp_u32 w = k - S->k0;
    float xi = S->x[w], yi = S->y[w], reach2 = S->W.reach2[w];
    /* each row's run from the ends of the window's first row, a row
     * (gw cells) on each time: the row's start from gy * gw and the
     * grid's width from P in every row had put a multiply and two
     * dependent loads before the run's loads (the rain 10k 0.99 of the
     * frame time without them, sixty-ninth session); the run's end span
     * cells on from its start, and the rows counted down (one pointer and
     * no row index: 2 of the 25 instructions a row, eighty-third
     * session) */
    bp_u32 gw = R->gw, rows = S->W.nrow[w], span = S->W.span[w];
    BP_GLOBAL const bp_u32 *cs = cell_start + S->W.c0[w];
    /* own (lo = k + 1, hi BP_ONCE_ALL: a block's own balls, whose window
     * starts at the ball's own row and cell column x0 <= its own <= x1):
     * the first row's run starts right after slot k (cs[0] <= k <
     * cs[span]), and each later row's run after the first's end, so no
     * run needs the minimum and maximums below, nor its start loaded in
     * the first row: 4 instructions a row (eighty-sixth session). The
     * same runs. */
    bp_u32 k0 = own ? lo : cs[0], k1 = cs[span];
    for (;;) {
        if (!own) {
            k0 = k0 > lo ? k0 : lo;
            k1 = k1 < hi ? k1 : hi;
            /* an empty run (k0 >= k1, k0 at most n: the pad past the
             * last ball is read) takes its step too, with no lane on: no
             * branch on the run's length where most runs take one step
             * (the 16-lane C build since ae49a6b; the portable step since
             * the seventy-seventh session, together with the list's room
             * made once a run below: PoCL's rain 50k and pile 50k 0.99 of
             * the frame time, its rain 10k level, the 8-lane C build's
             * rain 0.97) */
            k1 = k1 > k0 ? k1 : k0;
        }
#if defined(BP_ONCE_BITS)
        bp_u32 left = k1 - k0;
#define BP_ONCE_STEP(s) \
    bp_once_step_bits(L, ln, spos, sposy, sorted, (s), left, xi, yi, reach2, b, w, past)
#define BP_ONCE_NEXT(s) ((s) += BP_LANES, left -= BP_LANES)
#define BP_ONCE_LEFT_CLAMP() (left = k1 - s < 255u ? k1 - s : 255u)
#else
        bp_vi left = BP_VASI(BP_VUSPLAT(k1 - k0));
#define BP_ONCE_STEP(s) \
    bp_once_step(L, ln, spos, sposy, sorted, (s), left, xi, yi, reach2, b, w, past)
#define BP_ONCE_NEXT(s) ((s) += BP_LANES, left = left - BP_LANES)
#define BP_ONCE_LEFT_CLAMP()
#endif
        bp_u32 s = k0;
        /* The list's room for the whole run made once before its steps:
         * the run's steps add at most k1 - k0 pairs, and the last one
         * stores its BP_LANES words at most k1 - k0 - 1 past *ln (or at
         * *ln, for an empty run). Checked before each step, the call of
         * bp_once_work_off sat inside the steps' loop: the C build's rain
         * 10k 0.97-0.98 of the frame time without it, the 50k worlds 0.97
         * (sixty-ninth session). Alone it was level in PoCL's build and
         * the 8-lane C build; with the empty runs' step, above. The run
         * that fits the list as it is tested first, so most runs take one
         * test, not two (eighty-sixth session). It is marked likely (one
         * run in some 270 finds the list full), and the call's path has its own
         * copy of the steps: PoCL's LLVM had kept the values live across
         * the call (the ball's splats, the rows, the span) on the stack in
         * every ball's set-up and row, and now stores them on the call's
         * path only: its steps kernel 5.2% fewer instructions on the
         * landed rain 10k (the ball's set-up 25 -> 17, a row 15 -> 11),
         * PoCL's frame 0.969 (rain 10k) and 0.955 (pile 50k) as long; the
         * C builds level (eighty-ninth session). */
        if (BP_LIKELY(*ln + (k1 - k0) <= BP_PAIRS_CAP - BP_LANES)) {
            do {
                BP_ONCE_STEP(s);
                BP_ONCE_NEXT(s);
            } while (s < k1);
        } else if (k1 - k0 <= BP_PAIRS_CAP - 2u * BP_LANES) {
            bp_once_work_off(L, *ln, P, A, S, fold_i);
            *ln = 0u;
            do {
                BP_ONCE_STEP(s);
                BP_ONCE_NEXT(s);
            } while (s < k1);
        } else { /* a run longer than the list: its room made step by step */
            do {
                if (*ln > BP_PAIRS_CAP - BP_LANES) {
                    bp_once_work_off(L, *ln, P, A, S, fold_i);
                    *ln = 0u;
                }
                BP_ONCE_LEFT_CLAMP();
                BP_ONCE_STEP(s);
                BP_ONCE_NEXT(s);
            } while (s < k1);
        }
#undef BP_ONCE_STEP
#undef BP_ONCE_NEXT
#undef BP_ONCE_LEFT_CLAMP
        if (--rows == 0u)
            break;
        cs += gw;
        k0 = cs[0];
        k1 = cs[span];
    }
}

/* One past the furthest slot the windows of block S's nb balls reach
 * (the end of the last cell of the furthest window), at most b: the sums
 * to clear before the block's pairs are folded. A window's last cell is
 * after its ball's own, so this is past the block's last slot too. */
BP_FN bp_u32 bp_slot_block_reach(const bp_step_params *P, const bp_block_arrays *A,
                                 const bp_slot_block *S, bp_u32 nb, bp_u32 b)
{
    bp_i32 c = 0;
    for (bp_u32 w = 0u; w < nb; w++) {
        bp_i32 e = S->W.y1[w] * P->gw + S->W.x1[w] + 1;
        c = c > e ? c : e;
    }
    bp_u32 k = A->cell_start[c];
    return k < b ? k : b;
}

/* The ghosts of a range of slots that begins at a (0 < a < n): every ball
 * whose window can reach slot a's cell (*ca), in the cells before it up to
 * wr rows and columns back (a window reaches floor(x' / cell) for x' = x -
 * reach, which is at most reach / cell, + the rounding of x', well under
 * 0.05 cells, below x / cell; reach the fastest largest ball's). Returns
 * the slot they begin at; *rm is that reach and a little more, for
 * bp_ghost_pick. */
BP_FN bp_u32 bp_ghost_first(const bp_step_params *P, BP_GLOBAL const bp_u32 *cell_start,
                            BP_GLOBAL const float *spos, float vmax, bp_u32 a, bp_i32 *ca,
                            float *rm)
{
    float reach = bp_reach(P, P->rmax, vmax, vmax);
    bp_i32 wr = (bp_i32)BP_FMIN(reach * P->inv_cell + 0.05f, (float)BP_MAX_REACH) + 1;
    *ca = (bp_i32)bp_cell_of(P, spos[a], spos[P->ystride + a]);
    *rm = reach * 1.001f + 0.01f;
    bp_i32 c0 = *ca - wr * P->gw - wr;
    return cell_start[c0 > 0 ? c0 : 0];
}

/* Only the ghosts whose window's last cell is ca or after can have a
 * partner at a or after (the cells before it hold only slots before a):
 * about one in four on the rain. The slots from *g on whose balls' windows
 * could end there, by their positions alone with the reach rm (a window's
 * last cell grows with its reach, and rm is over every ball's), BP_LANES
 * slots at a time from the positions in grid order, into K (its room
 * BP_BLOCK + BP_LANES), until a, or until K holds more than BP_BLOCK -
 * BP_LANES; *g is left where the next call goes on. Returns how many. */
BP_FN bp_u32 bp_ghost_pick(const bp_step_params *P, BP_GLOBAL const float *spos, bp_u32 *g,
                           bp_u32 a, bp_i32 ca, float rm, bp_u32 *K)
{
    bp_u32 ng = 0u;
    for (; *g < a && ng + BP_LANES <= BP_BLOCK; *g += BP_LANES) {
        bp_vu k = BP_VUSPLAT(*g) + BP_LANE_IDS;
        bp_vf x = BP_VLOAD(spos + *g), y = BP_VLOAD(spos + P->ystride + *g);
        bp_vi e = bp_vgrid_coord(BP_GY(x, y) + rm, P->inv_cell, P->gh) * P->gw +
                  bp_vgrid_coord(BP_GX(x, y) + rm, P->inv_cell, P->gw);
        BP_VCOMPRESS(K, ng, (e >= ca) & BP_VASI(k < BP_VUSPLAT(a)), k);
    }
    return ng;
}

/* Pass 3 for the balls in slots a..b-1 of the grid's order, each pair
 * evaluated once. */
BP_FN void bp_once_contacts(const bp_step_params *P, const bp_block_arrays *A, float vmax,
                            bp_u32 a, bp_u32 b)
{
    bp_once_list L;
    bp_slot_block S;
    bp_once_src R;
    R.cell_start = A->cell_start;
    R.sorted = A->sorted;
    R.spos = A->spos;
    R.sposy = A->spos + P->ystride;
    R.gw = (bp_u32)P->gw;
    bp_u32 z = a, ln = 0u; /* the sums cleared up to slot z; the pairs in L */
    if (a > 0u && a < b) {
        /* The ghosts (bp_ghost_first), picked by position (bp_ghost_pick),
         * only those filled into a block, by their slots, then picked by
         * their windows and only those screened: the same pairs.
         * (Screening only the picked: the rain 10k 0.99 of the frame time,
         * PoCL's 0.97-0.99, forty-third session. Until the forty-ninth
         * every ball of the rows before was filled in, four in five of
         * them for nothing: the rain 10k 0.986-0.990 of the frame time,
         * the larger worlds level; docs/benchmarks.md.) */
        bp_i32 ca;
        float rm;
        bp_u32 gk[BP_BLOCK + BP_LANES];
        for (bp_u32 g = bp_ghost_first(P, A->cell_start, A->spos, vmax, a, &ca, &rm); g < a;) {
            bp_u32 ng = bp_ghost_pick(P, A->spos, &g, a, ca, rm, gk);
            if (ng == 0u)
                continue;
            bp_slot_block_fill_at(P, A, vmax, gk, ng, &S);
            bp_once_zero(A, &z, bp_slot_block_reach(P, A, &S, ng, b));
            bp_u32 hk[BP_BLOCK + BP_LANES], nh = 0u;
            bp_u32 w = 0u;
            for (; w + BP_LANES <= ng; w += BP_LANES) {
                bp_vi e = BP_VASI(BP_VLOADU((const bp_u32 *)(S.W.y1 + w))) * P->gw +
                          BP_VASI(BP_VLOADU((const bp_u32 *)(S.W.x1 + w)));
                BP_VCOMPRESS(hk, nh, e >= ca, BP_VUSPLAT(w) + BP_LANE_IDS);
            }
            for (; w < ng; w++)
                if (S.W.y1[w] * P->gw + S.W.x1[w] >= ca)
                    hk[nh++] = w;
            for (bp_u32 q = 0u; q < nh; q++)
                bp_once_screen(P, A, &R, &L, &ln, &S, hk[q], a, b, b, 0, 0, 0);
            bp_once_work_off(&L, ln, P, A, &S, 0);
            ln = 0u;
        }
    }
    for (bp_u32 g = a; g < b; g += BP_BLOCK) {
        bp_u32 g1 = b - g > BP_BLOCK ? g + BP_BLOCK : b;
        bp_slot_block_fill(P, A, vmax, g, g1, &S);
        bp_u32 e = bp_slot_block_reach(P, A, &S, g1 - g, b);
        bp_once_zero(A, &z, e > g1 ? e : g1);
        /* Two calls, not one with past = e >= b: each inlined copy takes
         * past as a constant, so the steps of the blocks that cannot reach
         * b have no compare for it and no branch on past either. The runs
         * end where their rows do (hi BP_ONCE_ALL, a constant the minimum
         * with a row's end folds away: every cell_start is at most n). */
        if (e < b) /* no window of the block reaches slot b */
            for (bp_u32 k = g; k < g1; k++)
                bp_once_screen(P, A, &R, &L, &ln, &S, k, k + 1u, BP_ONCE_ALL, b, 1, 0, 1);
        else
            for (bp_u32 k = g; k < g1; k++)
                bp_once_screen(P, A, &R, &L, &ln, &S, k, k + 1u, BP_ONCE_ALL, b, 1, 1, 1);
        bp_once_work_off(&L, ln, P, A, &S, 1);
        ln = 0u;
    }
}

/* ---- Segment-grid cells in lanes ------------------------------------------ */

/* The segments listed in a box of segment-grid cells, one per lane and
 * step, in bp_move_static's order: the rows y0..y1, and in each row the
 * cells x0..x1, whose lists are one run of the segment list. */
typedef struct bp_vseg_iter {
    bp_vi x0, x1, y0, span; /* each lane's box; span = y1 - y0, -1 for no box */
    bp_vu k, end;           /* the run of the current row; k the next segment */
    bp_i32 row, rows;       /* the current row (from each lane's y0), of rows */
    bp_u32 left;            /* steps left in it: its longest run */
} bp_vseg_iter;

BP_FN void bp_vseg_begin(bp_vseg_iter *it, bp_vi on, bp_vi x0, bp_vi x1, bp_vi y0, bp_vi y1)
{
    it->x0 = x0;
    it->x1 = x1;
    it->y0 = y0;
    it->span = (on & (y1 - y0)) | ~on;
    it->rows = bp_vhmax(it->span) + 1;
    it->row = -1;
    it->left = 0u;
    it->k = it->end = BP_VUSPLAT(0u);
}

/* The run of row it->row of each lane's box into it->k .. it->end (empty
 * in the lanes whose box has fewer rows). */
BP_FN void bp_vseg_row(const bp_step_params *P, BP_GLOBAL const bp_u32 *seg_start,
                       bp_vseg_iter *it)
{
    bp_vi in = it->span >= it->row; /* off: cell 0, read and dropped */
    bp_vi row = in & ((it->y0 + it->row) * P->sgw);
    bp_i32 ka[BP_LANES], kb[BP_LANES];
    bp_vi ia = row + (in & it->x0), ib = row + (in & (it->x1 + 1));
    BP_VSTORE(ia, ka);
    BP_VSTORE(ib, kb);
    it->k = BP_VGATHERU(seg_start, ka);
    it->end = BP_VGATHERU(seg_start, kb);
}

/* The next step: *on the lanes with a segment in it, seg[] their segments
 * (segment 0 in the others). 0 when no lane has one left. */
BP_FN int bp_vseg_next(const bp_step_params *P, BP_GLOBAL const bp_u32 *seg_start,
                       BP_GLOBAL const bp_u32 *seg_list, bp_vseg_iter *it, bp_vi *on,
                       bp_u32 *seg)
{
    while (it->left == 0u) {
        if (++it->row >= it->rows)
            return 0;
        bp_vseg_row(P, seg_start, it);
        bp_vu d = it->end - it->k; /* a run's length: under 2^31 */
        it->left = (bp_u32)bp_vhmax(BP_VASI(d));
    }
    *on = it->k < it->end;
    bp_u32 kk[BP_LANES];
    bp_vu k = BP_VASU(*on) & it->k;
    BP_VSTORE(k, kk);
    bp_vu sv = BP_VGATHERU(seg_list, kk);
    BP_VSTORE(sv, seg);
    it->k = it->k + BP_VUSPLAT(1u);
    it->left--;
    return 1;
}

/* bp_swept_cells' box of cells, lane by lane: columns b[0]..b[1], rows
 * b[2]..b[3]. */
BP_FN void bp_vswept_box(const bp_step_params *P, bp_vf px, bp_vf py, bp_vf Dx, bp_vf Dy,
                         bp_vf r, bp_vi b[4])
{
    b[0] = bp_vgrid_coord(BP_VMIN(px, px + Dx) - r, P->inv_scell, P->sgw);
    b[1] = bp_vgrid_coord(BP_VMAX(px, px + Dx) + r, P->inv_scell, P->sgw);
    b[2] = bp_vgrid_coord(BP_VMIN(py, py + Dy) - r, P->inv_scell, P->sgh);
    b[3] = bp_vgrid_coord(BP_VMAX(py, py + Dy) + r, P->inv_scell, P->sgh);
}

/* bp_swept_cells, lane by lane, to begin an iterator for the lanes in on. */
BP_FN void bp_vswept_cells(const bp_step_params *P, bp_vseg_iter *it, bp_vi on, bp_vf px,
                           bp_vf py, bp_vf Dx, bp_vf Dy, bp_vf r)
{
    bp_vi b[4];
    bp_vswept_box(P, px, py, Dx, Dy, r, b);
    bp_vseg_begin(it, on, b[0], b[1], b[2], b[3]);
}

/* The gaps' part of bp_vsegments_near: the lanes whose box reaches past
 * the gap of the ball's own cell (every lane where the grid has no gaps),
 * a superset of the lanes near a segment; b the boxes. */
BP_FN bp_vi bp_vsegments_gap(const bp_step_params *P, const bp_block_arrays *A, bp_vf px,
                             bp_vf py, const bp_vi b[4])
{
    if (!A->seg_gap)
        return ~BP_VI0;
    bp_vi cx = bp_vgrid_coord(px, P->inv_scell, P->sgw);
    bp_vi cy = bp_vgrid_coord(py, P->inv_scell, P->sgh);
    bp_vi k = bp_vmaxi(bp_vmaxi(cx - b[0], b[1] - cx), bp_vmaxi(cy - b[2], b[3] - cy));
    bp_vi cell = cy * P->sgw + cx;
#if !defined(__OPENCL_VERSION__) && BP_LANES == 8
    /* AVX2: one gather instruction, as bp_vsplit_n's. Lane by lane, GCC
     * took the eight cell numbers out of the vector into general
     * registers, spilled half of them and loaded and inserted each gap:
     * some 40 of pass 5's 330 instructions a group of the rain (the rain
     * 10k 0.99 of the frame time, eighty-eighth session; PoCL's build of
     * the same gather level, so it keeps the loads) */
    return (bp_vi)_mm256_i32gather_epi32((const int *)(const void *)A->seg_gap, (__m256i)cell,
                                         4) <= k;
#else
    /* unsigned cell numbers: as signed words GCC sign-extended each lane's
     * before its load */
    bp_u32 c[BP_LANES];
    bp_vu ucell = BP_VASU(cell);
    BP_VSTORE(ucell, c);
    return BP_VASI(BP_VGATHERU(A->seg_gap, c)) <= k;
#endif
}

/* bp_segments_near, lane by lane: whether the segment grid holds any
 * segment in the cells of each lane's swept box. Each lane walks its own
 * rows (the balls of a group lie anywhere in the world, so the rows of all
 * lanes together span most of it): row y0 + k in step k, as many steps as
 * the tallest box has rows. First, where the grid has its gaps, the lanes
 * whose box lies within the gap of the ball's own cell (the box reaches
 * no further than k cells from it, and the nearest segment is further)
 * are found empty with one read, and only the others walk their rows:
 * most groups of balls, away from the lines, read no row at all. */
BP_FN_SLOW bp_vi bp_vsegments_near(const bp_step_params *P, const bp_block_arrays *A, bp_vf px,
                                   bp_vf py, bp_vf Dx, bp_vf Dy, bp_vf r)
{
    bp_vi b[4];
    bp_vswept_box(P, px, py, Dx, Dy, r, b);
    bp_vi walk = bp_vsegments_gap(P, A, px, py, b);
    if (!BP_VANY(walk))
        return BP_VI0;
    bp_vseg_iter it;
    bp_vseg_begin(&it, walk, b[0], b[1], b[2], b[3]);
    bp_vi near_ = BP_VI0;
    for (it.row = 0; it.row < it.rows; it.row++) {
        bp_vseg_row(P, A->seg_start, &it);
        near_ |= it.k != it.end;
    }
    return near_;
}

/* bp_cap_speed, lane by lane. */
BP_FN void bp_vcap_speed(float cap, bp_vf *vx, bp_vf *vy)
{
    bp_vf s2 = *vx * *vx + *vy * *vy, zero = BP_VSPLAT(0.0f);
    float cap2 = cap * cap;
    /* nearly always: no square root, no division. One compare finds the
     * lanes to change: NaN and infinity fail s2 <= cap^2 as the lanes
     * over the cap do (the cap is at most BP_MAX_SPEED_CAP, so its square
     * is finite), where three compares and two ors had (eighty-sixth
     * session) */
    if (!BP_VANY(~(s2 <= cap2)))
        return;
    bp_vi bad = ~(s2 == s2) | (s2 == BP_VSPLAT(INFINITY));
    bp_vi over = s2 > cap2;
    bp_vf k = cap / BP_VSQRT(s2);
    *vx = BP_VSEL(bad, zero, BP_VSEL(over, *vx * k, *vx));
    *vy = BP_VSEL(bad, zero, BP_VSEL(over, *vy * k, *vy));
}

/* Lanes of a, b, c, d into pa[k], pb[k], pc[k], pd[k], for the lanes k
 * whose skip[k] is 0 (the others take the one-ball function, which reads
 * only its own ball's slots of these arrays). */
BP_FN void bp_vstore_lanes(bp_vf a, bp_vf b, bp_vf c, bp_vf d, const bp_i32 *skip,
                           BP_GLOBAL float *pa, BP_GLOBAL float *pb, BP_GLOBAL float *pc,
                           BP_GLOBAL float *pd)
{
    float l[4][BP_LANES];
    BP_VSTORE(a, l[0]);
    BP_VSTORE(b, l[1]);
    BP_VSTORE(c, l[2]);
    BP_VSTORE(d, l[3]);
    for (bp_u32 k = 0u; k < BP_LANES; k++) {
        if (!skip[k]) {
            pa[k] = l[0][k];
            pb[k] = l[1][k];
            pc[k] = l[2][k];
            pd[k] = l[3][k];
        }
    }
}

/* Worlds with at most this many lines test every line in lanes before
 * sending a ball near one to bp_move_static (bp_vlines_far). Measured on
 * 9,600 balls raining on random lines (docs/benchmarks.md): 0.79x the
 * time at 32 lines, 0.82x at 64, 0.94x at 128, 1.18x at 256. */
#define BP_LINES_IN_LANES 128u

/* The lanes whose move is far from every line of the world: for each line
 * the test bp_segments_touch makes on the lines listed near the ball
 * (bp_segment_closest from the move's midpoint against the same limit, the
 * same float operations lane by lane), so a lane found far here is one
 * for which bp_segments_touch finds nothing. */
BP_FN bp_vi bp_vlines_far(const bp_step_params *P, const bp_block_arrays *A, bp_vf px, bp_vf py,
                          bp_vf Dx, bp_vf Dy, bp_vf r)
{
    bp_vf zero = BP_VSPLAT(0.0f), one = BP_VSPLAT(1.0f);
    bp_vf mx = px + 0.5f * Dx, my = py + 0.5f * Dy;
    bp_vf reach = r + 0.5f * (BP_VMAX(Dx, -Dx) + BP_VMAX(Dy, -Dy));
    bp_vf lim = 1.01f * reach + 1e-5f * (P->width + P->height);
    bp_vf lim2 = lim * lim;
    bp_vi far_ = ~BP_VI0;
    /* the group's box: every lane's mid-point +- its lim within it; a line
     * whose own box lies a pixel or more outside it along either axis is
     * further than lim from every lane (the vector test below would call
     * them far, or near by its rounding, which only sends a lane to the
     * slow lanes), so its test is skipped: most of the rain's 8 lines for
     * most groups */
    float bx0 = bp_vhminf(mx - lim) - 1.0f, bx1 = bp_vhmaxf(mx + lim) + 1.0f;
    float by0 = bp_vhminf(my - lim) - 1.0f, by1 = bp_vhmaxf(my + lim) + 1.0f;
    for (bp_u32 s = 0u; s < P->nlines; s++) {
        float ax = A->lx1[s], ay = A->ly1[s];
        float qx = A->lx2[s], qy = A->ly2[s];
        if (BP_FMAX(ax, qx) < bx0 || BP_FMIN(ax, qx) > bx1 || BP_FMAX(ay, qy) < by0 ||
            BP_FMIN(ay, qy) > by1)
            continue;
        float ex = qx - ax, ey = qy - ay;
        float L2 = ex * ex + ey * ey;
        bp_vf t = zero;
        if (L2 > 0.0f)
            t = ((mx - ax) * ex + (my - ay) * ey) / L2;
        t = BP_VMIN(BP_VMAX(t, zero), one);
        bp_vf dx = mx - (ax + ex * t), dy = my - (ay + ey * t);
        far_ &= dx * dx + dy * dy > lim2;
    }
    return far_;
}

/* ---- bp_move_static in lanes ---------------------------------------------
 *
 * The balls that bp_block_move cannot finish in its first lanes (a wall in
 * reach, or a line near) are collected and moved BP_LANES at a time by
 * bp_vmove_static: bp_move_static's steps lane by lane, each with the same
 * float operations in the same order (its branches are selects), and the
 * segments of each lane's cells visited in its order, so each lane ends
 * with the bits bp_move_static gives that ball (physics-lanes-static
 * compares them on random balls near random lines and walls). */

/* Segment s's end points, lane by lane. */
BP_FN void bp_vsegment(const bp_block_arrays *A, const bp_u32 *s, bp_vf *ax, bp_vf *ay,
                       bp_vf *bx, bp_vf *by)
{
    *ax = BP_VGATHER(A->lx1, s);
    *ay = BP_VGATHER(A->ly1, s);
    *bx = BP_VGATHER(A->lx2, s);
    *by = BP_VGATHER(A->ly2, s);
}

/* bp_segment_closest in lanes. */
BP_FN bp_vf bp_vsegment_closest(bp_vf px, bp_vf py, bp_vf ax, bp_vf ay, bp_vf bx, bp_vf by,
                                bp_vf *qx, bp_vf *qy)
{
    bp_vf zero = BP_VSPLAT(0.0f);
    bp_vf ex = bx - ax, ey = by - ay;
    bp_vf L2 = ex * ex + ey * ey;
    bp_vf t = BP_VSEL(L2 > zero, ((px - ax) * ex + (py - ay) * ey) / L2, zero);
    t = BP_VMIN(BP_VMAX(t, zero), BP_VSPLAT(1.0f));
    *qx = ax + ex * t;
    *qy = ay + ey * t;
    bp_vf dx = px - *qx, dy = py - *qy;
    return dx * dx + dy * dy;
}

/* bp_segments_touch for the lanes in on (the others 0). */
BP_FN bp_vi bp_vsegments_touch(const bp_step_params *P, const bp_block_arrays *A, bp_vi on,
                               bp_vf px, bp_vf py, bp_vf Dx, bp_vf Dy, bp_vf r)
{
    bp_vseg_iter it;
    bp_vswept_cells(P, &it, on, px, py, Dx, Dy, r);
    bp_vf mx = px + 0.5f * Dx, my = py + 0.5f * Dy;
    bp_vf reach = r + 0.5f * (BP_VMAX(Dx, -Dx) + BP_VMAX(Dy, -Dy));
    bp_vf lim = 1.01f * reach + 1e-5f * (P->width + P->height);
    bp_vf lim2 = lim * lim;
    bp_vi near_ = BP_VI0, son;
    bp_u32 s[BP_LANES];
    while (BP_VANY(on & ~near_) && bp_vseg_next(P, A->seg_start, A->seg_list, &it, &son, s)) {
        bp_vf ax, ay, bx, by, qx, qy;
        bp_vsegment(A, s, &ax, &ay, &bx, &by);
        near_ |= son & ~(bp_vsegment_closest(mx, my, ax, ay, bx, by, &qx, &qy) > lim2);
    }
    return near_ & on;
}

/* bp_pushout_segment for the lanes in on. */
BP_FN void bp_vpushout_segment(bp_vi on, bp_vf *px, bp_vf *py, bp_vf r, bp_vf ax, bp_vf ay,
                               bp_vf bx, bp_vf by)
{
    bp_vf qx, qy;
    bp_vf d2 = bp_vsegment_closest(*px, *py, ax, ay, bx, by, &qx, &qy);
    bp_vi act = on & ~(d2 >= r * r);
    if (!BP_VANY(act))
        return;
    bp_vf dx = *px - qx, dy = *py - qy;
    bp_vf d = BP_VSQRT(d2);
    bp_vf ex = bx - ax, ey = by - ay;
    bp_vf L2 = ex * ex + ey * ey;
    bp_vf L = BP_VSQRT(L2);
    bp_vi off = d > 1e-6f * r, along = ~off & (L2 > BP_VSPLAT(0.0f));
    bp_vf nx = BP_VSEL(off, qx + dx / d * r, BP_VSEL(along, qx - ey / L * r, *px));
    bp_vf ny = BP_VSEL(off, qy + dy / d * r, BP_VSEL(along, qy + ex / L * r, qy - r));
    *px = BP_VSEL(act, nx, *px);
    *py = BP_VSEL(act, ny, *py);
}

/* bp_sweep_point in lanes, up to its normal: where it hits, the normal is
 * bp_vpoint_normal of (*hx, *hy), the centre's offset from the point at
 * the moment of contact (both divisions left to the sweep's winner). */
BP_FN bp_vf bp_vsweep_point(bp_vf wx, bp_vf wy, bp_vf Dx, bp_vf Dy, bp_vf r, bp_vf *hx,
                            bp_vf *hy)
{
    bp_vf zero = BP_VSPLAT(0.0f);
    bp_vf b = wx * Dx + wy * Dy;
    bp_vi miss = b >= -BP_GRAZE * r * r;
    bp_vf c = wx * wx + wy * wy - r * r;
    bp_vi apart = c > zero;
    bp_vf a = Dx * Dx + Dy * Dy;
    bp_vf disc = b * b - a * c;
    bp_vf t = BP_VSEL(apart, c / (BP_VSQRT(disc) - b), zero);
    miss |= apart & ((disc < zero) | (t > BP_VSPLAT(1.0f)));
    *hx = wx + Dx * t;
    *hy = wy + Dy * t;
    return BP_VSEL(miss, BP_VSPLAT(BP_NO_HIT), t);
}

/* bp_sweep_point's normal from its (hx, hy), the lanes in pt (the others
 * keep (*nx, *ny)). */
BP_FN void bp_vpoint_normal(bp_vi pt, bp_vf Dx, bp_vf Dy, bp_vf *nx, bp_vf *ny)
{
    if (!BP_VANY(pt))
        return;
    bp_vf hx = *nx, hy = *ny;
    bp_vf l = BP_VSQRT(hx * hx + hy * hy);
    bp_vf dl = BP_VSQRT(Dx * Dx + Dy * Dy);
    bp_vi lpos = l > BP_VSPLAT(0.0f);
    *nx = BP_VSEL(pt, BP_VSEL(lpos, hx / l, -Dx / dl), hx);
    *ny = BP_VSEL(pt, BP_VSEL(lpos, hy / l, -Dy / dl), hy);
}

/* bp_sweep_segment in lanes, up to its normal: *pt the lanes whose contact
 * is with an end point, their (*nx, *ny) for bp_vpoint_normal; the others'
 * the normal itself. */
BP_FN bp_vf bp_vsweep_segment(bp_vf px, bp_vf py, bp_vf Dx, bp_vf Dy, bp_vf r, bp_vf ax,
                              bp_vf ay, bp_vf bx, bp_vf by, bp_vf *nx, bp_vf *ny, bp_vi *pt)
{
    bp_vf zero = BP_VSPLAT(0.0f), one = BP_VSPLAT(1.0f);
    bp_vf ex = bx - ax, ey = by - ay;
    bp_vf L2 = ex * ex + ey * ey;
    bp_vf L = BP_VSQRT(L2);
    bp_vf ux = ex / L, uy = ey / L;
    bp_vf lx = -uy, ly = ux;
    bp_vf s0 = (px - ax) * lx + (py - ay) * ly;
    bp_vf dn = Dx * lx + Dy * ly;
    bp_vf side = BP_VSEL(s0 > zero, one, BP_VSEL(s0 < zero, -one, BP_VSEL(dn > zero, -one, one)));
    bp_vf dist0 = s0 * side, approach = -dn * side;
    bp_vf t = BP_VSEL(dist0 > r, (dist0 - r) / approach, zero);
    bp_vf u = (px + Dx * t - ax) * ux + (py + Dy * t - ay) * uy;
    bp_vi body = (L2 > 1e-12f) & (approach > BP_GRAZE * r) & (t <= one) & (u >= zero) & (u <= L);
    bp_vf h1x, h1y, h2x, h2y;
    bp_vf t1 = bp_vsweep_point(px - ax, py - ay, Dx, Dy, r, &h1x, &h1y);
    bp_vf t2 = bp_vsweep_point(px - bx, py - by, Dx, Dy, r, &h2x, &h2y);
    bp_vi second = t2 < t1;
    *nx = BP_VSEL(body, lx * side, BP_VSEL(second, h2x, h1x));
    *ny = BP_VSEL(body, ly * side, BP_VSEL(second, h2y, h1y));
    *pt = ~body;
    return BP_VSEL(body, t, BP_VSEL(second, t2, t1));
}

/* bp_sweep_box in lanes. */
BP_FN void bp_vsweep_box(const bp_step_params *P, bp_vf px, bp_vf py, bp_vf Dx, bp_vf Dy,
                         bp_vf r, bp_vf *best, bp_vf *nx, bp_vf *ny)
{
    bp_vf zero = BP_VSPLAT(0.0f), one = BP_VSPLAT(1.0f);
    bp_vi neg = Dx < zero, pos = Dx > zero;
    bp_vf t = BP_VSEL(neg, BP_VMAX(px - r, zero) / -Dx, BP_VMAX(P->width - r - px, zero) / Dx);
    bp_vi take = (neg | pos) & (t < *best);
    *best = BP_VSEL(take, t, *best);
    *nx = BP_VSEL(take, BP_VSEL(neg, one, -one), *nx);
    *ny = BP_VSEL(take, zero, *ny);
    neg = Dy < zero;
    pos = Dy > zero;
    t = BP_VSEL(neg, BP_VMAX(py - r, zero) / -Dy, BP_VMAX(P->height - r - py, zero) / Dy);
    take = (neg | pos) & (t < *best);
    *best = BP_VSEL(take, t, *best);
    *nx = BP_VSEL(take, zero, *nx);
    *ny = BP_VSEL(take, BP_VSEL(neg, one, -one), *ny);
}

/* bp_sweep_segments for the lanes in on. */
BP_FN void bp_vsweep_segments(const bp_step_params *P, const bp_block_arrays *A, bp_vi on,
                              bp_vf px, bp_vf py, bp_vf Dx, bp_vf Dy, bp_vf r, bp_vf *best,
                              bp_vf *nx, bp_vf *ny)
{
    bp_vseg_iter it;
    bp_vswept_cells(P, &it, on, px, py, Dx, Dy, r);
    bp_vi son, pt = BP_VI0;
    bp_u32 s[BP_LANES];
    while (bp_vseg_next(P, A->seg_start, A->seg_list, &it, &son, s)) {
        bp_vf ax, ay, bx, by, sx, sy;
        bp_vi spt;
        bp_vsegment(A, s, &ax, &ay, &bx, &by);
        bp_vf t = bp_vsweep_segment(px, py, Dx, Dy, r, ax, ay, bx, by, &sx, &sy, &spt);
        bp_vi take = son & (t < *best);
        *best = BP_VSEL(take, t, *best);
        *nx = BP_VSEL(take, sx, *nx);
        *ny = BP_VSEL(take, sy, *ny);
        pt = (take & spt) | (~take & pt);
    }
    bp_vpoint_normal(pt, Dx, Dy, nx, ny);
}

/* Lanes of a, b, c, d into pa[s I[k]], pb[s I[k]], pc[s I[k]], pd[s I[k]]
 * (s = stride) for the lanes k in `on`. */
BP_FN void bp_vstore_at(bp_vf a, bp_vf b, bp_vf c, bp_vf d, bp_vi on, const bp_u32 *I,
                        bp_u32 stride, BP_GLOBAL float *pa, BP_GLOBAL float *pb,
                        BP_GLOBAL float *pc, BP_GLOBAL float *pd)
{
    float l[4][BP_LANES];
    bp_i32 lo[BP_LANES];
    BP_VSTORE(a, l[0]);
    BP_VSTORE(b, l[1]);
    BP_VSTORE(c, l[2]);
    BP_VSTORE(d, l[3]);
    BP_VSTORE(on, lo);
    for (int k = 0; k < BP_LANES; k++) {
        if (lo[k]) {
            bp_u32 o = stride * I[k];
            pa[o] = l[0][k];
            pb[o] = l[1][k];
            pc[o] = l[2][k];
            pd[o] = l[3][k];
        }
    }
}

/* bp_move_static for balls I[0 .. BP_LANES-1], those of the lanes in on
 * (the others, any ball, are read and not written). */
BP_FN_SLOW void bp_vmove_static(const bp_step_params *P, const bp_block_arrays *A, const bp_u32 *I,
                                bp_vi on)
{
    const float h = P->h, rest = P->rest_speed;
    const bp_vf zero = BP_VSPLAT(0.0f), one = BP_VSPLAT(1.0f);
    bp_vu ids = BP_VLOADU(I);
    bp_vf share = BP_VITOF(BP_VASI((ids * BP_ROUGH_HASH) >> 8)) * (1.0f / 16777216.0f);
    bp_vf ri = BP_VGATHER_OR(P->r0, A->r, I);
    ri = ri + ri * (BP_ROUGH * share);
    bp_vf px = BP_VMIN(BP_VMAX(BP_VGATHER(A->x, I), ri), P->width - ri);
    bp_vf py = BP_VMIN(BP_VMAX(BP_VGATHER(A->y, I), ri), P->height - ri);
    bp_vf ux, uy, qx, qy;
    bp_vgather_records(A->sum, I, &ux, &uy, &qx, &qy);
    bp_vf vx0 = BP_VGATHER(A->vx, I), vy0 = BP_VGATHER(A->vy, I);
    bp_vf Dx = qx + ux * h, Dy = qy + uy * h;
    bp_vi lines = BP_VI0;
    if (P->nlines > 0u) {
        lines = on & bp_vsegments_near(P, A, px, py, Dx, Dy, ri);
        if (BP_VANY(lines))
            lines = bp_vsegments_touch(P, A, lines, px, py, Dx, Dy, ri);
    }
    if (BP_VANY(lines)) { /* first leave any segment the ball overlaps */
        bp_vseg_iter it;
        bp_vseg_begin(&it, lines, bp_vgrid_coord(px - ri, P->inv_scell, P->sgw),
                      bp_vgrid_coord(px + ri, P->inv_scell, P->sgw),
                      bp_vgrid_coord(py - ri, P->inv_scell, P->sgh),
                      bp_vgrid_coord(py + ri, P->inv_scell, P->sgh));
        bp_vi son;
        bp_u32 s[BP_LANES];
        while (bp_vseg_next(P, A->seg_start, A->seg_list, &it, &son, s)) {
            bp_vf ax, ay, bx, by;
            bp_vsegment(A, s, &ax, &ay, &bx, &by);
            bp_vpushout_segment(son, &px, &py, ri, ax, ay, bx, by);
        }
        px = BP_VSEL(lines, BP_VMIN(BP_VMAX(px, ri), P->width - ri), px);
        py = BP_VSEL(lines, BP_VMIN(BP_VMAX(py, ri), P->height - ri), py);
    }
    bp_vf left = one;
    bp_vi go = on;
    for (int bounce = 0; bounce < BP_MAX_BOUNCES; bounce++) {
        bp_vf t = BP_VSPLAT(BP_NO_HIT), nx = zero, ny = zero;
        bp_vsweep_box(P, px, py, Dx, Dy, ri, &t, &nx, &ny);
        bp_vi segs = bounce > 0 && P->nlines > 0u ? go : go & lines;
        if (BP_VANY(segs))
            bp_vsweep_segments(P, A, segs, px, py, Dx, Dy, ri, &t, &nx, &ny);
        bp_vi done = go & (t > one);
        px = BP_VSEL(done, px + Dx, px);
        py = BP_VSEL(done, py + Dy, py);
        go &= ~done;
        if (!BP_VANY(go))
            break;
        px = BP_VSEL(go, px + Dx * t, px);
        py = BP_VSEL(go, py + Dy * t, py);
        bp_vf vn = ux * nx + uy * ny;
        bp_vi refl = go & (vn < zero);
        bp_vf brought = -(vx0 * nx + vy0 * ny);
        bp_vi bnc = -vn > rest;
        if (rest > 0.0f)
            bnc &= brought > rest;
        bp_vf k_ = BP_VSEL(bnc, BP_VSPLAT(1.0f + P->e), one) * vn;
        ux = BP_VSEL(refl, ux - k_ * nx, ux);
        uy = BP_VSEL(refl, uy - k_ * ny, uy);
        if (rest > 0.0f) { /* resting: Coulomb friction against the sliding part */
            bp_vf un = ux * nx + uy * ny;
            bp_vf tx = ux - un * nx, ty = uy - un * ny;
            bp_vf tl = BP_VSQRT(tx * tx + ty * ty);
            bp_vi slide = refl & ~bnc & (tl > zero);
            bp_vf f = BP_VMIN(tl, -BP_WALL_MU * vn) / tl;
            ux = BP_VSEL(slide, ux - f * tx, ux);
            uy = BP_VSEL(slide, uy - f * ty, uy);
        }
        left = BP_VSEL(go, left * (one - t), left);
        qx = BP_VSEL(go, qx * (one - t), qx);
        qy = BP_VSEL(go, qy * (one - t), qy);
        bp_vf qn = BP_VMIN(qx * nx + qy * ny, zero);
        qx = BP_VSEL(go, qx - qn * nx, qx);
        qy = BP_VSEL(go, qy - qn * ny, qy);
        Dx = BP_VSEL(go, qx + ux * h * left, Dx);
        Dy = BP_VSEL(go, qy + uy * h * left, Dy);
    }
    bp_vcap_speed(P->speed_cap, &ux, &uy);
    px = BP_VMIN(BP_VMAX(px, ri), P->width - ri);
    py = BP_VMIN(BP_VMAX(py, ri), P->height - ri);
    bp_vstore_at(px, py, ux, uy, on, I, 1u, A->x, A->y, A->vx, A->vy);
}

/* The lanes of balls i.. that have an impact partner (best >= 0): their
 * records pass 4 has resolved. */
BP_FN bp_vi bp_vpartnered(const bp_block_arrays *A, bp_u32 i)
{
    return BP_VASI(BP_VLOADU((BP_GLOBAL const bp_u32 *)(A->best + i))) >= BP_VI0;
}

/* bp_resolve's own part, in its float operations, for the lanes in `on`
 * of balls with velocity (vx, vy) and radius r whose records (*ux, *uy,
 * *cx, *cy) hold their sums: the velocity plus the sum, capped; the push
 * at most half the radius. The other lanes keep their records. */
BP_FN void bp_vresolve_lanes(const bp_step_params *P, bp_vf vx, bp_vf vy, bp_vf r, bp_vi on,
                             bp_vf *ux, bp_vf *uy, bp_vf *cx, bp_vf *cy)
{
    vx = vx + *ux;
    vy = vy + *uy;
    bp_vcap_speed(P->speed_cap, &vx, &vy);
    *ux = BP_VSEL(on, vx, *ux);
    *uy = BP_VSEL(on, vy, *uy);
    bp_vf px = *cx, py = *cy;
    bp_vf p2 = px * px + py * py, lim = 0.5f * r;
    bp_vi over = (p2 > lim * lim) & on;
    if (BP_VANY(over)) {
        bp_vf k_ = lim / BP_VSQRT(p2);
        *cx = BP_VSEL(over, px * k_, px);
        *cy = BP_VSEL(over, py * k_, py);
    }
}

/* Pass 4 for the lanes of balls i.. without an impact partner, whose
 * records (*ux, *uy, *cx, *cy) are still pass 3's sums (bp_vresolve_lanes).
 * The lanes with one keep their records. Returns the lanes it resolved. */
BP_FN bp_vi bp_vresolve_own(const bp_step_params *P, const bp_block_arrays *A, bp_u32 i,
                            bp_vf *ux, bp_vf *uy, bp_vf *cx, bp_vf *cy)
{
    bp_vi own = ~bp_vpartnered(A, i);
    bp_vresolve_lanes(P, BP_VLOAD(A->vx + i), BP_VLOAD(A->vy + i), BP_VLOAD(A->r + i), own, ux,
                      uy, cx, cy);
    return own;
}

/* Fewer balls than this left in a list for lanes (pass 5's for
 * bp_vmove_static, pass 4's for bp_vresolve_partnered) take the one-ball
 * function (bp_move_static, bp_resolve) one at a time. */
#define BP_VMOVE_MIN (BP_LANES / 4)

/* The lanes of list q from entry k0 of nq (at most BP_LANES of them): the
 * unused lanes' entries set to q[k0], to be read and not written. Returns
 * the lanes in use. q has room for k0 + BP_LANES entries. */
BP_FN bp_vi bp_list_lanes(bp_u32 *q, bp_u32 k0, bp_u32 nq)
{
    bp_u32 m = nq - k0 < BP_LANES ? nq - k0 : BP_LANES;
    for (bp_u32 k = k0 + m; k < k0 + BP_LANES; k++)
        q[k] = q[k0];
    return BP_LANE_IDS < BP_VUSPLAT(m);
}

/* Pass 5, and split[i] = ncontact[i], for balls i0..i1-1. */
BP_FN_SLOW void bp_block_move(const bp_step_params *P, const bp_block_arrays *A, bp_u32 i0,
                              bp_u32 i1)
{
    bp_u32 i = i0;
    const float h = P->h;
    const bp_vf zero = BP_VSPLAT(0.0f);
    bp_u32 q[2u * BP_LANES], nq = 0u; /* balls left for bp_vmove_static */
    for (; i + BP_LANES <= i1; i += BP_LANES) {
        /* bp_move_static up to its first sweep (bp_static_radius lane
         * by lane first) */
        bp_vu ids = BP_VUSPLAT(i) + BP_LANE_IDS;
        bp_vf share = BP_VITOF(BP_VASI((ids * BP_ROUGH_HASH) >> 8)) * (1.0f / 16777216.0f);
        bp_vf ri = BP_VLOAD(A->r + i);
        ri = ri + ri * (BP_ROUGH * share);
        bp_vf px = BP_VMIN(BP_VMAX(BP_VLOAD(A->x + i), ri), P->width - ri);
        bp_vf py = BP_VMIN(BP_VMAX(BP_VLOAD(A->y + i), ri), P->height - ri);
        bp_vf ux, uy, cx, cy;
        bp_vload_records(A->sum + 4u * i, &ux, &uy, &cx, &cy);
        bp_vi own = bp_vresolve_own(P, A, i, &ux, &uy, &cx, &cy);
        bp_vf rx = ux, ry = uy; /* the records as pass 4 leaves them */
        bp_vf Dx = cx + ux * h, Dy = cy + uy * h;
        bp_vi slow = BP_VI0;
        if (P->nlines > 0u && P->nlines <= BP_LINES_IN_LANES) {
            /* the gaps only: the lines' test below clears the lanes whose
             * rows hold no segment near, among others */
            bp_vi sb[4];
            bp_vswept_box(P, px, py, Dx, Dy, ri, sb);
            slow = bp_vsegments_gap(P, A, px, py, sb);
        } else if (P->nlines > 0u)
            slow = bp_vsegments_near(P, A, px, py, Dx, Dy, ri);
        /* bp_sweep_box from no hit */
        bp_vf best = BP_VSPLAT(BP_NO_HIT);
        /* one division an axis: the wall ahead's gap over the move's
         * length along it (what bp_sweep_box divides; no move, no hit) */
        bp_vi neg = Dx < zero;
        bp_vf t = BP_VSEL(neg, BP_VMAX(px - ri, zero), BP_VMAX(P->width - ri - px, zero)) /
                  BP_VSEL(neg, -Dx, Dx);
        t = BP_VSEL(neg | (Dx > zero), t, best);
        best = BP_VSEL(t < best, t, best);
        neg = Dy < zero;
        t = BP_VSEL(neg, BP_VMAX(py - ri, zero), BP_VMAX(P->height - ri - py, zero)) /
            BP_VSEL(neg, -Dy, Dy);
        t = BP_VSEL(neg | (Dy > zero), t, best);
        best = BP_VSEL(t < best, t, best);
        /* A lane whose sweep hits nothing moves the whole way: the end of
         * bp_move_static. The others take bp_move_static itself, and so do
         * those near a line, unless (in a world of few lines) the move is
         * far from every line: then bp_move_static's test would find no
         * line it touches (most balls near the rain's ramps). */
        bp_vi wall = ~(best > 1.0f);
        if (BP_VANY(slow & ~wall) && P->nlines <= BP_LINES_IN_LANES)
            slow &= ~bp_vlines_far(P, A, px, py, Dx, Dy, ri);
        slow |= wall;
        px = px + Dx;
        py = py + Dy;
        bp_vcap_speed(P->speed_cap, &ux, &uy);
        px = BP_VMIN(BP_VMAX(px, ri), P->width - ri);
        py = BP_VMIN(BP_VMAX(py, ri), P->height - ri);
        if (!BP_VANY(slow)) {
            BP_VSTORE(px, A->x + i);
            BP_VSTORE(py, A->y + i);
            BP_VSTORE(ux, A->vx + i);
            BP_VSTORE(uy, A->vy + i);
            continue;
        }
        bp_i32 ls[BP_LANES];
        BP_VSTORE(slow, ls);
        bp_vstore_lanes(px, py, ux, uy, ls, A->x + i, A->y + i, A->vx + i, A->vy + i);
        if (BP_VANY(slow & own)) /* bp_move_static reads them resolved */
            bp_vstore_records(rx, ry, cx, cy, A->sum + 4u * i);
        BP_VCOMPRESS(q, nq, slow, ids);
        if (nq >= BP_LANES) { /* BP_LANES of them in lanes, the rest kept */
            bp_vmove_static(P, A, q, ~BP_VI0);
            nq -= BP_LANES;
            for (bp_u32 k = 0u; k < nq; k++)
                q[k] = q[BP_LANES + k];
        }
    }
    for (; i < i1; i++) {
        if (A->best[i] < 0) /* bp_resolve's own part only */
            bp_resolve(i, P, A->x, A->y, A->vx, A->vy, A->r, A->m, A->split, A->best, A->sum);
        q[nq++] = i;
    }
    bp_u32 k0 = 0u;
    for (; k0 < nq && nq - k0 >= BP_VMOVE_MIN; k0 += BP_LANES)
        bp_vmove_static(P, A, q + k0, bp_list_lanes(q, k0, nq));
    for (; k0 < nq; k0++)
        bp_move_static(q[k0], P, A->x, A->y, A->vx, A->vy, A->sum, A->r, A->lx1, A->ly1, A->lx2,
                       A->ly2, A->seg_start, A->seg_list);
    /* the counts for the next sub-step's mass splitting: a copy (byte by
     * byte, the pointers reloaded after every byte stored, it was 1.2% of
     * the rain's samples) */
#ifdef __OPENCL_VERSION__
    BP_GLOBAL bp_u8 *split = A->split;
    BP_GLOBAL const bp_u8 *nc = A->ncontact;
    for (bp_u32 k = i0; k < i1; k++)
        split[k] = nc[k];
#else
    __builtin_memcpy(A->split + i0, A->ncontact + i0, i1 - i0);
#endif
}

/* bp_resolve for the balls I[0..BP_LANES-1] (each with an impact partner,
 * best >= 0), in lanes: the partner's term, an impact where the choice is
 * mutual (bp_pair_impact) and else a soft contact where close
 * (bp_pair_soft, through bp_vpair_geom and bp_vsoft_terms), each added to
 * the ball's sum in bp_resolve's order of float operations, then
 * bp_resolve's own part. The ball pairs' j side as pass 3's
 * (bp_vpair_with_j). The
 * records of the lanes in `on` are written; the others (copies of a lane
 * in `on`) are only read. The same bits as bp_resolve ball by ball. */
BP_FN void bp_vresolve_partnered(const bp_step_params *P, const bp_block_arrays *A,
                                 const bp_u32 *I, bp_vi on)
{
    const bp_vf zero = BP_VSPLAT(0.0f);
    bp_vpair q;
    q.i = BP_VLOADU(I);
    bp_u32 J[BP_LANES]; /* the partners */
    q.j = BP_VGATHERU((BP_GLOBAL const bp_u32 *)A->best, I);
    BP_VSTORE(q.j, J);
    bp_vf dvx, dvy, px, py;
    bp_vgather_records(A->sum, I, &dvx, &dvy, &px, &py);
    q.xi = BP_VGATHER(A->x, I);
    q.yi = BP_VGATHER(A->y, I);
    q.ri = BP_VGATHER_OR(P->r0, A->r, I);
    q.mi = BP_VGATHER_OR(P->m0, A->m, I);
    bp_vf vxi = BP_VGATHER(A->vx, I), vyi = BP_VGATHER(A->vy, I);
    bp_vpair_with_j(&q, vxi, vyi, A->x, A->y, A->r, P->r0, A->vx, A->vy, J);
    q.mj = BP_VGATHER_OR(P->m0, A->m, J);
    bp_vf mu = q.mj / (q.mi + q.mj);
    bp_vi mutual = BP_VASI(BP_VGATHERU((BP_GLOBAL const bp_u32 *)A->best, J)) == BP_VASI(q.i);
    bp_vf near_d = BP_CLOSE_DIST(P, q.rsum);
    bp_vi soft = ~mutual & (q.d2 < near_d * near_d);
    if (BP_VANY(mutual)) { /* bp_pair_impact */
        bp_vf dist = BP_VSQRT(q.d2);
        bp_vi pos = dist > zero;
        bp_vf nx = BP_VSEL(pos, q.dx / dist, BP_VSEL(q.j > q.i, BP_VSPLAT(1.0f), BP_VSPLAT(-1.0f)));
        bp_vf ny = BP_VSEL(pos, q.dy / dist, zero);
        bp_vf gap = dist - q.rsum;
        bp_vf t = BP_VMAX(bp_vpair_toi(q.dx, q.dy, q.rvx, q.rvy, q.rsum, P->h), zero);
        bp_vf cx = q.dx - q.rvx * t, cy = q.dy - q.rvy * t;
        bp_vf cl = BP_VSQRT(cx * cx + cy * cy);
        bp_vi cpos = cl > zero;
        nx = BP_VSEL(cpos, cx / cl, nx);
        ny = BP_VSEL(cpos, cy / cl, ny);
        bp_vf vn = q.rvx * nx + q.rvy * ny;
        bp_vf k_ = (1.0f + P->e) * mu * vn;
        dvx = BP_VSEL(mutual, dvx - k_ * nx, dvx);
        dvy = BP_VSEL(mutual, dvy - k_ * ny, dvy);
        bp_vi ov = mutual & (gap < zero);
        px = BP_VSEL(ov, px + mu * P->beta * gap * nx, px);
        py = BP_VSEL(ov, py + mu * P->beta * gap * ny, py);
    }
    if (BP_VANY(soft)) { /* bp_pair_soft, added to the sums */
        bp_vgeom g;
        bp_vpair_geom(P, &q, soft, &g);
        q.ni = bp_vsplit_n(A->split, I);
        q.nj = bp_vsplit_n(A->split, J);
        bp_vf ms = q.mj / (q.ni * q.mj + q.nj * q.mi);
        bp_vsoft_terms(P, &g, g.nx, g.ny, g.tvx, g.tvy, g.dnx, g.dny, mu, ms, &dvx, &dvy, &px,
                       &py);
    }
    bp_vresolve_lanes(P, vxi, vyi, q.ri, on, &dvx, &dvy, &px, &py);
    bp_vstore_at(dvx, dvy, px, py, on, I, 4u, A->sum, A->sum + 1, A->sum + 2, A->sum + 3);
}

/* Pass 4 (bp_resolve) for the balls of i0..i1-1 with an impact partner
 * (best >= 0), BP_LANES of them at a time (bp_vresolve_partnered; the
 * last few one by one); the others' records are left to pass 5
 * (bp_block_move), whose lanes resolve them as bp_resolve would
 * (bp_vresolve_own). */
BP_FN void bp_block_resolve(const bp_step_params *P, const bp_block_arrays *A, bp_u32 i0,
                            bp_u32 i1)
{
    bp_u32 i = i0, q[2u * BP_LANES], nq = 0u;
    for (; i + BP_LANES <= i1; i += BP_LANES) {
        bp_vi on = bp_vpartnered(A, i);
        if (!BP_VANY(on))
            continue;
        BP_VCOMPRESS(q, nq, on, BP_VUSPLAT(i) + BP_LANE_IDS);
        if (nq >= BP_LANES) {
            bp_vresolve_partnered(P, A, q, ~BP_VI0);
            nq -= BP_LANES;
            for (bp_u32 k = 0u; k < nq; k++)
                q[k] = q[BP_LANES + k];
        }
    }
    for (; i < i1; i++)
        if (A->best[i] >= 0)
            q[nq++] = i;
    bp_u32 k0 = 0u;
    for (; k0 < nq && nq - k0 >= BP_VMOVE_MIN; k0 += BP_LANES)
        bp_vresolve_partnered(P, A, q + k0, bp_list_lanes(q, k0, nq));
    for (; k0 < nq; k0++)
        bp_resolve(q[k0], P, A->x, A->y, A->vx, A->vy, A->r, A->m, A->split, A->best, A->sum);
}

/* Pass 1 (bp_integrate, and bp_cell_of into cell[]) for balls i0..i1-1,
 * BP_LANES at a time; returns the largest of m and their speeds^2. */
BP_FN float bp_block_integrate(const bp_step_params *P, const bp_block_arrays *A,
                               BP_GLOBAL bp_u32 *cell, bp_u32 i0, bp_u32 i1, float m)
{
    bp_u32 i = i0;
    bp_vf vm = BP_VSPLAT(m);
    for (; i + BP_LANES <= i1; i += BP_LANES) {
        bp_vf ux = BP_VLOAD(A->vx + i) + P->gx * P->h, uy = BP_VLOAD(A->vy + i) + P->gy * P->h;
        bp_vcap_speed(P->speed_cap, &ux, &uy);
        BP_VSTORE(ux, A->vx + i);
        BP_VSTORE(uy, A->vy + i);
        bp_vf v2 = ux * ux + uy * uy;
        vm = BP_VSEL(v2 > vm, v2, vm);
        bp_vf px = BP_VLOAD(A->x + i), py = BP_VLOAD(A->y + i);
        bp_vu c = BP_VASU(bp_vgrid_coord(BP_GY(px, py), P->inv_cell, P->gh) * P->gw +
                          bp_vgrid_coord(BP_GX(px, py), P->inv_cell, P->gw));
        BP_VSTORE(c, cell + i);
    }
    float l[BP_LANES];
    BP_VSTORE(vm, l);
    for (int k = 0; k < BP_LANES; k++)
        m = l[k] > m ? l[k] : m;
    for (; i < i1; i++) {
        float v2 = bp_integrate(i, P, A->vx, A->vy);
        m = v2 > m ? v2 : m;
        cell[i] = bp_cell_of(P, A->x[i], A->y[i]);
    }
    return m;
}

/* ---- Pass 2 merged from the last sub-step's grid (CPUs) -------------------
 *
 * Most balls keep their cell from one sub-step to the next, so the grid's
 * order (sorted[], start[]: the count's, cells in order, a cell's balls
 * ascending) can be built from the last one instead of counted anew: each
 * part walks the old slots of its range of cells, keeps the balls that
 * stayed (already in order) and lists the movers; after a barrier each
 * part merges into its cells the movers that came to them, sorted by
 * (cell, ball). The same sorted[], start[] and spos as the count
 * (bp_grid_count, bp_grid_offsets, bp_grid_place), with one barrier fewer
 * and no count array that another core reads. The CPU engine's threads
 * (src/sim/grid_merge.h, through bp_block_passes at their lane width) and
 * the OpenCL engine's one-launch step on CPU devices (bp_k_steps) run it.
 *
 * The parts' working memory is the sums' array (4 words a ball, dead while
 * the grid is built): part u the words 4 ob .. 4 oe of its old slots ob ..
 * oe - 1. In its first 2 L words (L = oe - ob) its movers as 64-bit keys
 * (new cell << 32 | ball), then the keys that come to it and the sort's
 * buffer; in the next L the balls that stayed, in old slot order; in the
 * last L the movers' old cells, then where each key that comes goes among
 * the balls that stayed. bp_merge_fits says whether they fit; where not,
 * the grid is counted anew. */

/* Shifts an insertion sort may take, a key, before the merge sort takes
 * over (the movers come nearly in order: each part lists them by old
 * cell, and most go to the next cell or the next row's). */
#define BP_MERGE_SHIFTS 8u

/* Part u of a merge: cells c0 .. c1 - 1, which held the old slots
 * ob .. oe - 1. */
typedef struct bp_merge_part {
    bp_u32 c0, c1, ob, oe;
} bp_merge_part;

BP_FN bp_u32 bp_merge_len(const bp_merge_part *p)
{
    return p->oe - p->ob;
}

BP_FN BP_GLOBAL bp_u64 *bp_merge_movers(const bp_merge_part *p, BP_GLOBAL bp_u32 *scratch)
{
    return (BP_GLOBAL bp_u64 *)(BP_GLOBAL void *)(scratch + 4u * p->ob);
}

BP_FN BP_GLOBAL bp_u32 *bp_merge_stayers(const bp_merge_part *p, BP_GLOBAL bp_u32 *scratch)
{
    return scratch + 4u * p->ob + 2u * bp_merge_len(p);
}

BP_FN BP_GLOBAL bp_u32 *bp_merge_old_cells(const bp_merge_part *p, BP_GLOBAL bp_u32 *scratch)
{
    return scratch + 4u * p->ob + 3u * bp_merge_len(p);
}

/* Cuts the old grid (start[], ncells cells, n balls) into `parts` parts of
 * whole cells, part u beginning at the cell that holds old slot cut[u]
 * (cut[0] = 0, ascending). */
BP_FN void bp_merge_cut(BP_GLOBAL const bp_u32 *start, bp_u32 ncells, bp_u32 n, int parts,
                        const bp_u32 *cut, bp_merge_part *p)
{
    for (int u = 0; u < parts; u++) {
        bp_u32 c0 = 0u;
        if (u > 0) {
            if (cut[u] >= n) {
                c0 = ncells;
            } else {
                /* the last cell whose start is at or before the slot:
                 * the one that holds it (start[0] = 0 <= k < start[ncells] = n) */
                bp_u32 lo = 0u, hi = ncells; /* start[lo] <= k < start[hi] */
                while (hi - lo > 1u) {
                    bp_u32 mid = lo + (hi - lo) / 2u;
                    if (start[mid] <= cut[u])
                        lo = mid;
                    else
                        hi = mid;
                }
                c0 = lo;
            }
            if (c0 < p[u - 1].c0)
                c0 = p[u - 1].c0;
        }
        p[u].c0 = c0;
        p[u].ob = start[c0];
    }
    for (int u = 0; u < parts; u++) {
        p[u].c1 = u + 1 < parts ? p[u + 1].c0 : ncells;
        p[u].oe = u + 1 < parts ? p[u + 1].ob : n;
    }
}

/* Part p's first half, before the barrier: the balls of its old slots
 * that kept their cell listed in slot order and the movers (new cell,
 * ball) with their old cells, in its words of scratch. A slot's old cell
 * is the cell of the position it was sorted by (spos, x at spos[k], y at
 * spos[ystride + k]; bp_cell_of's with inv_cell, gw, gh); cell[]: every
 * ball's new cell. BP_LANES slots at a time, the balls that stayed
 * appended by a compress, the rare movers lane by lane. Returns how many
 * movers the part has. */
BP_FN bp_u32 bp_merge_scan_lanes(const bp_merge_part *p, float inv_cell, bp_i32 gw, bp_i32 gh,
                           BP_GLOBAL const bp_u32 *sorted, BP_GLOBAL const float *spos,
                           bp_u32 ystride, BP_GLOBAL const bp_u32 *cell,
                           BP_GLOBAL bp_u32 *scratch)
{
    BP_GLOBAL bp_u64 *mov = bp_merge_movers(p, scratch);
    BP_GLOBAL bp_u32 *stay = bp_merge_stayers(p, scratch), *oldc = bp_merge_old_cells(p, scratch);
    bp_u32 ns = 0u, m = 0u, k = p->ob;
    for (; k + BP_LANES <= p->oe; k += BP_LANES) {
        /* the slots' lines, which the part's place (after the barrier)
         * rewrites: the first grid row of every part but the first is
         * read by the thread before it in pass 3 (its balls' windows),
         * the last row of every part but the last by the thread after it
         * (its ghosts), so those lines are shared, and the place's stores
         * had waited for them one by one (thread 1's place of the landed
         * rain 10k 1.8x thread 0's, its first ~1,500 slots 2.2-3.6 ns a
         * ball against 0.8 elsewhere; docs/benchmarks.md, sixty-third
         * session) */
        BP_PREFETCHW(sorted + k);
        BP_PREFETCHW(spos + k);
        BP_PREFETCHW(spos + ystride + k);
        BP_GATHER_INDICES(J, sorted + k);
        bp_vu q = BP_VLOADU(J), nc = BP_VGATHERU(cell, J);
        bp_vf sx = BP_VLOAD(spos + k), sy = BP_VLOAD(spos + ystride + k);
        bp_vi oc = bp_vgrid_coord(BP_GY(sx, sy), inv_cell, gh) * gw +
                   bp_vgrid_coord(BP_GX(sx, sy), inv_cell, gw);
        bp_vi same = BP_VASI(nc) == oc;
        /* ns is at most k's place in the part: the store's BP_LANES
         * words stay in stay[] */
        BP_VCOMPRESS(stay, ns, same, q);
        bp_u32 mv = BP_VMASK(~same);
        if (mv) {
            bp_u32 qa[BP_LANES], na[BP_LANES], oa[BP_LANES];
            bp_vu ou = BP_VASU(oc);
            BP_VSTORE(q, qa);
            BP_VSTORE(nc, na);
            BP_VSTORE(ou, oa);
            for (bp_u32 l = 0u; mv; l++, mv >>= 1)
                if (mv & 1u) {
                    oldc[m] = oa[l];
                    mov[m++] = (bp_u64)na[l] << 32 | qa[l];
                }
        }
    }
    for (; k < p->oe; k++) {
        bp_u32 q = sorted[k], nc = cell[q];
        bp_u32 oc = bp_grid_cell(spos[k], spos[ystride + k], inv_cell, gw, gh);
        if (nc == oc) {
            stay[ns++] = q;
        } else {
            oldc[m] = oc;
            mov[m++] = (bp_u64)nc << 32 | q;
        }
    }
    return m;
}

/* Whether the movers counted (moved[u], part u's) fit in the parts'
 * words of scratch: the same answer for every part. */
BP_FN int bp_merge_fits(const bp_merge_part *p, int parts, BP_GLOBAL const bp_u32 *moved)
{
    bp_u64 total = 0u;
    for (int u = 0; u < parts; u++)
        total += moved[u];
    if (total > (bp_u64)p[parts - 1].oe / 16u + 64u)
        return 0; /* so many movers that counting anew is cheaper */
    for (int u = 0; u < parts; u++) {
        if (p[u].c0 == p[u].c1)
            continue; /* no cells: nothing comes to it */
        /* after its movers, the keys that come (at most all the movers)
         * and the sort's buffer in the first 2 L words; after the movers'
         * old cells, where the keys go in the last L */
        bp_u64 len = bp_merge_len(&p[u]), m = moved[u];
        if (2u * m + 4u * total > 2u * len || m + total > len)
            return 0;
    }
    return 1;
}

/* Sorts a[0..n-1] ascending: insertion while the keys are nearly in
 * order, else a merge sort through tmp (n keys). */
BP_FN void bp_merge_sort_keys(BP_GLOBAL bp_u64 *a, bp_u32 n, BP_GLOBAL bp_u64 *tmp)
{
    bp_u64 budget = (bp_u64)BP_MERGE_SHIFTS * n + 64u, shifts = 0u;
    bp_u32 i = 1u;
    for (; i < n && shifts <= budget; i++) {
        bp_u64 v = a[i];
        bp_u32 j = i;
        while (j > 0u && a[j - 1u] > v) {
            a[j] = a[j - 1u];
            j--;
        }
        shifts += i - j;
        a[j] = v;
    }
    if (i >= n)
        return;
    /* bottom-up merge sort, runs of w from a into tmp and back */
    BP_GLOBAL bp_u64 *src = a, *dst = tmp;
    for (bp_u32 w = 1u; w < n; w *= 2u) {
        for (bp_u32 lo = 0u; lo < n; lo += 2u * w) {
            bp_u32 mid = lo + w < n ? lo + w : n, hi = lo + 2u * w < n ? lo + 2u * w : n;
            bp_u32 x = lo, y = mid, o = lo;
            while (x < mid && y < hi)
                dst[o++] = src[y] < src[x] ? src[y++] : src[x++];
            while (x < mid)
                dst[o++] = src[x++];
            while (y < hi)
                dst[o++] = src[y++];
        }
        BP_GLOBAL bp_u64 *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        for (bp_u32 k = 0u; k < n; k++)
            a[k] = src[k];
}

/* Balls stay[0..len-1] into slots pos.. of sorted[] and spos, of room
 * balls that stayed from stay on, BP_LANES at a time with their positions
 * gathered. Where room allows, whole vectors: the slots past len take the
 * next balls that stayed, which the slots after this run's (the next
 * key's, the next run's) then get again. */
BP_FN void bp_merge_put_run(BP_GLOBAL const bp_u32 *stay, bp_u32 len, bp_u32 room, bp_u32 pos,
                            BP_GLOBAL bp_u32 *sorted, BP_GLOBAL const float *x,
                            BP_GLOBAL const float *y, BP_GLOBAL float *spos, bp_u32 ystride)
{
    bp_u32 whole = (len + BP_LANES - 1u) / BP_LANES * BP_LANES;
    bp_u32 end = len < room && whole <= room ? whole : len, t = 0u;
    for (; t + BP_LANES <= end; t += BP_LANES) {
        BP_GATHER_INDICES(J, stay + t);
        bp_vu q = BP_VLOADU(J);
        bp_vf px = BP_VGATHER(x, J), py = BP_VGATHER(y, J);
        BP_VSTORE(q, sorted + pos + t);
        BP_VSTORE(px, spos + pos + t);
        BP_VSTORE(py, spos + ystride + pos + t);
    }
    for (; t < len; t++) {
        bp_u32 q = stay[t];
        sorted[pos + t] = q;
        spos[pos + t] = x[q];
        spos[ystride + pos + t] = y[q];
    }
}

/* Part u's second half, after the barrier: its cells' new start[] words
 * and their balls in sorted[] and spos (x at spos[k], y at
 * spos[ystride + k]). Reads every part's movers; writes only its own
 * cells' words of start[] (not start[ncells], which stays n) and their
 * slots. */
BP_FN void bp_merge_place_lanes(const bp_merge_part *p, int parts, int u,
                          BP_GLOBAL const bp_u32 *moved, BP_GLOBAL bp_u32 *scratch,
                          BP_GLOBAL bp_u32 *start, BP_GLOBAL bp_u32 *sorted,
                          BP_GLOBAL const float *x, BP_GLOBAL const float *y,
                          BP_GLOBAL float *spos, bp_u32 ystride)
{
    const bp_merge_part *me = &p[u];
    const bp_u32 m = moved[u], ns = bp_merge_len(me) - m;
    BP_GLOBAL const bp_u32 *stay = bp_merge_stayers(me, scratch);
    BP_GLOBAL const bp_u32 *oldc = bp_merge_old_cells(me, scratch);
    BP_GLOBAL bp_u64 *in = bp_merge_movers(me, scratch) + m;
    BP_GLOBAL bp_u32 *at = bp_merge_old_cells(me, scratch) + m;
    bp_u32 ni = 0u, left_before = 0u, came_before = 0u;
    bp_u64 lo = (bp_u64)me->c0 << 32, hi = (bp_u64)me->c1 << 32;
    for (int t = 0; t < parts; t++) {
        BP_GLOBAL const bp_u64 *mov = bp_merge_movers(&p[t], scratch);
        bp_u32 mt = moved[t];
        if (t < u)
            left_before += mt;
        for (bp_u32 k = 0u; k < mt; k++) {
            bp_u64 key = mov[k];
            if (key < lo)
                came_before++;
            else if (key < hi)
                in[ni++] = key;
        }
    }
    bp_merge_sort_keys(in, ni, in + ni);
    /* where each key goes among the balls that stayed (before the first
     * of its cell's with a larger index), from the old starts of its cell
     * and the next (this part's words of start[], not yet rewritten) */
    bp_u32 jo = 0u;
    for (bp_u32 j = 0u; j < ni; j++) {
        bp_u32 nc = (bp_u32)(in[j] >> 32), q = (bp_u32)in[j];
        while (jo < m && oldc[jo] < nc)
            jo++;
        bp_u32 jn = jo;
        while (jn < m && oldc[jn] == nc)
            jn++;
        bp_u32 idx = start[nc] - me->ob - jo;
        bp_u32 end = (nc + 1u < me->c1 ? start[nc + 1u] : me->oe) - me->ob - jn;
        while (idx < end && stay[idx] < q)
            idx++;
        at[j] = idx;
    }
    bp_u32 pos = me->ob - left_before + came_before, k = 0u;
    for (bp_u32 j = 0u; j < ni; j++) {
        bp_merge_put_run(stay + k, at[j] - k, ns - k, pos, sorted, x, y, spos, ystride);
        pos += at[j] - k;
        k = at[j];
        bp_u32 q = (bp_u32)in[j];
        sorted[pos] = q;
        spos[pos] = x[q];
        spos[ystride + pos] = y[q];
        pos++;
    }
    bp_merge_put_run(stay + k, ns - k, ns - k, pos, sorted, x, y, spos, ystride);
    /* the new starts: the old ones shifted by the movers that left the
     * cells before (-1 each) and came to them (+1 each) */
    bp_u32 shift = came_before - left_before, io = 0u, ii = 0u;
    for (bp_u32 c = me->c0; c < me->c1;) {
        while (io < m && oldc[io] < c) {
            shift--;
            io++;
        }
        while (ii < ni && (bp_u32)(in[ii] >> 32) < c) {
            shift++;
            ii++;
        }
        bp_u32 next = me->c1;
        if (io < m && oldc[io] + 1u < next)
            next = oldc[io] + 1u;
        if (ii < ni && (bp_u32)(in[ii] >> 32) + 1u < next)
            next = (bp_u32)(in[ii] >> 32) + 1u;
        for (; c < next; c++)
            start[c] += shift;
    }
}

#endif
