// quill_secp256k1: libsecp256k1 (Bitcoin Core's signing library) as a MicroPython
// dynamic native module, for quillfw.secp256k1's optional native backend.
//
// No malloc: one context in a static buffer (secp256k1_context_preallocated_create);
// the tables are the library's precomputed constants, sized by the Makefile.
// Every function returns None (or False) where libsecp256k1 reports failure, and
// raises ValueError only for a wrong argument length. The Python side keeps the
// protocol rules (Core's low-R grinding loop, DER, which keys are accepted).
//
//   ecdsa_sign(seckey32, msg32, extra32|None) -> 64-byte r || s (low S) | None
//       secp256k1_ecdsa_sign with its RFC6979 nonce and extra entropy: CKey::Sign's
//       call, one grinding round.
//   ecdsa_sign_grind(seckey32, msg32) -> 64-byte r || s (low S, low R) | None
//       CKey::Sign with grind=true: Core's grinding rounds in one call, computing s
//       only for the round Core keeps (quill_ecdsa_grind.h).
//   ecdsa_verify(pubkey33|65, msg32, rs64) -> bool   (high S fails, as in Core)
//   pubkey(seckey32) -> 64-byte x || y | None
//   schnorr_sign(seckey32, msg, aux32) -> 64 bytes | None   (BIP340)
//   schnorr_verify(xonly32, msg, sig64) -> bool
#include "py/dynruntime.h"
#include "secp256k1.h"
#include "secp256k1_extrakeys.h"
#include "secp256k1_preallocated.h"
#include "secp256k1_schnorrsig.h"

// libsecp256k1 calls these only for an illegal argument or an internal error;
// the arguments are checked here first, so they have nothing to report to.
// Set when the library reported an illegal argument: mpy_init checks it after
// installing the Thumb-1 SHA-256 (which the library first tests against a known
// answer). Not static: mpy_ld cannot relocate static variables in .bss.
int quill_illegal;

void secp256k1_default_illegal_callback_fn(const char *str, void *data) {
    (void)str;
    (void)data;
    quill_illegal = 1;
}
void secp256k1_default_error_callback_fn(const char *str, void *data) {
    (void)str;
    (void)data;
}

// The library's malloc-based context functions are linked in but never called.
void *malloc(size_t n) {
    (void)n;
    return NULL;
}
void free(void *p) {
    (void)p;
}

// Not static: mpy_ld cannot relocate static variables in .bss. The context is
// 216 bytes on x64 (libsecp256k1 0.7); mpy_init checks that it fits.
unsigned char quill_ctx_buf[256] __attribute__((aligned(16)));
secp256k1_context *quill_ctx;

#ifdef __ARM_ARCH_6M__
// SHA-256's compression in Thumb-1 (quill_sha256_armv6m.S), for the context's hashes:
// RFC6979 in ecdsa_sign_grind, BIP340's tagged hashes
void quill_sha256_compress(uint32_t *state, const unsigned char *blocks, size_t n);
#endif

static const unsigned char *buffer_of(mp_obj_t obj, size_t *len) {
    mp_buffer_info_t info;
    mp_get_buffer_raise(obj, &info, MP_BUFFER_READ);
    *len = info.len;
    return info.buf;
}

static const unsigned char *buffer_n(mp_obj_t obj, size_t n) {
    size_t len;
    const unsigned char *buf = buffer_of(obj, &len);
    if (len != n) {
        mp_raise_ValueError(MP_ERROR_TEXT("wrong length"));
    }
    return buf;
}

static mp_obj_t ecdsa_sign(mp_obj_t key_in, mp_obj_t msg_in, mp_obj_t extra_in) {
    const unsigned char *key = buffer_n(key_in, 32);
    const unsigned char *msg = buffer_n(msg_in, 32);
    const unsigned char *extra = extra_in == mp_const_none ? NULL : buffer_n(extra_in, 32);
    secp256k1_ecdsa_signature sig;
    unsigned char out[64];
    if (!secp256k1_ecdsa_sign(quill_ctx, &sig, msg, key, secp256k1_nonce_function_rfc6979, extra)) {
        return mp_const_none;
    }
    secp256k1_ecdsa_signature_serialize_compact(quill_ctx, out, &sig);
    return mp_obj_new_bytes(out, 64);
}
static MP_DEFINE_CONST_FUN_OBJ_3(ecdsa_sign_obj, ecdsa_sign);

int quill_ecdsa_sign_grind(const secp256k1_context *ctx, unsigned char *out64, const unsigned char *msg32,
                           const unsigned char *seckey);

