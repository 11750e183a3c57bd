// The profiling build's call counters around the ARMv6-M field multiplication and
// squaring (quill_fe_cols_armv6m.S) and the 64-bit product (quill_lmul_armv6m.S),
// which in the production build are themselves secp256k1_fe_mul_inner,
// secp256k1_fe_sqr_inner and quill_lmul, without a wrapper call.
#ifdef QUILL_PROFILE
#include <stdint.h>

// calls since the last profile_counts() (the profiling build: make PROFILE=1)
uint32_t quill_count_mul, quill_count_sqr, quill_count_lmul;

void quill_fe_mul_cols(uint32_t *r, const uint32_t *a, const uint32_t *b);
void quill_fe_sqr_cols(uint32_t *r, const uint32_t *a);

void secp256k1_fe_mul_inner(uint32_t *r, const uint32_t *a, const uint32_t *b) {
    quill_count_mul++;
    quill_fe_mul_cols(r, a, b);
}

void secp256k1_fe_sqr_inner(uint32_t *r, const uint32_t *a) {
    quill_count_sqr++;
    quill_fe_sqr_cols(r, a);
}

uint64_t quill_lmul_asm(uint64_t a, uint64_t b);

uint64_t quill_lmul(uint64_t a, uint64_t b) {
    quill_count_lmul++;
    return quill_lmul_asm(a, b);
}
#else
typedef int quill_profile_armv6m_is_empty;   // ISO C: a translation unit is not empty
#endif
