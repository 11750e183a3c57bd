// The safegcd inverse's 30 constant-time divsteps on ARMv6-M (quill_libsecp256k1_armv6m.c,
// quill_modinv32), the same steps as libsecp256k1's secp256k1_modinv32_divsteps_30
// (modinv32_impl.h), whose C keeps its two masks in volatile variables, so GCC stores
// and reloads them at every step (~65 cycles a step on the Cortex-M0+; ~37 here):
//
//   int32_t quill_divsteps_30(int32_t zeta, uint32_t f, uint32_t g, int32_t t[4]);
//
// Each step, with m1 = (zeta < 0 ? -1 : 0) and m2 = (g odd ? -1 : 0):
//     g += ((f ^ m1) - m1) & m2;  q += ((u ^ m1) - m1) & m2;  r += ((v ^ m1) - m1) & m2
//     m1 &= m2;  zeta = (zeta ^ m1) - 1
//     f += g & m1;  u += q & m1;  v += r & m1
//     g >>= 1;  u <<= 1;  v <<= 1
// from u = r = 1, q = v = 0; then t = {u, v, q, r}, and zeta is returned. Masks and
// arithmetic only, 30 steps: constant time.
//
// Registers: r0 f, r1 g, r2 u, r3 v, r4 q, r5 m1, r6 m2, r7 scratch; r8 r, r9 zeta,
// r10 the steps left (r's and zeta's only uses are ADD and MOV, which reach the high
// registers).

    .syntax unified
    .thumb
    .text

.macro DIVSTEP
    mov r5, r9
    asrs r5, r5, #31        // m1
    lsls r6, r1, #31
    asrs r6, r6, #31        // m2
    mov r7, r0
    eors r7, r5
    subs r7, r5
    ands r7, r6
    adds r1, r7             // g += (+-f) & m2
    mov r7, r2
    eors r7, r5
    subs r7, r5
    ands r7, r6
    adds r4, r7             // q += (+-u) & m2
    mov r7, r3
    eors r7, r5
    subs r7, r5
    ands r7, r6
    add r8, r7              // r += (+-v) & m2
    ands r5, r6             // m1 &= m2
    mov r7, r9
    eors r7, r5
    subs r7, #1
    mov r9, r7              // zeta = (zeta ^ m1) - 1
    mov r7, r1
    ands r7, r5
    adds r0, r7             // f += g & m1
    mov r7, r4
    ands r7, r5
    adds r2, r7             // u += q & m1
    mov r7, r8
    ands r7, r5
    adds r3, r7             // v += r & m1
    lsrs r1, r1, #1
    lsls r2, r2, #1
    lsls r3, r3, #1
.endm

    .global quill_divsteps_30
    .type quill_divsteps_30, %function
    .thumb_func
quill_divsteps_30:
    push {r3-r7, lr}        // r3: t
    mov r4, r8
    mov r5, r9
    mov r6, r10
    push {r4-r6}
    mov r9, r0              // zeta
    movs r0, #1
    mov r8, r0              // r = 1
    movs r0, #15
    mov r10, r0             // 15 passes of two steps
    mov r0, r1              // f
    mov r1, r2              // g
    movs r2, #1             // u
    movs r3, #0             // v
    movs r4, #0             // q
1:  DIVSTEP
    DIVSTEP
    mov r7, r10
    subs r7, #1
    mov r10, r7
    bne 1b
    ldr r7, [sp, #12]       // t
    mov r5, r8
    stm r7!, {r2-r5}        // u, v, q, r
    mov r0, r9
    pop {r4-r6}
    mov r8, r4
    mov r9, r5
    mov r10, r6
    pop {r3-r7, pc}
    .size quill_divsteps_30, . - quill_divsteps_30