static mp_obj_t ecdsa_sign_grind(mp_obj_t key_in, mp_obj_t msg_in) {
    const unsigned char *key = buffer_n(key_in, 32);
    const unsigned char *msg = buffer_n(msg_in, 32);
    unsigned char out[64];
    if (!quill_ecdsa_sign_grind(quill_ctx, out, msg, key)) {
        return mp_const_none;
    }
    return mp_obj_new_bytes(out, 64);
}
static MP_DEFINE_CONST_FUN_OBJ_2(ecdsa_sign_grind_obj, ecdsa_sign_grind);

static mp_obj_t ecdsa_verify(mp_obj_t pub_in, mp_obj_t msg_in, mp_obj_t rs_in) {
    size_t pub_len;
    const unsigned char *pub = buffer_of(pub_in, &pub_len);
    const unsigned char *msg = buffer_n(msg_in, 32);
    const unsigned char *rs = buffer_n(rs_in, 64);
    secp256k1_pubkey pubkey;
    secp256k1_ecdsa_signature sig;
    if (!secp256k1_ec_pubkey_parse(quill_ctx, &pubkey, pub, pub_len)
        || !secp256k1_ecdsa_signature_parse_compact(quill_ctx, &sig, rs)) {
        return mp_const_false;
    }
    return mp_obj_new_bool(secp256k1_ecdsa_verify(quill_ctx, &sig, msg, &pubkey));
}
static MP_DEFINE_CONST_FUN_OBJ_3(ecdsa_verify_obj, ecdsa_verify);

static mp_obj_t pubkey(mp_obj_t key_in) {
    const unsigned char *key = buffer_n(key_in, 32);
    secp256k1_pubkey pk;
    unsigned char out[65];
    size_t out_len = sizeof(out);
    if (!secp256k1_ec_pubkey_create(quill_ctx, &pk, key)) {
        return mp_const_none;
    }
    secp256k1_ec_pubkey_serialize(quill_ctx, out, &out_len, &pk, SECP256K1_EC_UNCOMPRESSED);
    return mp_obj_new_bytes(out + 1, 64);
}
static MP_DEFINE_CONST_FUN_OBJ_1(pubkey_obj, pubkey);

static mp_obj_t schnorr_sign(mp_obj_t key_in, mp_obj_t msg_in, mp_obj_t aux_in) {
    const unsigned char *key = buffer_n(key_in, 32);
    size_t msg_len;
    const unsigned char *msg = buffer_of(msg_in, &msg_len);
    secp256k1_schnorrsig_extraparams params = SECP256K1_SCHNORRSIG_EXTRAPARAMS_INIT;
    params.ndata = (void *)buffer_n(aux_in, 32);
    secp256k1_keypair keypair;
    unsigned char out[64];
    if (!secp256k1_keypair_create(quill_ctx, &keypair, key)
        || !secp256k1_schnorrsig_sign_custom(quill_ctx, out, msg, msg_len, &keypair, &params)) {
        return mp_const_none;
    }
    return mp_obj_new_bytes(out, 64);
}
static MP_DEFINE_CONST_FUN_OBJ_3(schnorr_sign_obj, schnorr_sign);

static mp_obj_t schnorr_verify(mp_obj_t xonly_in, mp_obj_t msg_in, mp_obj_t sig_in) {
    const unsigned char *xonly = buffer_n(xonly_in, 32);
    size_t msg_len;
    const unsigned char *msg = buffer_of(msg_in, &msg_len);
    const unsigned char *sig = buffer_n(sig_in, 64);
    secp256k1_xonly_pubkey pk;
    if (!secp256k1_xonly_pubkey_parse(quill_ctx, &pk, xonly)) {
        return mp_const_false;
    }
    return mp_obj_new_bool(secp256k1_schnorrsig_verify(quill_ctx, sig, msg, msg_len, &pk));
}
static MP_DEFINE_CONST_FUN_OBJ_3(schnorr_verify_obj, schnorr_verify);

