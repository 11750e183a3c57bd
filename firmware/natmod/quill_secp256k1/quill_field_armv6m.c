// The profiling build's call counters around the ARMv6-M field multiplication and
// squaring (quill_fe_cols_armv6m.S, which in the production build is itself
// secp256k1_fe_mul_inner / secp256k1_fe_sqr_inner, without a wrapper call).
#ifdef QUILL_PROFILE
#include <stdint.h>

// calls since the last profile_counts() (the profiling build: make PROFILE=1)
uint32_t quill_count_mul, quill_count_sqr;

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
#else
typedef int quill_field_armv6m_is_assembly;   // ISO C: a translation unit is not empty
#endif
