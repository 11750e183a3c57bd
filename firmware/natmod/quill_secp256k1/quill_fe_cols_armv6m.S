// Field multiplication and squaring modulo p = 2^256 - 2^32 - 977 for ARMv6-M
// (RP2040's Cortex-M0+), hand-scheduled Thumb-1, plugged into libsecp256k1's 10x26
// field through its external-implementation hook (USE_EXTERNAL_ASM: the library then
// calls these instead of its own):
//
//   void secp256k1_fe_mul_inner(uint32_t r[10], const uint32_t a[10], const uint32_t b[10]);
//   void secp256k1_fe_sqr_inner(uint32_t r[10], const uint32_t a[10]);
//
// (named quill_fe_mul_cols / quill_fe_sqr_cols in the profiling build, where
// quill_profile_armv6m.c wraps them with call counters). A field element is
// sum(n[i] << 26*i), i = 0..9. Inputs have magnitude <= 8 (limbs < 2^30); r may be
// a or b. The output has magnitude 1 (n[i] < 2^27, n[9] < 2^23) and is congruent to
// the product mod p, not necessarily normalized (the library normalizes before any
// byte leaves it, so the signatures are the same bytes).
//
// Why this shape: ARMv6-M's only multiply is MULS (32x32 -> low 32 bits), and C
// compiled for it calls libgcc's __aeabi_lmul for every 64-bit product. Here each
// input is first carried to limbs below 2^26 (one pass, folding what lies above
// 2^256 with 2^256 == 2^32 + 977, as libsecp256k1's normalize_weak does) and every
// limb is split into 13-bit halves, kept on the stack with the halves' sum. A limb
// product is then three MULS below 2^28 (low halves, high halves, sums: Karatsuba
// at 13 bits), and a column of at most ten limb products sums without any carry in
// three 32-bit accumulators. Two columns are summed together, so each half of a_i
// is loaded once for b_{k-i} and b_{k+1-i}: 21 instructions per two limb products.
// At a column's end one 26-bit limb is kept and the rest carried; the twenty limbs
// are then folded to ten (FOLD). ~1,870 instructions per multiplication and ~1,320
// per squaring (the C it replaces, four MULS per limb product, took 2,495 and 1,645).
//
// Constant time: no branch and no memory index depends on the data (the loops are
// unrolled by the assembler's macros; every address is a constant offset from sp or
// from r, a or b). r12 holds the carry between columns.

#ifdef QUILL_PROFILE
#define FE_MUL quill_fe_mul_cols
#define FE_SQR quill_fe_sqr_cols
#else
#define FE_MUL secp256k1_fe_mul_inner
#define FE_SQR secp256k1_fe_sqr_inner
#endif

    .syntax unified
    .thumb
    .text
    .altmacro

// stack frame
    .equ AL, 0          // a's low 13-bit halves, 10 words
    .equ AH, 40         // a's high halves
    .equ AS, 80         // their sums
    .equ BL, 120        // b's low halves
    .equ BH, 160        // b's high halves
    .equ BS, 200        // their sums
    .equ T, 240         // the product's twenty 26-bit limbs
    .equ OUTP, 320      // r
    .equ FRAME, 328