#ifdef QUILL_PROFILE
// The profiling build (make ARCH=armv6m PROFILE=1; tests/bench/bench_natmod_profile.py):
//   profile_counts() -> (field multiplications, squarings, 64-bit products) since the
//       last call, and resets them
//   profile_run(op, n): op 0 n field multiplications, 1 squarings, 2 64-bit
//       products, 3 nothing (the loop's own cost)
//   fe_mul(a40, b40) -> 40 bytes, fe_sqr(a40) -> 40 bytes: the field multiplication
//       and squaring on raw 10x26 limbs (ten little-endian uint32), unchecked, for
//       tests/mcu/test_natmod_field_on_mcu.py
//   fe_inv(a32) -> 32 bytes, scalar_inv(a32) -> 32 bytes: the constant-time inverses
//       mod p and mod n (quill_libsecp256k1_armv6m.c), big-endian
//   comb_scan(row, abs) -> 64 bytes: the comb's table lookup (quill_comb_armv6m.S) on
//       a row of COMB_POINTS 64-byte entries
//   sha256_compress(state32, blocks) -> 32 bytes: SHA-256's compression
//       (quill_sha256_armv6m.S) of whole 64-byte blocks, the state as eight
//       little-endian words
extern uint32_t quill_count_mul, quill_count_sqr, quill_count_lmul;
void secp256k1_fe_mul_inner(uint32_t *r, const uint32_t *a, const uint32_t *b);
void secp256k1_fe_sqr_inner(uint32_t *r, const uint32_t *a);
uint64_t quill_lmul(uint64_t a, uint64_t b);
void quill_test_fe_inv(unsigned char out[32], const unsigned char in[32]);
void quill_test_scalar_inv(unsigned char out[32], const unsigned char in[32]);
void quill_comb_scan(void *r, const void *row, uint32_t abs);
// not static: mpy_ld cannot relocate static variables in .bss
uint32_t quill_profile_fe[10];
volatile uint64_t quill_profile_sink;

static mp_obj_t profile_counts(void) {
    mp_obj_t counts[3] = {mp_obj_new_int_from_uint(quill_count_mul),
                          mp_obj_new_int_from_uint(quill_count_sqr),
                          mp_obj_new_int_from_uint(quill_count_lmul)};
    quill_count_mul = quill_count_sqr = quill_count_lmul = 0;
    return mp_obj_new_tuple(3, counts);
}
static MP_DEFINE_CONST_FUN_OBJ_0(profile_counts_obj, profile_counts);

