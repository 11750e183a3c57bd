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
// three 32-bit accumulators. Columns are summed three at a time, one kind of
// product at a time, so that each half of a_i is loaded once for three columns and
// each half of b_j stays in a register for the three it falls in: two loads per
// three MULS (the three finished sums of the first two kinds wait in r8-r12 and lr).
// MULS overwrites a y_j at its last use, so a step of three products copies one
// register. At a column's end a limb below 2^30.5 is kept and the rest carried; the
// twenty limbs are then folded to ten (FOLD). ~2,060 cycles per multiplication and
// ~1,480 per squaring on the Cortex-M0+ (~1,500 before the squares added in their
// steps, KDIAG; 2,285 and 1,630 before the last-use MULS, the
// STM of the split and the shorter column end; two columns at a time, 2,490 and
// 1,690; the C it replaced, four MULS per limb product, 2,495 and 1,645 instructions).
//
// Constant time: no branch and no memory index depends on the data (the loops are
// unrolled by the assembler's macros; every address is a constant offset from sp or
// from r, a or b). The carry between column groups waits at sp + CARRY.

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

// stack frame: each input limb i's 13-bit halves' sum, high half and low half at
// 12 * i + 0, 4, 8 (one STM stores the three)
    .equ AS, 0          // a's
    .equ AH, 4
    .equ AL, 8
    .equ BS, 120        // b's
    .equ BH, 124
    .equ BL, 128
    .equ T, 240         // the product's twenty limbs
    .equ OUTP, 320      // r
    .equ CARRY, 324     // the carry between the multiplication's column groups
    .equ FRAME, 328

