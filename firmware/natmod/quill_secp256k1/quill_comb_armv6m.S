// The k*G comb's constant-time table lookup on ARMv6-M (see quill_comb_armv6m.c):
//
//   void quill_comb_scan(secp256k1_ge_storage *r, const secp256k1_ge_storage *row,
//                        uint32_t abs);
//   r = row[abs], 0 <= abs < COMB_POINTS; row: COMB_POINTS entries of 16 words
//   (x and y, 8 words each: secp256k1_ge_storage)
//
// Constant time: every word of every entry is loaded, in the same order, whatever
// abs is; abs only enters data operations (no branch, no address depends on it).
// First one mask per entry, -1 for row[abs] and 0 for the others, on the stack:
// ((i ^ abs) - 1) >> 31 (arithmetic), as i ^ abs is below 2^31. Then the 16 words in
// three passes of five (words 0-4, 5-9, 10-14) and one of word 15: each pass adds
// every entry's words, ANDed with that entry's mask, into registers and stores them.
// Exactly one mask is all ones, so the sum of the masked words is row[abs]'s word
// (an OR would give the same); ADD, unlike ORRS, takes the high registers r8-r12,
// which hold a five-word pass's sums while the low ones hold the five loaded words,
// the mask and the entry pointer. The pass over the entries is unrolled (.rept), and
// so is the masks' loop: no counter.
// 19 cycles per entry and pass of five (LDR mask 2, LDM 6, 5 ANDS, 5 ADDS, ADDS), 7
// for the last word's, ~64 per entry against the C loop's ~188.

#define POINTS (1 << (COMB_TEETH - 1))
#if POINTS > 64
#error "quill_comb_scan keeps one mask per entry in a 4-byte slot under SP (LDR SP-relative: 1020 bytes)"
#endif

// the frame: the masks, then r and row
#define OUT (4 * POINTS)
#define ROW (4 * POINTS + 4)
#define FRAME (4 * POINTS + 8)

    .syntax unified
    .thumb
    .text

// one pass of five words: r7 = &row[0] + the pass's byte offset; r8-r12 = 0; adds
// the five words of every entry under its mask (at [sp, #4*i]) into r8-r12.
// Clobbers r0-r4, r6, r7.
    .type quill_comb_pass, %function
    .thumb_func
quill_comb_pass:
    .set entry, 0
    .rept POINTS
    ldr r6, [sp, #4*entry]
    ldm r7!, {r0, r1, r2, r3, r4}
    ands r0, r6
    ands r1, r6
    ands r2, r6
    ands r3, r6
    ands r4, r6
    add r8, r0
    add r9, r1
    add r10, r2
    add r11, r3
    add r12, r4
    adds r7, #64 - 20
    .set entry, entry + 1
    .endr
    bx lr
    .size quill_comb_pass, . - quill_comb_pass

// the last word's pass: r7 = &row[0] + 60, r0 = 0; ORs word 15 of every entry under
// its mask into r0. Clobbers r3, r6, r7.
    .type quill_comb_pass1, %function
    .thumb_func
quill_comb_pass1:
    .set entry, 0
    .rept POINTS
    ldr r6, [sp, #4*entry]
    ldm r7!, {r3}
    ands r3, r6
    orrs r0, r3
    adds r7, #64 - 4
    .set entry, entry + 1
    .endr
    bx lr
    .size quill_comb_pass1, . - quill_comb_pass1

// one pass at words w..w+4 of each entry, its five sums stored at r's words w..w+4
.macro PASS w
    ldr r7, [sp, #ROW]
    adds r7, #4*\w
    movs r0, #0
    mov r8, r0
    mov r9, r0
    mov r10, r0
    mov r11, r0
    mov r12, r0
    bl quill_comb_pass
    ldr r7, [sp, #OUT]
    adds r7, #4*\w
    mov r0, r8
    mov r1, r9
    mov r2, r10
    mov r3, r11
    mov r4, r12
    stm r7!, {r0, r1, r2, r3, r4}
.endm

    .global quill_comb_scan
    .type quill_comb_scan, %function
    .thumb_func
quill_comb_scan:
    push {r4, r5, r6, r7, lr}
    mov r4, r8
    mov r5, r9
    mov r6, r10
    mov r7, r11
    push {r4, r5, r6, r7}
    sub sp, #FRAME
    str r0, [sp, #OUT]
    str r1, [sp, #ROW]
    // the masks: [sp, #4*i] = -1 if i == abs else 0
    .set entry, 0
    .rept POINTS
    movs r4, #entry
    eors r4, r2
    subs r4, #1
    asrs r4, r4, #31
    str r4, [sp, #4*entry]
    .set entry, entry + 1
    .endr
    PASS 0
    PASS 5
    PASS 10
    ldr r7, [sp, #ROW]
    adds r7, #60
    movs r0, #0
    bl quill_comb_pass1
    ldr r3, [sp, #OUT]
    str r0, [r3, #60]
    add sp, #FRAME
    pop {r4, r5, r6, r7}
    mov r8, r4
    mov r9, r5
    mov r10, r6
    mov r11, r7
    pop {r4, r5, r6, r7, pc}
    .size quill_comb_scan, . - quill_comb_scan
