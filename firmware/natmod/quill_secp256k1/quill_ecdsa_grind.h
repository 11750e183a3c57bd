// Bitcoin Core's ECDSA signing with low-R grinding (src/key.cpp, CKey::Sign with
// grind=true) in one call, for quill_secp256k1.c's ecdsa_sign_grind. Included at the
// end of the translation unit that compiles libsecp256k1's secp256k1.c
// (quill_libsecp256k1.c, quill_libsecp256k1_armv6m.c), whose static functions it uses.
//
// Core calls secp256k1_ecdsa_sign with no extra entropy, then, while the signature's
// r has its top bit set, again with 32 bytes of extra entropy holding a counter 1, 2,
// 3... in little-endian. Each of those calls (secp256k1_ecdsa_sign_inner) takes
// RFC6979 candidates (count 0, 1, ...) until one is a valid nonce k and gives
// r = (k*G).x mod n and s = k^-1 (z + r*d) both nonzero, then makes s low.
//
// The same rounds and candidates here, with the work a rejected round never needed
// left out: a round's r decides whether Core keeps it, and s is nonzero exactly when
// z + r*d is (k is nonzero), so only the kept round pays for the scalar inverse of
// k and the product with it; k*G's affine y (only recovery ids use it) is not
// computed. The nonces, the rounds and the result are libsecp256k1's, byte for byte.
//
// Constant time where the library is: the same nonce function, ecmult_gen and
// inverses on the secrets; the branches are on what the library itself declassifies
// (a candidate's validity, r and s being nonzero) and on r's top bit, which the
// signature (or, for a rejected round, the number of rounds) shows, as in Core.

// RFC6979's first candidate (count 0) as nonce_function_rfc6979 derives it (RFC6979
// 3.2 b-h, HMAC-SHA256, seeded with key32 || msg mod n || extra32), with fewer SHA-256
// compressions than the library's HMAC-DRBG (secp256k1_rfc6979_hmac_sha256_*), which
// pads and compresses a key's inner and outer blocks for every HMAC under it:
//   * each key's two padded blocks are compressed once (K is used for two HMACs in a
//     row in 3.2 d-e and f-g-h), here by keeping the keyed state and copying it;
//   * the first HMAC's key (K = 0) and the start of its message (V = 0x01..,
//     0x00, key32[0..30]) are the same in every grinding round: start holds that
//     state, compressed once per signature (quill_rfc6979_start), from the K = 0
//     key's padded blocks, compressed once (quill_rfc6979_k0).
// 15 compressions for a round without extra data, 17 with it, against 22 and 24; the
// same bytes. The SHA-256 inputs have fixed lengths: constant time.
// HMAC-SHA256 keyed with RFC6979's initial K (32 zero bytes): its two padded blocks,
// compressed at the first signature (not static: mpy_ld cannot relocate static
// variables in .bss)
secp256k1_hmac_sha256 quill_rfc6979_k0;
int quill_rfc6979_k0_ready;

static void quill_rfc6979_start(const secp256k1_hash_ctx *h, secp256k1_hmac_sha256 *start,
                                const unsigned char *key32) {
    unsigned char buf[33];
    if (!quill_rfc6979_k0_ready) {
        memset(buf, 0, 32);
        secp256k1_hmac_sha256_initialize(h, &quill_rfc6979_k0, buf, 32);   // 3.2 c: K = 0x00 0x00 ...
        quill_rfc6979_k0_ready = 1;
    }
    *start = quill_rfc6979_k0;
    memset(buf, 1, 32);                                      // 3.2 b: V = 0x01 0x01 ...
    buf[32] = 0;
    secp256k1_hmac_sha256_write(h, start, buf, 33);
    secp256k1_hmac_sha256_write(h, start, key32, 31);       // the inner hash's second block
}

static void quill_rfc6979_first(const secp256k1_hash_ctx *h, unsigned char *nonce32,
                                const secp256k1_hmac_sha256 *start, const unsigned char *key32,
                                const unsigned char *msgmod32, const unsigned char *extra32) {
    static const unsigned char one[1] = {0x01};
    secp256k1_hmac_sha256 keyed, hmac;
    unsigned char k[32], v[32];
    // 3.2 d: K = HMAC_K(V || 0x00 || seed)
    hmac = *start;
    secp256k1_hmac_sha256_write(h, &hmac, key32 + 31, 1);
    secp256k1_hmac_sha256_write(h, &hmac, msgmod32, 32);
    if (extra32 != NULL) {
        secp256k1_hmac_sha256_write(h, &hmac, extra32, 32);
    }
    secp256k1_hmac_sha256_finalize(h, &hmac, k);
    // 3.2 e: V = HMAC_K(V)
    secp256k1_hmac_sha256_initialize(h, &keyed, k, 32);
    memset(v, 1, 32);
    hmac = keyed;
    secp256k1_hmac_sha256_write(h, &hmac, v, 32);
    secp256k1_hmac_sha256_finalize(h, &hmac, v);
    // 3.2 f: K = HMAC_K(V || 0x01 || seed)
    hmac = keyed;
    secp256k1_hmac_sha256_write(h, &hmac, v, 32);
    secp256k1_hmac_sha256_write(h, &hmac, one, 1);
    secp256k1_hmac_sha256_write(h, &hmac, key32, 32);
    secp256k1_hmac_sha256_write(h, &hmac, msgmod32, 32);
    if (extra32 != NULL) {
        secp256k1_hmac_sha256_write(h, &hmac, extra32, 32);
    }
    secp256k1_hmac_sha256_finalize(h, &hmac, k);
    // 3.2 g: V = HMAC_K(V)
    secp256k1_hmac_sha256_initialize(h, &keyed, k, 32);
    hmac = keyed;
    secp256k1_hmac_sha256_write(h, &hmac, v, 32);
    secp256k1_hmac_sha256_finalize(h, &hmac, v);
    // 3.2 h: the first candidate, V = HMAC_K(V)
    hmac = keyed;
    secp256k1_hmac_sha256_write(h, &hmac, v, 32);
    secp256k1_hmac_sha256_finalize(h, &hmac, nonce32);
    secp256k1_hmac_sha256_clear(&keyed);
    secp256k1_hmac_sha256_clear(&hmac);
    secp256k1_memclear_explicit(k, sizeof(k));
    secp256k1_memclear_explicit(v, sizeof(v));
}