static mp_obj_t profile_run(mp_obj_t op_in, mp_obj_t n_in) {
    mp_int_t op = mp_obj_get_int(op_in), n = mp_obj_get_int(n_in);
    uint32_t b[10] = {0x3FFFFFF, 0x2345678, 0x3ABCDEF, 0x1111111, 0x3FFFFFF,
                      0x0F0F0F0, 0x3333333, 0x2AAAAAA, 0x1555555, 0x3FFFFF};
    for (mp_int_t i = 0; i < n; i++) {
        if (op == 0) {
            secp256k1_fe_mul_inner(quill_profile_fe, quill_profile_fe, b);
        } else if (op == 1) {
            secp256k1_fe_sqr_inner(quill_profile_fe, quill_profile_fe);
        } else if (op == 2) {
            quill_profile_sink = quill_lmul(quill_profile_sink + i, 0x123456789ULL);
        }
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_2(profile_run_obj, profile_run);

static void limbs_of(uint32_t *n, mp_obj_t in) {
    const unsigned char *buf = buffer_n(in, 40);
    for (int i = 0; i < 10; i++) {
        n[i] = buf[4 * i] | (uint32_t)buf[4 * i + 1] << 8 | (uint32_t)buf[4 * i + 2] << 16
               | (uint32_t)buf[4 * i + 3] << 24;
    }
}

static mp_obj_t bytes_of_limbs(const uint32_t *n) {
    unsigned char out[40];
    for (int i = 0; i < 10; i++) {
        for (int j = 0; j < 4; j++) {
            out[4 * i + j] = (unsigned char)(n[i] >> (8 * j));
        }
    }
    return mp_obj_new_bytes(out, 40);
}

static mp_obj_t fe_mul(mp_obj_t a_in, mp_obj_t b_in) {
    uint32_t a[10], b[10], r[10];
    limbs_of(a, a_in);
    limbs_of(b, b_in);
    secp256k1_fe_mul_inner(r, a, b);
    return bytes_of_limbs(r);
}
static MP_DEFINE_CONST_FUN_OBJ_2(fe_mul_obj, fe_mul);

static mp_obj_t fe_sqr(mp_obj_t a_in) {
    uint32_t a[10], r[10];
    limbs_of(a, a_in);
    secp256k1_fe_sqr_inner(r, a);
    return bytes_of_limbs(r);
}
static MP_DEFINE_CONST_FUN_OBJ_1(fe_sqr_obj, fe_sqr);

static mp_obj_t fe_inv(mp_obj_t a_in) {
    unsigned char out[32];
    quill_test_fe_inv(out, buffer_n(a_in, 32));
    return mp_obj_new_bytes(out, 32);
}
static MP_DEFINE_CONST_FUN_OBJ_1(fe_inv_obj, fe_inv);

static mp_obj_t scalar_inv(mp_obj_t a_in) {
    unsigned char out[32];
    quill_test_scalar_inv(out, buffer_n(a_in, 32));
    return mp_obj_new_bytes(out, 32);
}
static MP_DEFINE_CONST_FUN_OBJ_1(scalar_inv_obj, scalar_inv);

static mp_obj_t comb_scan(mp_obj_t row_in, mp_obj_t abs_in) {
    const size_t points = (size_t)1 << (COMB_TEETH - 1);
    const unsigned char *row = buffer_n(row_in, 64 * points);
    mp_int_t abs = mp_obj_get_int(abs_in);
    uint32_t out[16];
    if (abs < 0 || (size_t)abs >= points) {
        mp_raise_ValueError(MP_ERROR_TEXT("index out of range"));
    }
    quill_comb_scan(out, row, (uint32_t)abs);
    return mp_obj_new_bytes((const unsigned char *)out, 64);
}
static MP_DEFINE_CONST_FUN_OBJ_2(comb_scan_obj, comb_scan);

static mp_obj_t sha256_compress(mp_obj_t state_in, mp_obj_t blocks_in) {
    uint32_t state[8];
    size_t len;
    const unsigned char *blocks = buffer_of(blocks_in, &len);
    memcpy(state, buffer_n(state_in, 32), 32);
    if (len % 64) {
        mp_raise_ValueError(MP_ERROR_TEXT("wrong length"));
    }
    quill_sha256_compress(state, blocks, len / 64);
    return mp_obj_new_bytes((const unsigned char *)state, 32);
}
static MP_DEFINE_CONST_FUN_OBJ_2(sha256_compress_obj, sha256_compress);
#endif

mp_obj_t mpy_init(mp_obj_fun_bc_t *self, size_t n_args, size_t n_kw, mp_obj_t *args) {
    MP_DYNRUNTIME_INIT_ENTRY
    if (secp256k1_context_preallocated_size(SECP256K1_CONTEXT_NONE) > sizeof(quill_ctx_buf)) {
        mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("secp256k1 context too large"));
    }
    quill_ctx = secp256k1_context_preallocated_create(quill_ctx_buf, SECP256K1_CONTEXT_NONE);
#ifdef __ARM_ARCH_6M__
    quill_illegal = 0;
    secp256k1_context_set_sha256_compression(quill_ctx, quill_sha256_compress);
    if (quill_illegal) {
        mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("SHA-256 compression failed its self-test"));
    }
#endif
    mp_store_global(MP_QSTR_ecdsa_sign, MP_OBJ_FROM_PTR(&ecdsa_sign_obj));
    mp_store_global(MP_QSTR_ecdsa_sign_grind, MP_OBJ_FROM_PTR(&ecdsa_sign_grind_obj));
    mp_store_global(MP_QSTR_ecdsa_verify, MP_OBJ_FROM_PTR(&ecdsa_verify_obj));
    mp_store_global(MP_QSTR_pubkey, MP_OBJ_FROM_PTR(&pubkey_obj));
    mp_store_global(MP_QSTR_schnorr_sign, MP_OBJ_FROM_PTR(&schnorr_sign_obj));
    mp_store_global(MP_QSTR_schnorr_verify, MP_OBJ_FROM_PTR(&schnorr_verify_obj));
#ifdef QUILL_PROFILE
    for (int i = 0; i < 10; i++) {
        quill_profile_fe[i] = 0x1234567 + i;
    }
    mp_store_global(MP_QSTR_profile_counts, MP_OBJ_FROM_PTR(&profile_counts_obj));
    mp_store_global(MP_QSTR_profile_run, MP_OBJ_FROM_PTR(&profile_run_obj));
    mp_store_global(MP_QSTR_fe_mul, MP_OBJ_FROM_PTR(&fe_mul_obj));
    mp_store_global(MP_QSTR_fe_sqr, MP_OBJ_FROM_PTR(&fe_sqr_obj));
    mp_store_global(MP_QSTR_fe_inv, MP_OBJ_FROM_PTR(&fe_inv_obj));
    mp_store_global(MP_QSTR_scalar_inv, MP_OBJ_FROM_PTR(&scalar_inv_obj));
    mp_store_global(MP_QSTR_comb_scan, MP_OBJ_FROM_PTR(&comb_scan_obj));
    mp_store_global(MP_QSTR_sha256_compress, MP_OBJ_FROM_PTR(&sha256_compress_obj));
#endif
    MP_DYNRUNTIME_INIT_EXIT
}
