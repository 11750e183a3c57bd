// The 64-bit multiplication the rest of libsecp256k1 still does on ARMv6-M (the
// scalar arithmetic's products, the safegcd inverses' signed 64-bit updates):
// a * b mod 2^64, the contract of the run-time ABI's __aeabi_lmul, in Thumb-1.
// The Makefile points the library's calls here (objcopy --redefine-sym
// __aeabi_lmul=quill_lmul) instead of libgcc's generic one, which saves and restores
// five registers and builds the product from 16-bit halves through more moves than
// MULS needs.
//
//   uint64_t quill_lmul(uint64_t a, uint64_t b);   a in r1:r0, b in r3:r2, result r1:r0
//
// a0 * b0 in full from four 16x16 MULS, plus the low words of a1 * b0 and a0 * b1.
// No branch: the middle sum's carry goes in through ADCS. (quill_lmul_asm in the
// profiling build, where quill_profile_armv6m.c counts the calls.)
#ifdef QUILL_PROFILE
#define LMUL quill_lmul_asm
#else
#define LMUL quill_lmul
#endif

    .syntax unified
    .thumb
    .text

    .global LMUL
    .type LMUL, %function
    .thumb_func
LMUL:
    muls r1, r2                 // a1 * b0
    muls r3, r0                 // a0 * b1
    adds r1, r3                 // the cross products: only their low word counts
    push {r4, r5}
    uxth r3, r0                 // al
    lsrs r0, r0, #16            // ah
    uxth r4, r2                 // bl
    lsrs r2, r2, #16            // bh
    movs r5, r3
    muls r5, r4                 // al * bl
    muls r3, r2                 // al * bh
    muls r4, r0                 // ah * bl
    muls r2, r0                 // ah * bh
    adds r3, r4                 // the middle sum, its carry at 2^48
    movs r4, #0                 // (MOVS leaves C alone)
    adcs r4, r4
    lsls r4, r4, #16
    adds r1, r4
    lsls r4, r3, #16
    lsrs r3, r3, #16
    adds r0, r5, r4             // low word
    adcs r2, r3
    adds r1, r2                 // high word
    pop {r4, r5}
    bx lr
    .size LMUL, . - LMUL
