// libsecp256k1 (its src/secp256k1.c, compiled from ../shared as on every other core) for
// ARMv6-M, with some of its static functions swapped for ones the Cortex-M0+ runs
// faster, each keeping the library's constant-time property and its exact result:
//   * the k*G comb's table lookup, in Thumb-1 (quill_comb_armv6m.S);
//   * the constant-time modular inverse (safegcd, secp256k1_modinv32: the field
//     inverse that makes each nonce's R affine, and the scalar inverse of the nonce);
//   * the point arithmetic's field cmov, add and negate, in Thumb-1
//     (quill_fe_ops_armv6m.S; below, before group_impl.h).
//
// How: a function's header is included first, so its definition keeps its name; then
// the name becomes a macro for the rest of the library.
//
// The comb:
// The library picks the comb entry for a block by a conditional move over every
// entry of the block's row (ecmult_gen_impl.h: secp256k1_ge_storage_cmov(&adds,
// &table[block][index], index == abs) for each index), which the M0+ runs at ~12
// cycles per word, reading and writing the result for each of the row's entries.
// quill_comb_scan reads the whole row once per call and ORs each entry's words under
// an all-ones or all-zero mask into registers: the same entry, the same memory
// accesses whatever the secret index is, at ~4.3 cycles per word.
//
// group_impl.h (the function's only definition) first, then the name as a macro for
// the library's one call, that lookup loop. At the loop's first index the macro
// scans the row (its address is &table[block][0] there) for the loop's `abs`; the
// remaining iterations do nothing. The macro names the loop's variables (index,
// abs): a library whose loop is written differently fails to compile here rather
// than sign wrongly, and tests/mcu/test_native_on_mcu.py checks the signatures
// against libsecp256k1's on the host.
//
// The inverse: the library computes its 20 rounds of 30 divsteps' matrix
// products (update_de and update_fg in its doc/safegcd_implementation.md) in signed
// 64-bit arithmetic, each product a call of the run-time ABI's 64x64-bit multiply
// (quill_lmul here) on sign-extended operands. quill_modinv32 runs the same rounds
// with the library's normalize_30 and its divsteps_30's steps (in Thumb-1,
// quill_divsteps_armv6m.S, whose masks stay in registers), and does the matrix products
// with quill_smul: a 32x32 -> 64-bit signed product inline (four MULS of 16-bit
// halves and a sign correction, no call, no 64-bit operands). Straight-line code
// with fixed trip counts, as the library's: constant time. The inverse is unique,
// so the result is the library's.
#define SECP256K1_BUILD
#include "secp256k1.h"
#include "secp256k1_preallocated.h"
#include "assumptions.h"
#include "util.h"
#include "modinv32_impl.h"
#include <stddef.h>

// a * b, signed 32x32 -> 64 bits, on a core whose MULS gives the low 32 bits: the
// unsigned product from four 16x16-bit MULS, then 2^32 * (b if a < 0, + a if b < 0)
// subtracted (a's two's-complement value is a_u - 2^32 [a < 0]). No branch.
static inline __attribute__((always_inline)) int64_t quill_smul(int32_t a, int32_t b) {
    uint32_t x = (uint32_t)a, y = (uint32_t)b, lo, hi, t, fix;
    __asm__(
        ".syntax unified\n\t"        // GCC wraps Thumb-1 inline assembly in divided syntax
        "asrs %[fix], %[x], #31\n\t"
        "ands %[fix], %[y]\n\t"
        "asrs %[t], %[y], #31\n\t"
        "ands %[t], %[x]\n\t"
        "adds %[fix], %[t]\n\t"      // the sign correction of the high word
        "lsrs %[hi], %[x], #16\n\t"  // ah
        "uxth %[x], %[x]\n\t"        // al
        "lsrs %[t], %[y], #16\n\t"   // bh
        "uxth %[y], %[y]\n\t"        // bl
        "movs %[lo], %[x]\n\t"
        "muls %[lo], %[y]\n\t"       // al * bl
        "muls %[x], %[t]\n\t"        // al * bh
        "muls %[y], %[hi]\n\t"       // bl * ah
        "muls %[hi], %[t]\n\t"       // ah * bh
        "adds %[x], %[y]\n\t"        // the middle sum, its carry at 2^48
        "movs %[t], #0\n\t"          // (MOVS leaves C alone)
        "adcs %[t], %[t]\n\t"
        "lsls %[t], %[t], #16\n\t"
        "adds %[hi], %[t]\n\t"
        "lsls %[t], %[x], #16\n\t"
        "lsrs %[x], %[x], #16\n\t"
        "adds %[lo], %[t]\n\t"
        "adcs %[hi], %[x]\n\t"
        "subs %[hi], %[fix]\n\t"
        ".syntax divided\n\t"
        : [x] "+l"(x), [y] "+l"(y), [lo] "=&l"(lo), [hi] "=&l"(hi), [t] "=&l"(t), [fix] "=&l"(fix)
        :
        : "cc");
    return (int64_t)(((uint64_t)hi << 32) | lo);
}

