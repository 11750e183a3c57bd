// The 64-bit multiplication the rest of libsecp256k1 still does on ARMv6-M (the
// scalar arithmetic's products, the safegcd inverses' signed 64-bit updates):
// a * b mod 2^64, the contract of the run-time ABI's __aeabi_lmul. The Makefile
// points the library's calls here (objcopy --redefine-sym __aeabi_lmul=quill_lmul)
// instead of libgcc's generic one, which saves and restores five registers and
// builds the product from 16-bit halves through more moves than MULS needs.
#include <stdint.h>

#ifdef QUILL_PROFILE
uint32_t quill_count_lmul;   // calls since the last profile_counts() (make PROFILE=1)
#endif

uint64_t quill_lmul(uint64_t a, uint64_t b) {
#ifdef QUILL_PROFILE
    quill_count_lmul++;
#endif
    uint32_t a0 = (uint32_t)a, a1 = (uint32_t)(a >> 32);
    uint32_t b0 = (uint32_t)b, b1 = (uint32_t)(b >> 32);
    uint32_t cross = a0 * b1 + a1 * b0;          // only its low 32 bits reach the result
    uint32_t al = a0 & 0xFFFF, ah = a0 >> 16, bl = b0 & 0xFFFF, bh = b0 >> 16;
    uint32_t lo = al * bl, hi = ah * bh;
    uint32_t m1 = al * bh, m2 = ah * bl;
    m1 += m2;
    hi += (uint32_t)(m1 < m2) << 16;             // the middle sum's carry, at 2^48
    uint32_t t = m1 << 16;
    lo += t;
    hi += (m1 >> 16) + (lo < t) + cross;
    return ((uint64_t)hi << 32) | lo;
}