// Carry the ten limbs at [p] below 2^26 (the part of limb 9 at or above bit 22 is
// folded into limbs 0 and 1 first: x * 2^256 == x * 977 + x * 2^32) and store their
// 13-bit halves and the halves' sums at sp + lo, hi, sum. Uses r0-r4.
.macro SPLIT p, lo, hi, sum
    ldr r0, [\p, #36]
    lsrs r1, r0, #22            // x, < 2^8
    lsls r0, r0, #10
    lsrs r0, r0, #10
    str r0, [sp, #(\hi + 36)]   // limb 9, below 2^22, parked in its high half's slot
    movs r2, #0xF4
    lsls r2, r2, #2
    adds r2, #1                 // 977
    muls r2, r1                 // x * 977
    ldr r3, [\p, #0]
    adds r3, r2                 // w = limb 0 + x * 977, < 2^31
    lsls r1, r1, #6             // x * 2^32 = (x << 6) * 2^26: added to limb 1
    SPLIT_LIMB \p, 0, \lo, \hi, \sum
.endm

// w (r3) is limb i plus the carry in; r1 what limb i + 1 gets besides its carry
.macro SPLIT_LIMB p, i, lo, hi, sum
    .if \i < 9
        lsls r4, r3, #6         // (w mod 2^26) << 6
        lsrs r2, r3, #26        // carry out
        lsrs r0, r4, #19        // high half, bits 13..25
        lsls r4, r4, #13
        lsrs r4, r4, #19        // low half, bits 0..12
    .else
        lsrs r0, r3, #13        // limb 9: below 2^22 + 2^6, no carry out of the field
        lsls r4, r3, #19
        lsrs r4, r4, #19
    .endif
    str r4, [sp, #(\lo + 4 * \i)]
    str r0, [sp, #(\hi + 4 * \i)]
    adds r4, r0
    str r4, [sp, #(\sum + 4 * \i)]
    .if \i < 9
        .if \i < 8
            ldr r3, [\p, #(4 * \i + 4)]
        .else
            ldr r3, [sp, #(\hi + 36)]   // limb 9 (parked)
        .endif
        adds r3, r2
        .if \i == 0
            adds r3, r1
        .endif
        SPLIT_LIMB \p, %(\i + 1), \lo, \hi, \sum
    .endif
.endm

// Products. Limb x_i = xl + xh * 2^13 (halves below 2^13, xs = xl + xh below 2^14);
// x_i * y_j = xl*yl + (xs*ys - xl*yl - xh*yh) * 2^13 + xh*yh * 2^26, so a column
// sums three kinds of products, each below 2^28: LL (xl*yl), HH (xh*yh) and SS
// (xs*ys), ten at most per column: LL, HH < 2^29.4 and SS < 2^31.4, no carries.
// Two columns k, k + 1 are summed together, so that x_i is loaded once for
// y_{k-i} and y_{k+1-i}: r2, r3, r4 = LL, HH, SS of column k; r5, r6, r7 those of
// column k + 1; r0, r1 scratch. f0 / f1: the column's next product is its first
// (MOVS instead of ADDS).

.macro ACC reg, src, col
    .if \col == 0
        .if f0
            movs \reg, \src
        .else
            adds \reg, \src
        .endif
    .else
        .if f1
            movs \reg, \src
        .else
            adds \reg, \src
        .endif
    .endif
.endm

// one kind (offsets xo, yo) of x_i * y_j (column k) and x_i * y_{j+1} (column k + 1)
.macro PAIR1 i, j, xo, yo, r0k, r1k
    ldr r0, [sp, #(\xo + 4 * \i)]
    ldr r1, [sp, #(\yo + 4 * \j)]
    muls r1, r0
    ACC \r0k, r1, 0
    ldr r1, [sp, #(\yo + 4 * \j + 4)]
    muls r1, r0
    ACC \r1k, r1, 1
.endm

.macro PAIR i, j, xl, xh, xs, yl, yh, ys
    PAIR1 \i, \j, \xl, \yl, r2, r5
    PAIR1 \i, \j, \xh, \yh, r3, r6
    PAIR1 \i, \j, \xs, \ys, r4, r7
    .set f0, 0
    .set f1, 0
.endm

// x_i * y_j into column col (0: k, 1: k + 1)
.macro SINGLE1 i, j, xo, yo, reg, col
    ldr r0, [sp, #(\xo + 4 * \i)]
    ldr r1, [sp, #(\yo + 4 * \j)]
    muls r1, r0
    ACC \reg, r1, \col
.endm

.macro SINGLE i, j, xl, xh, xs, yl, yh, ys, col
    .if \col == 0
        SINGLE1 \i, \j, \xl, \yl, r2, 0
        SINGLE1 \i, \j, \xh, \yh, r3, 0
        SINGLE1 \i, \j, \xs, \ys, r4, 0
        .set f0, 0
    .else
        SINGLE1 \i, \j, \xl, \yl, r5, 1
        SINGLE1 \i, \j, \xh, \yh, r6, 1
        SINGLE1 \i, \j, \xs, \ys, r7, 1
        .set f1, 0
    .endif
.endm

// x_i^2 into column col
.macro SQUARE1 i, xo, reg, col
    ldr r0, [sp, #(\xo + 4 * \i)]
    muls r0, r0
    ACC \reg, r0, \col
.endm

.macro SQUARE i, col
    .if \col == 0
        SQUARE1 \i, AL, r2, 0
        SQUARE1 \i, AH, r3, 0
        SQUARE1 \i, AS, r4, 0
        .set f0, 0
    .else
        SQUARE1 \i, AL, r5, 1
        SQUARE1 \i, AH, r6, 1
        SQUARE1 \i, AS, r7, 1
        .set f1, 0
    .endif
.endm

// Column k is complete in L, H, S (+ the carry in r12): MM = S - L - H (< 2^31) is
// the middle kind; the column is L + MM * 2^13 + H * 2^26. Store its low 26 bits as
// t[k] and carry the rest (< 2^30) to column k + 1. Uses r0.
.macro COLEND k, l, h, s
    subs \s, \s, \l
    subs \s, \s, \h
    .if \k > 0
        mov r0, r12
        adds \l, r0
    .endif
    lsls r0, \s, #19
    lsrs r0, r0, #6             // (MM mod 2^13) << 13
    adds \l, r0                 // < 2^31
    lsrs \s, \s, #13
    adds \h, \s
    lsrs r0, \l, #26
    adds \h, r0                 // the carry
    mov r12, \h
    lsls \l, \l, #6
    lsrs \l, \l, #6
    str \l, [sp, #(T + 4 * \k)]
    .if \k == 18
        str \h, [sp, #(T + 76)] // t[19]
    .endif
.endm

// Fold the twenty limbs t[k] at sp + T into r (at [sp, #OUTP]), magnitude 1:
// 2^260 == 2^4 * (2^32 + 977) = 0x400 * 2^26 + 0x3D10 (mod p), so t[k + 10] adds
// t[k + 10] * 0x3D10 to limb k and t[k + 10] * 0x400 to limb k + 1. Each t[k + 10]
// is split into 13-bit halves xl, xh so that every product fits 32 bits:
//   limb k     += xl * 0x3D10 + ((xh * 0x3D10) mod 2^13) << 13
//   limb k + 1 += (xh * 0x3D10) >> 13 + (t[k + 10] mod 2^16) << 10
//   limb k + 2 += t[k + 10] >> 16
// r0 = the limb being summed, r4 and r5 what limbs k and k + 1 have pending (the
// carry included), r6 = 0x3D10, r7 = r. What then lies at or above 2^256 (< 2^42)
// is folded once more with 2^256 == 2^32 + 977.
.macro FOLD
    ldr r7, [sp, #OUTP]
    movs r6, #0xF4
    lsls r6, r6, #6
    adds r6, #0x10              // 0x3D10
    FOLD_LIMB 0
    // r0: limb 9, r4: pending at 2^260 (no carry of limb 9 in it), r5 at 2^286
    lsrs r2, r0, #22
    lsls r0, r0, #10
    lsrs r0, r0, #10
    str r0, [r7, #36]           // limb 9, below 2^22
    lsls r4, r4, #4
    adds r4, r2                 // y: what lies at 2^256 below 2^286, < 2^31
    lsrs r1, r4, #26
    lsls r5, r5, #4
    adds r5, r1                 // X >> 26, < 2^16
    lsls r4, r4, #6
    lsrs r4, r4, #6             // X mod 2^26
    movs r6, #0xF4
    lsls r6, r6, #2
    adds r6, #1                 // 977
    // limb 0 += (X mod 2^26) * 977, through 13-bit halves
    ldr r0, [r7, #0]
    lsls r2, r4, #19
    lsrs r2, r2, #19
    muls r2, r6
    adds r0, r2
    lsrs r3, r4, #13
    muls r3, r6
    lsls r2, r3, #19
    lsrs r2, r2, #6
    adds r0, r2
    lsrs r3, r3, #13
    lsrs r2, r0, #26
    lsls r0, r0, #6
    lsrs r0, r0, #6
    str r0, [r7, #0]
    // limb 1 += carry + the rest of that + (X >> 26) * 977 + (X mod 2^20) << 6 (X * 2^32)
    ldr r1, [r7, #4]
    adds r1, r2
    adds r1, r3
    movs r2, r5
    muls r2, r6
    adds r1, r2
    lsls r2, r4, #12
    lsrs r2, r2, #6
    adds r1, r2
    lsrs r2, r1, #26
    lsls r1, r1, #6
    lsrs r1, r1, #6
    str r1, [r7, #4]
    // limb 2 += carry + (X mod 2^26) >> 20 + (X >> 26) << 6: below 2^27
    ldr r0, [r7, #8]
    adds r0, r2
    lsrs r2, r4, #20
    adds r0, r2
    lsls r5, r5, #6
    adds r0, r5
    str r0, [r7, #8]
.endm

.macro FOLD_LIMB k
    ldr r0, [sp, #(T + 4 * \k)]
    .if \k > 0
        adds r0, r4
    .endif
    ldr r1, [sp, #(T + 40 + 4 * \k)]
    lsls r2, r1, #19
    lsrs r2, r2, #19
    muls r2, r6                 // xl * 0x3D10, < 2^27
    adds r0, r2
    lsrs r3, r1, #13
    muls r3, r6                 // xh * 0x3D10, < 2^28
    lsls r2, r3, #19
    lsrs r2, r2, #6
    adds r0, r2
    lsrs r3, r3, #13
    lsls r2, r1, #16
    lsrs r2, r2, #6
    .if \k > 0
        adds r4, r5, r3
    .else
        movs r4, r3
    .endif
    adds r4, r2
    lsrs r5, r1, #16
    .if \k < 9
        lsrs r2, r0, #26
        adds r4, r2
        lsls r0, r0, #6
        lsrs r0, r0, #6
        str r0, [r7, #(4 * \k)]
        FOLD_LIMB %(\k + 1)
    .endif
.endm
// columns k and k + 1 of a * b (k even): column k has a_i * b_{k-i} for
// max(0, k-9) <= i <= min(k, 9), column k + 1 the same with k + 1
.macro MULPAIR k
    .set f0, 1
    .set f1, 1
    .if \k >= 9
        SINGLE %(\k - 9), 9, AL, AH, AS, BL, BH, BS, 0
    .endif
    .if \k >= 8
        .set lo_i, \k - 8
    .else
        .set lo_i, 0
    .endif
    .if \k <= 9
        .set hi_i, \k
    .else
        .set hi_i, 9
    .endif
    MULPAIRS \k, %lo_i, %hi_i
    .if \k + 1 <= 9
        SINGLE %(\k + 1), 0, AL, AH, AS, BL, BH, BS, 1
    .endif
    COLEND \k, r2, r3, r4
    COLEND %(\k + 1), r5, r6, r7
.endm

.macro MULPAIRS k, i, last
    PAIR \i, %(\k - \i), AL, AH, AS, BL, BH, BS
    .if \i < \last
        MULPAIRS \k, %(\i + 1), \last
    .endif
.endm

.macro MULCOLUMNS k
    .if \k < 18
        MULPAIR \k
        MULCOLUMNS %(\k + 2)
    .else
        .set f0, 1
        SINGLE 9, 9, AL, AH, AS, BL, BH, BS, 0
        COLEND 18, r2, r3, r4
    .endif
.endm

// columns k and k + 1 of a^2 (k even): the cross products a_i * a_j, i < j, twice,
// and the square a_{k/2}^2 in column k
.macro SQRPAIR k
    .set f0, 1
    .set f1, 1
    .set x0, 0                  // column k has cross products
    .if \k >= 9
        SINGLE %(\k - 9), 9, AL, AH, AS, AL, AH, AS, 0
        .set x0, 1
    .endif
    .if \k >= 8
        .set lo_i, \k - 8
    .else
        .set lo_i, 0
    .endif
    .set hi_i, (\k / 2) - 1     // i < k - i for both columns: i <= k/2 - 1
    .if lo_i <= hi_i
        SQRPAIRS \k, %lo_i, %hi_i
        .set x0, 1
    .endif
    // i = k/2 with a_{k/2+1}: column k + 1 only
    SINGLE %(\k / 2), %(\k / 2 + 1), AL, AH, AS, AL, AH, AS, 1
    .if x0
        lsls r2, r2, #1
        lsls r3, r3, #1
        lsls r4, r4, #1
    .endif
    lsls r5, r5, #1
    lsls r6, r6, #1
    lsls r7, r7, #1
    SQUARE %(\k / 2), 0
    COLEND \k, r2, r3, r4
    COLEND %(\k + 1), r5, r6, r7
.endm

.macro SQRPAIRS k, i, last
    PAIR \i, %(\k - \i), AL, AH, AS, AL, AH, AS
    .if \i < \last
        SQRPAIRS \k, %(\i + 1), \last
    .endif
.endm

.macro SQRCOLUMNS k
    .if \k < 18
        SQRPAIR \k
        SQRCOLUMNS %(\k + 2)
    .else
        .set f0, 1
        SQUARE 9, 0
        COLEND 18, r2, r3, r4
    .endif
.endm

    .global FE_MUL
    .type FE_MUL, %function
    .thumb_func
FE_MUL:
    push {r4, r5, r6, r7, lr}
    sub sp, #FRAME
    str r0, [sp, #OUTP]
    movs r6, r1
    movs r7, r2
    SPLIT r6, AL, AH, AS
    SPLIT r7, BL, BH, BS
    MULCOLUMNS 0
    FOLD
    add sp, #FRAME
    pop {r4, r5, r6, r7, pc}
    .size FE_MUL, . - FE_MUL

    .global FE_SQR
    .type FE_SQR, %function
    .thumb_func
FE_SQR:
    push {r4, r5, r6, r7, lr}
    sub sp, #FRAME
    str r0, [sp, #OUTP]
    movs r6, r1
    SPLIT r6, AL, AH, AS
    SQRCOLUMNS 0
    FOLD
    add sp, #FRAME
    pop {r4, r5, r6, r7, pc}
    .size FE_SQR, . - FE_SQR