// quill_modinv_rows' work (quill_modinv_armv6m.S, which reads these offsets): limbs
// 1 to 8 of the products below, for both accumulators
typedef struct {
    int64_t ca, cb;            // the accumulators: in, the carries out of limb 0
    int32_t u, v, q, r;        // the transition matrix
    int32_t md, me;            // update_de's multiples of the modulus
    const int32_t *mod;        // the modulus' limbs (update_de), or NULL (update_fg)
    int32_t *a, *b;            // the two numbers' limbs, rewritten one limb down
    int32_t ai, bi, mi, count; // the assembly's own
} quill_rows;
typedef char quill_rows_layout[(offsetof(quill_rows, u) == 16 && offsetof(quill_rows, mod) == 40
                                && offsetof(quill_rows, count) == 64) ? 1 : -1];
void quill_modinv_rows(quill_rows *p);

static void quill_rows_start(quill_rows *p, const secp256k1_modinv32_trans2x2 *t, int32_t *a, int32_t *b) {
    p->u = t->u;
    p->v = t->v;
    p->q = t->q;
    p->r = t->r;
    p->a = a;
    p->b = b;
    p->ca = quill_smul(t->u, a[0]) + quill_smul(t->v, b[0]);
    p->cb = quill_smul(t->q, a[0]) + quill_smul(t->r, b[0]);
}

// [f, g] = t [f, g] / 2^30 (t's 30 divsteps make the low 30 bits of both zero)
static void quill_update_fg(secp256k1_modinv32_signed30 *f, secp256k1_modinv32_signed30 *g,
                            const secp256k1_modinv32_trans2x2 *t) {
    quill_rows p;
    quill_rows_start(&p, t, f->v, g->v);
    p.ca >>= 30;
    p.cb >>= 30;
    p.mod = NULL;
    quill_modinv_rows(&p);
    f->v[8] = (int32_t)p.ca;
    g->v[8] = (int32_t)p.cb;
}

// [d, e] = (t [d, e] + modulus [md, me]) / 2^30, with md, me chosen (from the signs
// of d and e and the low bits, through modulus^-1 mod 2^30) so that the sum's low 30
// bits are zero and d, e stay in (-2 modulus, modulus)
static void quill_update_de(secp256k1_modinv32_signed30 *d, secp256k1_modinv32_signed30 *e,
                            const secp256k1_modinv32_trans2x2 *t, const secp256k1_modinv32_modinfo *modinfo) {
    const int32_t low30 = (int32_t)(UINT32_MAX >> 2);
    const int32_t sd = d->v[8] >> 31, se = e->v[8] >> 31;
    quill_rows p;
    int32_t md = (t->u & sd) + (t->v & se), me = (t->q & sd) + (t->r & se);
    quill_rows_start(&p, t, d->v, e->v);
    md -= (modinfo->modulus_inv30 * (uint32_t)p.ca + md) & low30;
    me -= (modinfo->modulus_inv30 * (uint32_t)p.cb + me) & low30;
    p.ca += quill_smul(modinfo->modulus.v[0], md);
    p.cb += quill_smul(modinfo->modulus.v[0], me);
    p.ca >>= 30;
    p.cb >>= 30;
    p.md = md;
    p.me = me;
    p.mod = modinfo->modulus.v;
    quill_modinv_rows(&p);
    d->v[8] = (int32_t)p.ca;
    e->v[8] = (int32_t)p.cb;
}