// Carry the ten limbs at [p] below 2^26 (the part of limb 9 at or above bit 22 is
// folded into limbs 0 and 1 first: x * 2^256 == x * 977 + x * 2^32) and store their
// 13-bit halves and the halves' sums at sp + base (AS or BS). Uses r0-r5.
.macro SPLIT p, base
    ldr r0, [\p, #36]
    lsrs r1, r0, #22            // x, < 2^8
    lsls r0, r0, #10
    lsrs r0, r0, #10
    str r0, [sp, #T]            // limb 9, below 2^22, parked where the product goes later
    movs r2, #0xF4
    lsls r2, r2, #2
    adds r2, #1                 // 977
    muls r2, r1                 // x * 977
    ldr r3, [\p, #0]
    adds r3, r2                 // w = limb 0 + x * 977, < 2^31
    lsls r1, r1, #6             // x * 2^32 = (x << 6) * 2^26: added to limb 1
    add r5, sp, #\base
    SPLIT_LIMB \p, 0
.endm

// w (r3) is limb i plus the carry in; r1 what limb i + 1 gets besides its carry;
// r5 where limb i's sum, high and low halves go
.macro SPLIT_LIMB p, i
    .if \i < 9
        lsrs r2, r3, #26        // carry out
        lsls r3, r3, #6         // (w mod 2^26) << 6
        lsls r4, r3, #13
        lsrs r4, r4, #19        // low half, bits 0..12
        lsrs r3, r3, #19        // high half, bits 13..25
    .else
        lsls r4, r3, #19        // limb 9: below 2^22 + 2^6, no carry out of the field
        lsrs r4, r4, #19
        lsrs r3, r3, #13
    .endif
    adds r0, r3, r4
    stmia r5!, {r0, r3, r4}
    .if \i < 9
        .if \i < 8
            ldr r3, [\p, #(4 * \i + 4)]
        .else
            ldr r3, [sp, #T]    // limb 9 (parked)
        .endif
        adds r3, r2
        .if \i == 0
            adds r3, r1
        .endif
        SPLIT_LIMB \p, %(\i + 1)
    .endif
.endm

// Products. Limb x_i = xl + xh * 2^13 (halves below 2^13, xs = xl + xh below 2^14);
// x_i * y_j = xl*yl + (xs*ys - xl*yl - xh*yh) * 2^13 + xh*yh * 2^26, so a column
// sums three kinds of products, each below 2^28: LL (xl*yl), HH (xh*yh) and SS
// (xs*ys), ten at most per column: LL, HH < 2^29.4 and SS < 2^31.4, no carries.
// A complete column k (L, H, S, plus the carry in): MM = S - L - H (< 2^31) is the
// middle kind, the column is L + MM * 2^13 + H * 2^26: t[k] = L + the carry in +
// (MM mod 2^13) * 2^13 (< 2^30.5, not carried below 2^26: FOLD carries it) is kept
// and H + (MM >> 13) (< 2^29.5) carried to column k + 1.

// Fold the twenty limbs t[k] (each < 2^30.5) at sp + T into r (at [sp, #OUTP]),
// magnitude 1:
// 2^260 == 2^4 * (2^32 + 977) = 0x400 * 2^26 + 0x3D10 (mod p), so t[k + 10] adds
// t[k + 10] * 0x3D10 to limb k and t[k + 10] * 0x400 to limb k + 1. Each t[k + 10]
// is split into 13-bit halves xl, xh so that every product fits 32 bits:
//   limb k     += xl * 0x3D10 + ((xh * 0x3D10) mod 2^13) << 13
//   limb k + 1 += (xh * 0x3D10) >> 13 + (t[k + 10] mod 2^16) << 10
//   limb k + 2 += t[k + 10] >> 16
// r0 = the limb being summed, r4 and r5 what limbs k and k + 1 have pending (the
// carry included), r6 = 0x3D10, r7 = r. What then lies at or above 2^256 (< 2^44)
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
    adds r5, r1                 // X >> 26, < 2^17.5
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
    muls r3, r6                 // xh * 0x3D10, < 2^31.5
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
// Columns k, k + 1, k + 2 of x * y, one kind at a time: for the kind (x offset xo,
// y offset yo), x_i is loaded once for y_{k-i}, y_{k+1-i}, y_{k+2-i}, and each y_j
// once for the three columns it falls in (it stays in register r2 + (j mod 3) while
// i runs past it): two loads per three MULS. r0 = x_i, r1 scratch, r5, r6, r7 =
// columns k, k + 1, k + 2; n = the group's columns (3, or 1 for column 18). The
// squaring (ksqr = 1, y = x) takes only the cross products x_i * x_j, i < j, doubles
// them and adds x_{(k+c)/2}^2 (KSQUARE). fa0-fa2: the column's next product is its
// first (MOVS instead of ADDS). The kinds' column sums wait in r8-r10 (LL) and r11,
// r12, lr (HH) for KEND.
.macro LDY reg, off
    ldr r\reg, [sp, #\off]
.endm

.macro KLOAD k, n, i, yo, c
    .set jj, \k + \c - \i
    .if \c < \n
        .if jj >= (ksqr * (\i + 1))
            .if jj <= 9
                LDY %(2 + jj - 3 * (jj / 3)), %(\yo + 12 * jj)
            .endif
        .endif
    .endif
.endm

.macro KMUL a, y, mode, first
    .if \mode == 0                  // y_j's last use: its register may go
        muls r\y, r0
        .if \first
            movs r\a, r\y
        .else
            adds r\a, r\y
        .endif
    .elseif \mode == 1              // the step's last product: r0 may go
        muls r0, r\y
        .if \first
            movs r\a, r0
        .else
            adds r\a, r0
        .endif
    .elseif \first
        movs r\a, r\y
        muls r\a, r0
    .else
        movs r1, r\y
        muls r1, r0
        adds r\a, r1
    .endif
.endm

// whether step i has column c's product (x_i * y_{k+c-i}): pr
// fst: whether column `col` gets its first product now (its accumulator register is
// written, not added to); after this, it has had one
.macro TAKE_FIRST col
    .if \col == 0
        .set fst, fa0
        .set fa0, 0
    .elseif \col == 1
        .set fst, fa1
        .set fa1, 0
    .else
        .set fst, fa2
        .set fa2, 0
    .endif
.endm

.macro KHAS k, n, i, c, ihi
    .set jj, \k + \c - \i
    .set pr, 0
    .if \c < \n
        .if \i <= \ihi
            .if jj >= (ksqr * (\i + 1))
                .if jj <= 9
                    .set pr, 1
                .endif
            .endif
        .endif
    .endif
.endm

// the product x_i * y_j into r(5 + c). A y_j falls in columns c, c + 1, c + 2 of
// steps i, i + 1, i + 2: when step i + 1 has no product of it (always at c = 2),
// this is its last and MULS may overwrite it; else the step's last product
// overwrites x_i (r0); else y_j is copied to r1 first.
.macro KPROD k, n, i, c, ihi
    KHAS \k, \n, %(\i + 1), %(\c + 1), \ihi
    .set ynext, pr
    KHAS \k, \n, \i, \c, \ihi
    .if pr
        TAKE_FIRST \c
        .if ynext == 0
            .set md, 0
        .elseif \c == lastc
            .set md, 1
        .else
            .set md, 2
        .endif
        KMUL %(5 + \c), %(2 + jj - 3 * (jj / 3)), %md, %fst
    .endif
.endm

// lastc: the step's last product's column (they run c = 2, 1, 0)
.macro KLAST k, n, i, c, ihi
    KHAS \k, \n, \i, \c, \ihi
    .if pr
        .set lastc, \c
    .endif
.endm

.macro KSTEP k, n, i, ihi, first, xo, yo
    ldr r0, [sp, #(\xo + 12 * \i)]
    KLOAD \k, \n, \i, \yo, 0
    .if \first
        KLOAD \k, \n, \i, \yo, 1
        KLOAD \k, \n, \i, \yo, 2
    .endif
    KDIAG \k, \n, \i
    .set lastc, -1
    KLAST \k, \n, \i, 2, \ihi
    KLAST \k, \n, \i, 1, \ihi
    KLAST \k, \n, \i, 0, \ihi
    KPROD \k, \n, \i, 2, \ihi
    KPROD \k, \n, \i, 1, \ihi
    KPROD \k, \n, \i, 0, \ihi
    .if \i < \ihi
        KSTEP \k, \n, %(\i + 1), \ihi, 0, \xo, \yo
    .endif
.endm

.macro KIND k, n, xo, yo
    .set dg, -1
    .set fa0, 1
    .set fa1, 1
    .set fa2, 1
    .if \k >= 9
        .set ilo, \k - 9
    .else
        .set ilo, 0
    .endif
    .if \k + \n - 1 <= 9
        .set ihi, \k + \n - 1
    .else
        .set ihi, 9
    .endif
    .if ksqr
        .if (\k + \n - 2) / 2 < ihi
            .set ihi, (\k + \n - 2) / 2
        .endif
    .endif
    .if ilo <= ihi
        KSTEP \k, \n, %ilo, %ihi, 1, \xo, \yo
    .endif
.endm

// squaring, step i: when column 2i (x_i^2's) is in the group, its cross products are
// all summed by now (they come from the steps below i), so it is doubled and x_i^2
// added here, from x_i in r0 (no reload); KSQUARE then leaves that column (dg) alone
.macro KDIAG k, n, i
    .if ksqr
        .if 2 * \i >= \k
            .if 2 * \i - \k < \n
                .set dg, 2 * \i - \k
                TAKE_FIRST %dg
                KDSQ %(5 + dg), %fst
            .endif
        .endif
    .endif
.endm

.macro KDSQ acc, first
    .if \first
        movs r\acc, r0
        muls r\acc, r0
    .else
        lsls r\acc, r\acc, #1
        movs r1, r0
        muls r1, r0
        adds r\acc, r1
    .endif
.endm

// squaring: column k + c's cross products twice, then a_{(k+c)/2}'s square of the kind
// (unless KDIAG has done both in its step)
.macro KSQUARE k, c, xo
    .if \c == dg
        .exitm
    .endif
    .if \c == 0
        .set fst, fa0
    .elseif \c == 1
        .set fst, fa1
    .else
        .set fst, fa2
    .endif
    .if ((\k + \c) / 2) * 2 == \k + \c
        .set sqo, \xo + 6 * (\k + \c)
    .else
        .set sqo, -1
    .endif
    KSQ2 %(5 + \c), %fst, %sqo
.endm

.macro KSQ2 acc, first, off
    .if \first == 0
        lsls r\acc, r\acc, #1
    .endif
    .if \off >= 0
        ldr r0, [sp, #\off]
        muls r0, r0
        .if \first
            movs r\acc, r0
        .else
            adds r\acc, r0
        .endif
    .endif
.endm

// column k + c ends: L in r0, H in r1, S in r(5 + c), the carry in r2 (none at
// column 0); as COLEND, the carry out left in r2. Uses r3.
.macro KEND k, c, s
    .if \c == 0
        mov r0, r8
        mov r1, r11
    .elseif \c == 1
        mov r0, r9
        mov r1, r12
    .else
        mov r0, r10
        mov r1, lr
    .endif
    subs r\s, r\s, r0
    subs r\s, r\s, r1
    .if \k + \c > 0
        adds r0, r2
    .endif
    lsls r3, r\s, #19
    lsrs r3, r3, #6             // (MM mod 2^13) << 13
    adds r0, r3                 // t[k + c], < 2^30.5
    lsrs r\s, r\s, #13
    adds r2, r1, r\s            // the carry, H + (MM >> 13)
    str r0, [sp, #(T + 4 * (\k + \c))]
    .if \k + \c == 18
        str r2, [sp, #(T + 76)] // t[19]
    .endif
.endm

// one kind of the group's columns, of a * b or of a^2 (sq), into r5-r7
.macro GKIND k, n, xo, yo, sq
    .set ksqr, \sq
    .if \sq
        KIND \k, \n, \xo, \xo
    .else
        KIND \k, \n, \xo, \yo
    .endif
    .if \sq
        KSQUARE \k, 0, \xo
        .if \n > 1
            KSQUARE \k, 1, \xo
            KSQUARE \k, 2, \xo
        .endif
    .endif
.endm

.macro MULGROUP k, n, sq
    GKIND \k, \n, AL, BL, \sq
    mov r8, r5
    .if \n > 1
        mov r9, r6
        mov r10, r7
    .endif
    GKIND \k, \n, AH, BH, \sq
    mov r11, r5
    .if \n > 1
        mov r12, r6
        mov lr, r7
    .endif
    GKIND \k, \n, AS, BS, \sq
    .if \k > 0
        ldr r2, [sp, #CARRY]
    .endif
    KEND \k, 0, 5
    .if \n > 1
        KEND \k, 1, 6
        KEND \k, 2, 7
        str r2, [sp, #CARRY]
    .endif
.endm

.macro MULGROUPS k, sq
    .if \k < 18
        MULGROUP \k, 3, \sq
        MULGROUPS %(\k + 3), \sq
    .else
        MULGROUP 18, 1, \sq
    .endif
.endm

// The frame FE_MUL and FE_SQR share: r4-r7 and r8-r11 (which park the column sums) saved,
// FRAME bytes of stack, the output pointer kept at OUTP.
.macro ENTER
    push {r4, r5, r6, r7, lr}
    mov r4, r8
    mov r5, r9
    mov r6, r10
    mov r7, r11
    push {r4, r5, r6, r7}       // r8-r11 park the column sums
    sub sp, #FRAME
    str r0, [sp, #OUTP]
.endm

.macro LEAVE
    add sp, #FRAME
    pop {r4, r5, r6, r7}
    mov r8, r4
    mov r9, r5
    mov r10, r6
    mov r11, r7
    pop {r4, r5, r6, r7, pc}
.endm


    .global FE_MUL
    .type FE_MUL, %function
    .thumb_func
FE_MUL:
    ENTER
    movs r6, r1
    movs r7, r2
    SPLIT r6, AS
    SPLIT r7, BS
    MULGROUPS 0, 0
    FOLD
    LEAVE
    .size FE_MUL, . - FE_MUL

    .global FE_SQR
    .type FE_SQR, %function
    .thumb_func
FE_SQR:
    ENTER
    movs r6, r1
    SPLIT r6, AS
    MULGROUPS 0, 1
    FOLD
    LEAVE
    .size FE_SQR, . - FE_SQR
