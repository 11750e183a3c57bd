// The safegcd inverse's matrix products on ARMv6-M (quill_libsecp256k1_armv6m.c,
// quill_modinv32): limbs 1 to 8 of update_de and update_fg, whose limb 0 (where the
// modulus multiples md, me are chosen) the C code does.
//
//   void quill_modinv_rows(quill_rows *p);
//
// For i = 1 .. 8, with a = p->a, b = p->b (signed30 limbs, read at i, written at i-1):
//     ca += u a[i] + v b[i] (+ md mod[i])     cb += q a[i] + r b[i] (+ me mod[i])
//     a[i-1] = ca mod 2^30, b[i-1] = cb mod 2^30, ca >>= 30, cb >>= 30 (arithmetic)
// the mod terms only when p->mod is not NULL (update_de; a public choice). ca and cb are
// signed 64-bit; the C code stores their low words as limb 8.
//
// Each product is a signed 32x32 -> 64 multiply-accumulate (SMLAL below: four MULS of
// 16-bit halves, then the sign correction on the high word), no call. Straight-line
// code with a fixed trip count: constant time.

// quill_rows, as declared in quill_libsecp256k1_armv6m.c (which checks these offsets)
#define CA 0
#define CB 8
#define U 16
#define V 20
#define Q 24
#define R 28
#define MD 32
#define ME 36
#define MOD 40
#define A 44
#define B 48
#define AI 52
#define BI 56
#define MI 60
#define COUNT 64

    .syntax unified
    .thumb
    .text

// (r5:r4) += r0 * r1, signed; clobbers r0-r3, r6
.macro SMLAL
    asrs r2, r0, #31
    ands r2, r1
    subs r5, r2             // 2^32 [a < 0] b
    asrs r2, r1, #31
    ands r2, r0
    subs r5, r2             // 2^32 [b < 0] a
    lsrs r2, r0, #16        // ah
    uxth r0, r0             // al
    lsrs r3, r1, #16        // bh
    uxth r1, r1             // bl
    movs r6, r0
    muls r6, r1             // al bl
    muls r0, r3             // al bh
    muls r1, r2             // bl ah
    muls r2, r3             // ah bh
    adds r4, r6
    adcs r5, r2
    adds r0, r1             // the middle sum, its carry at 2^48
    movs r1, #0             // (MOVS leaves C alone)
    adcs r1, r1
    lsls r1, r1, #16
    adds r5, r1
    lsls r1, r0, #16
    lsrs r0, r0, #16
    adds r4, r1
    adcs r5, r0
.endm

// one accumulator: (r5:r4) = p->acc + c1 * p->ai + c2 * p->bi [+ c3 * p->mi];
// its low 30 bits to *dst, then p->acc = (r5:r4) >> 30
.macro ROW acc, c1, c2, c3, dst
    ldr r4, [r7, #\acc]
    ldr r5, [r7, #\acc + 4]
    ldr r0, [r7, #\c1]
    ldr r1, [r7, #AI]
    SMLAL
    ldr r0, [r7, #\c2]
    ldr r1, [r7, #BI]
    SMLAL
.ifnb \c3
    ldr r0, [r7, #\c3]
    ldr r1, [r7, #MI]
    SMLAL
.endif
    ldr r0, [r7, #\dst]
    lsls r1, r4, #2
    lsrs r1, r1, #2
    str r1, [r0]            // limb i-1
    adds r0, #4
    str r0, [r7, #\dst]
    lsrs r4, r4, #30
    lsls r1, r5, #2
    orrs r4, r1
    asrs r5, r5, #30
    str r4, [r7, #\acc]
    str r5, [r7, #\acc + 4]
.endm

    .global quill_modinv_rows
    .type quill_modinv_rows, %function
    .thumb_func
quill_modinv_rows:
    push {r4, r5, r6, r7, lr}
    movs r7, r0
    movs r0, #8
    str r0, [r7, #COUNT]
    ldr r0, [r7, #MOD]
    cmp r0, #0
    bne 1f
    b 2f                    // (B<c> reaches 256 bytes; the loops are longer)
1:  // update_de: three products per accumulator
    ldr r0, [r7, #A]
    ldr r1, [r0, #4]
    str r1, [r7, #AI]
    ldr r0, [r7, #B]
    ldr r1, [r0, #4]
    str r1, [r7, #BI]
    ldr r0, [r7, #MOD]
    adds r0, #4
    str r0, [r7, #MOD]
    ldr r1, [r0]
    str r1, [r7, #MI]
    ROW CA, U, V, MD, A
    ROW CB, Q, R, ME, B
    ldr r0, [r7, #COUNT]
    subs r0, #1
    str r0, [r7, #COUNT]
    beq 3f
    b 1b
3:
    pop {r4, r5, r6, r7, pc}
2:  // update_fg: two
    ldr r0, [r7, #A]
    ldr r1, [r0, #4]
    str r1, [r7, #AI]
    ldr r0, [r7, #B]
    ldr r1, [r0, #4]
    str r1, [r7, #BI]
    ROW CA, U, V, , A
    ROW CB, Q, R, , B
    ldr r0, [r7, #COUNT]
    subs r0, #1
    str r0, [r7, #COUNT]
    beq 4f
    b 2b
4:
    pop {r4, r5, r6, r7, pc}
    .size quill_modinv_rows, . - quill_modinv_rows