// out64 = r || s (big-endian, low S) with Core's grinding; 0 (and zeros) when the
// secret key is invalid, as secp256k1_ecdsa_sign
int quill_ecdsa_sign_grind(const secp256k1_context *ctx, unsigned char *out64, const unsigned char *msg32,
                           const unsigned char *seckey) {
    const secp256k1_hash_ctx *hash_ctx = secp256k1_get_hash_context(ctx);
    secp256k1_scalar sec, msg, non, r, n, s;
    secp256k1_gej rj;
    secp256k1_fe zi, z2, x;
    secp256k1_hmac_sha256 start;
    unsigned char extra[32] = {0}, nonce32[32], b[32], msgmod32[32];
    uint32_t round = 0;
    int is_sec_valid, ok;

    is_sec_valid = secp256k1_scalar_set_b32_seckey(&sec, seckey);
    secp256k1_scalar_cmov(&sec, &secp256k1_scalar_one, !is_sec_valid);
    secp256k1_scalar_set_b32(&msg, msg32, NULL);
    secp256k1_scalar_get_b32(msgmod32, &msg);
    quill_rfc6979_start(hash_ctx, &start, seckey);
    for (;;) {
        unsigned int count = 0;
        for (;; count++) {   // one secp256k1_ecdsa_sign call's candidates
            if (count == 0) {
                quill_rfc6979_first(hash_ctx, nonce32, &start, seckey, msgmod32, round ? extra : NULL);
            } else {   // a later candidate (r or s was 0, or k >= n: p < 2^-127): the library's
                nonce_function_rfc6979_impl(hash_ctx, nonce32, msg32, seckey, NULL, round ? extra : NULL, count);
            }
            ok = secp256k1_scalar_set_b32_seckey(&non, nonce32);
            secp256k1_declassify(ctx, &ok, sizeof(ok));
            if (!ok) {
                continue;
            }
            // r = x(k*G) mod n (secp256k1_ecdsa_sig_sign's, without y)
            secp256k1_ecmult_gen_gej(&ctx->ecmult_gen_ctx, &rj, &non);
            secp256k1_fe_inv(&zi, &rj.z);
            secp256k1_fe_sqr(&z2, &zi);
            secp256k1_fe_mul(&x, &rj.x, &z2);
            secp256k1_gej_clear(&rj);
            secp256k1_fe_normalize(&x);
            secp256k1_fe_get_b32(b, &x);
            secp256k1_scalar_set_b32(&r, b, NULL);
            secp256k1_scalar_mul(&n, &r, &sec);
            secp256k1_scalar_add(&n, &n, &msg);
            ok = !secp256k1_scalar_is_zero(&r) & !secp256k1_scalar_is_zero(&n);
            secp256k1_declassify(ctx, &ok, sizeof(ok));
            if (ok) {
                break;
            }
        }
        secp256k1_scalar_get_b32(out64, &r);
        if (!(out64[0] & 0x80)) {   // Core's SigHasLowR
            break;
        }
        round++;
        extra[0] = (unsigned char)round;   // WriteLE32(extra_entropy, ++counter)
        extra[1] = (unsigned char)(round >> 8);
        extra[2] = (unsigned char)(round >> 16);
        extra[3] = (unsigned char)(round >> 24);
    }
    secp256k1_scalar_inverse(&s, &non);
    secp256k1_scalar_mul(&s, &s, &n);
    secp256k1_scalar_cond_negate(&s, secp256k1_scalar_is_high(&s));
    secp256k1_scalar_get_b32(out64 + 32, &s);
    // as secp256k1_ecdsa_sign_inner: the key's validity joins the result only here
    secp256k1_memclear_explicit(nonce32, sizeof(nonce32));
    secp256k1_memclear_explicit(b, sizeof(b));
    secp256k1_hmac_sha256_clear(&start);
    secp256k1_fe_clear(&zi);
    secp256k1_fe_clear(&z2);
    secp256k1_scalar_clear(&msg);
    secp256k1_scalar_clear(&non);
    secp256k1_scalar_clear(&sec);
    secp256k1_scalar_clear(&n);
    secp256k1_memczero(out64, 64, !is_sec_valid);
    return is_sec_valid;
}
