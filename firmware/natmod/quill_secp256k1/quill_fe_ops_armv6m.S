// The point arithmetic's small field operations on ARMv6-M, in Thumb-1, for
// libsecp256k1's 10x26 field (quill_libsecp256k1_armv6m.c points the library's
// point additions and doublings at them, after the field's own definitions):
//
//   void quill_fe_cmov(uint32_t r[10], const uint32_t a[10], int flag)    r = flag ? a : r
//   void quill_fe_add(uint32_t r[10], const uint32_t a[10])               r += a, limb by limb
//   void quill_fe_negate(uint32_t r[10], const uint32_t a[10], int m)     r = 2(m + 1) p' - a
//
// the same results as the library's secp256k1_fe_impl_cmov, _add and
// _negate_unchecked (field_10x26_impl.h), with the limbs moved four at a time by
// LDM/STM instead of GCC's -Os load, operate and store per limb through a call.
// cmov selects with a mask (-flag, flag 0 or 1): r ^ ((r ^ a) & mask), as the
// library does. No branch and no address depends on the data: constant time.
// r may be a.

    .syntax unified
    .thumb
    .text

// rX = rX ^ ((rX ^ a_word) & r2), with r's word at [r0, #off] read into r7
.macro SEL reg, off
    ldr r7, [r0, #\off]
    eors \reg, r7
    ands \reg, r2
    eors \reg, r7
.endm

    .global quill_fe_cmov
    .type quill_fe_cmov, %function
    .thumb_func
quill_fe_cmov:
    push {r4-r7, lr}
    negs r2, r2                 // mask: all ones to take a
    .rept 2
    ldm r1!, {r3-r6}
    SEL r3, 0
    SEL r4, 4
    SEL r5, 8
    SEL r6, 12
    stm r0!, {r3-r6}
    .endr
    ldm r1!, {r3, r4}
    SEL r3, 0
    SEL r4, 4
    stm r0!, {r3, r4}
    pop {r4-r7, pc}
    .size quill_fe_cmov, . - quill_fe_cmov

    .global quill_fe_add
    .type quill_fe_add, %function
    .thumb_func
quill_fe_add:
    push {r4-r7, lr}
    .rept 3
    ldm r1!, {r2-r4}
    ldm r0!, {r5-r7}
    subs r0, #12
    adds r5, r2
    adds r6, r3
    adds r7, r4
    stm r0!, {r5-r7}
    .endr
    ldr r2, [r1]
    ldr r5, [r0]
    adds r5, r2
    str r5, [r0]
    pop {r4-r7, pc}
    .size quill_fe_add, . - quill_fe_add

// limb i: 2(m + 1) * 0x3FFFFFF - a_i, but 2(m + 1) * 0x3FFFC2F for limb 0,
// 2(m + 1) * 0x3FFFFBF for limb 1 and 2(m + 1) * 0x3FFFFF for limb 9 (m <= 31:
// no borrow)
    .global quill_fe_negate
    .type quill_fe_negate, %function
    .thumb_func
quill_fe_negate:
    push {r4-r7, lr}
    adds r2, #1
    lsls r2, r2, #1             // f = 2(m + 1)
    lsls r3, r2, #26
    subs r3, r3, r2             // f * 0x3FFFFFF
    ldr r4, [r1, #0]
    ldr r5, [r1, #4]
    movs r6, #0xF4
    lsls r6, r6, #2             // 0x3D0 = 0x3FFFFFF - 0x3FFFC2F
    muls r6, r2
    subs r6, r3, r6
    subs r4, r6, r4
    lsls r6, r2, #6             // 0x40 = 0x3FFFFFF - 0x3FFFFBF
    subs r6, r3, r6
    subs r5, r6, r5
    ldr r6, [r1, #8]
    ldr r7, [r1, #12]
    subs r6, r3, r6
    subs r7, r3, r7
    stm r0!, {r4-r7}
    adds r1, #16
    ldm r1!, {r4-r7}
    subs r4, r3, r4
    subs r5, r3, r5
    subs r6, r3, r6
    subs r7, r3, r7
    stm r0!, {r4-r7}
    ldm r1!, {r4, r5}
    subs r4, r3, r4
    lsls r6, r2, #22
    subs r6, r6, r2             // f * 0x3FFFFF
    subs r5, r6, r5
    stm r0!, {r4, r5}
    pop {r4-r7, pc}
    .size quill_fe_negate, . - quill_fe_negate