// the library's secp256k1_modinv32_divsteps_30, the same steps in Thumb-1 with the
// masks in registers (quill_divsteps_armv6m.S)
int32_t quill_divsteps_30(int32_t zeta, uint32_t f0, uint32_t g0, secp256k1_modinv32_trans2x2 *t);

// x = x^-1 mod the modulus (0 for 0), in constant time: 20 rounds of 30 divsteps
// (600 >= the 590 a 256-bit input needs), d the inverse up to sign at the end
static void quill_modinv32(secp256k1_modinv32_signed30 *x, const secp256k1_modinv32_modinfo *modinfo) {
    secp256k1_modinv32_signed30 d = {{0}}, e = {{1}}, f = modinfo->modulus, g = *x;
    int32_t zeta = -1;
    int i;
    for (i = 0; i < 20; i++) {
        secp256k1_modinv32_trans2x2 t;
        zeta = quill_divsteps_30(zeta, (uint32_t)f.v[0], (uint32_t)g.v[0], &t);
        quill_update_de(&d, &e, &t, modinfo);
        quill_update_fg(&f, &g, &t);
    }
    secp256k1_modinv32_normalize_30(&d, f.v[8], modinfo);
    *x = d;
}

#define secp256k1_modinv32(x, modinfo) quill_modinv32((x), (modinfo))

#include "field_impl.h"

// the point arithmetic's conditional move, addition and negation of field elements
// in Thumb-1 (quill_fe_ops_armv6m.S): the library's results, limbs moved by LDM/STM.
// The field's own definitions above keep their names; the library's names for the
// calls, field.h's macros, point at these for the code that follows (group_impl.h,
// the k*G comb, ECDSA and BIP340).
void quill_fe_cmov(secp256k1_fe *r, const secp256k1_fe *a, int flag);
void quill_fe_add(secp256k1_fe *r, const secp256k1_fe *a);
void quill_fe_negate(secp256k1_fe *r, const secp256k1_fe *a, int m);
typedef char quill_fe_layout[sizeof(secp256k1_fe) == 40 ? 1 : -1];
#undef secp256k1_fe_cmov
#define secp256k1_fe_cmov quill_fe_cmov
#undef secp256k1_fe_add
#define secp256k1_fe_add quill_fe_add
#undef secp256k1_fe_negate_unchecked
#define secp256k1_fe_negate_unchecked quill_fe_negate

#include "group_impl.h"

// r = row[abs], reading every entry of row[0 .. COMB_POINTS) (quill_comb_armv6m.S)
void quill_comb_scan(secp256k1_ge_storage *r, const secp256k1_ge_storage *row, uint32_t abs);

#define secp256k1_ge_storage_cmov(r, a, flag) \
    do { \
        if (index == 0) { \
            quill_comb_scan((r), (a), abs); \
        } \
    } while (0)

#include "secp256k1.c"
#include "quill_ecdsa_grind.h"

#ifdef QUILL_PROFILE
// The profiling build's hooks for tests/mcu/test_natmod_field_on_mcu.py (called from
// quill_secp256k1.c): the constant-time inverses on 32-byte big-endian numbers, taken
// mod p and mod n first; the inverse of 0 is 0, as the library's.
void quill_test_fe_inv(unsigned char out[32], const unsigned char in[32]) {
    secp256k1_fe x;
    secp256k1_fe_set_b32_mod(&x, in);
    secp256k1_fe_inv(&x, &x);
    secp256k1_fe_normalize(&x);
    secp256k1_fe_get_b32(out, &x);
}

void quill_test_scalar_inv(unsigned char out[32], const unsigned char in[32]) {
    secp256k1_scalar x;
    secp256k1_scalar_set_b32(&x, in, NULL);
    secp256k1_scalar_inverse(&x, &x);
    secp256k1_scalar_get_b32(out, &x);
}
#endif
