// Field multiplication and squaring modulo p = 2^256 - 2^32 - 977 for ARMv6-M
// (RP2040's Cortex-M0+), plugged into libsecp256k1's 10x26 field through its
// external-implementation hook (USE_EXTERNAL_ASM: the library then calls
// secp256k1_fe_mul_inner / secp256k1_fe_sqr_inner instead of its own).
//
// Why: ARMv6-M has MULS (32x32 -> low 32 bits) but no UMULL, so the library's
// (uint64_t)a * b products become calls to libgcc's generic 64x64 __aeabi_lmul
// (~45 instructions with the call). Here every product is four 16x16 MULS inline.
//
// Representation (libsecp256k1's field_10x26.h): a field element is
// sum(n[i] << 26*i), i = 0..9. Inputs have magnitude <= 8: n[i] < 2^30, n[9] < 2^26.
// The output has magnitude 1: n[i] < 2^27 (i < 9), n[9] < 2^23; it is congruent
// to a*b mod p but not necessarily normalized (the library normalizes before any
// byte leaves it, so the signatures are the same bytes).
//
// Method: the 19 column sums of the 10x10 limb products (each < 2^64 with the carry
// from the column before), carried as they complete into twenty 26-bit limbs
// t[0..19]; the upper ten folded down with
// 2^260 = 2^4 * 2^256 == 2^4 * (2^32 + 977) = 0x400 * 2^26 + 0x3D10 (mod p);
// what then lies at or above bit 256 is folded once more with 2^256 == 2^32 + 977.
#include <stdint.h>

#define M26 0x3FFFFFFu

#ifdef QUILL_PROFILE
// calls since the last profile_counts() (the profiling build: make PROFILE=1)
uint32_t quill_count_mul, quill_count_sqr;
#define COUNT(counter) ((counter)++)
#else
#define COUNT(counter)
#endif

// a * b for a, b < 2^31 (so the two middle products sum below 2^32)
static inline __attribute__((always_inline)) uint64_t mul31(uint32_t a, uint32_t b) {
    uint32_t al = a & 0xFFFF, ah = a >> 16, bl = b & 0xFFFF, bh = b >> 16;
    uint32_t lo = al * bl;
    uint32_t mid = al * bh + ah * bl;
    uint32_t hi = ah * bh;
    uint32_t t = mid << 16;
    lo += t;
    hi += (mid >> 16) + (lo < t);
    return ((uint64_t)hi << 32) | lo;
}

// (hi:lo) += a * b for a, b < 2^31, as mul31, in 16 Thumb-1 instructions: C leaves
// the compiler too few of ARMv6-M's eight low registers and it spills to the stack
#define MAC31(lo, hi, a_in, b_in) do { \
        uint32_t a_ = (a_in), b_ = (b_in), t_, u_, v_; \
        __asm__ (".syntax unified\n\t" /* GCC hands Thumb-1 inline asm over in divided syntax */ \
                 "lsrs %[t], %[a], #16\n\t"  /* t = ah */ \
                 "uxth %[a], %[a]\n\t"       /* a = al */ \
                 "lsrs %[u], %[b], #16\n\t"  /* u = bh */ \
                 "uxth %[b], %[b]\n\t"       /* b = bl */ \
                 "movs %[v], %[a]\n\t" \
                 "muls %[v], %[u]\n\t"       /* v = al * bh */ \
                 "muls %[u], %[t]\n\t"       /* u = ah * bh */ \
                 "muls %[t], %[b]\n\t"       /* t = ah * bl */ \
                 "muls %[b], %[a]\n\t"       /* b = al * bl */ \
                 "adds %[v], %[v], %[t]\n\t" /* v = middle sum, < 2^32 */ \
                 "lsls %[t], %[v], #16\n\t" \
                 "lsrs %[v], %[v], #16\n\t" \
                 "adds %[b], %[b], %[t]\n\t" /* low word of a * b */ \
                 "adcs %[u], %[v]\n\t"       /* high word */ \
                 "adds %[lo], %[lo], %[b]\n\t" \
                 "adcs %[hi], %[u]\n\t" \
                 : [lo] "+l"(lo), [hi] "+l"(hi), [a] "+l"(a_), [b] "+l"(b_), \
                   [t] "=&l"(t_), [u] "=&l"(u_), [v] "=&l"(v_) \
                 : : "cc"); \
    } while (0)

// the twenty 26-bit limbs t[0..19] of a product, folded to magnitude 1 into r
static void fold(uint32_t *r, const uint32_t *t) {
    uint64_t acc = 0;
#pragma GCC unroll 10
    for (int k = 0; k < 10; k++) {               // t[k + 10] * 2^260 -> limbs k and k + 1
        acc += t[k] + mul31(t[k + 10], 0x3D10);
        if (k > 0) {
            acc += (uint64_t)t[k + 9] << 10;
        }
        r[k] = (uint32_t)acc & M26;
        acc >>= 26;
    }
    acc += (uint64_t)t[19] << 10;                // what is left at 2^260
    uint64_t x = (acc << 4) | (r[9] >> 22);      // everything at or above 2^256: < 2^42
    r[9] &= 0x3FFFFF;
    uint32_t xl = (uint32_t)x & M26, xh = (uint32_t)(x >> 26);   // xh < 2^16
    acc = r[0] + mul31(xl, 0x3D1);               // x * 977 ...
    r[0] = (uint32_t)acc & M26;
    acc >>= 26;
    acc += r[1] + xh * 0x3D1u + ((uint64_t)xl << 6);   // ... + x * 2^32
    r[1] = (uint32_t)acc & M26;
    acc >>= 26;
    r[2] += (uint32_t)acc + (xh << 6);           // < 2^27
}

// column k's sum is complete in hi:lo (with the carry from column k - 1): keep its
// low 26 bits as limb k and carry the rest
#define NEXT_LIMB(t, k, lo, hi) do { \
        (t)[k] = (lo) & M26; \
        (lo) = ((lo) >> 26) | ((hi) << 6); \
        (hi) >>= 26; \
    } while (0)

void secp256k1_fe_mul_inner(uint32_t *r, const uint32_t *a, const uint32_t *b) {
    COUNT(quill_count_mul);
    uint32_t t[20], lo = 0, hi = 0;
#pragma GCC unroll 19
    for (int k = 0; k < 19; k++) {
        int i = k < 10 ? 0 : k - 9, last = k < 10 ? k : 9;
#pragma GCC unroll 10
        for (; i <= last; i++) {
            MAC31(lo, hi, a[i], b[k - i]);
        }
        NEXT_LIMB(t, k, lo, hi);
    }
    t[19] = lo;                                  // < 2^27
    fold(r, t);                                  // r may be a: t holds the product
}

void secp256k1_fe_sqr_inner(uint32_t *r, const uint32_t *a) {
    COUNT(quill_count_sqr);
    uint32_t t[20], lo = 0, hi = 0;
#pragma GCC unroll 19
    for (int k = 0; k < 19; k++) {
        int i = k < 10 ? 0 : k - 9;
#pragma GCC unroll 5
        for (; 2 * i < k; i++) {                 // a[i] * a[k - i] twice, i < k - i
            MAC31(lo, hi, 2 * a[i], a[k - i]);
        }
        if ((k & 1) == 0) {
            MAC31(lo, hi, a[k / 2], a[k / 2]);
        }
        NEXT_LIMB(t, k, lo, hi);
    }
    t[19] = lo;
    fold(r, t);
}
