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
// six passes of three (words 0-2, 3-5, 6-8, 9-11, 12-14, 13-15: the last overlaps
// the one before, recomputing the same two words): each pass ORs every entry's
// three words, ANDed with that entry's mask, into three registers and stores them.
// Thumb-1's eight low registers: three sums, three loaded words, the mask and the
// entry pointer; the pass over the entries is unrolled (.rept), so no counter.
// 13 cycles per entry and pass (LDR mask 2, LDM 4, 3 ANDS, 3 ORRS, ADDS), ~78 per
// entry against the C loop's ~188.

#define POINTS (1 << (COMB_TEETH - 1))
#if POINTS > 64
#error "quill_comb_scan keeps one mask per entry in a 4-byte slot under SP (LDR SP-relative: 1020 bytes)"
#endif

    .syntax unified
    .thumb
    .text

// one pass: r7 = &row[0] + pass's byte offset; r0-r2 = 0; ORs the three words of
// every entry under its mask (at [sp, #4*i]) into r0-r2. Clobbers r3-r7.
    .type quill_comb_pass, %function
    .thumb_func
quill_comb_pass:
    .set entry, 0
    .rept POINTS
    ldr r6, [sp, #4*entry]
    ldm r7!, {r3, r4, r5}
    ands r3, r6
    ands r4, r6
    ands r5, r6
    orrs r0, r3
    orrs r1, r4
    orrs r2, r5
    adds r7, #64 - 12
    .set entry, entry + 1
    .endr
    bx lr
    .size quill_comb_pass, . - quill_comb_pass

// one pass at word w of each entry, its three sums stored at r's word w (r in r8,
// row in r9)
.macro PASS w
    mov r7, r9
    adds r7, #4*\w
    movs r0, #0
    movs r1, #0
    movs r2, #0
    bl quill_comb_pass
    mov r3, r8
    str r0, [r3, #4*\w]
    str r1, [r3, #4*\w + 4]
    str r2, [r3, #4*\w + 8]
.endm

    .global quill_comb_scan
    .type quill_comb_scan, %function
    .thumb_func
quill_comb_scan:
    push {r4, r5, r6, r7, lr}
    mov r4, r8
    mov r5, r9
    push {r4, r5}
    mov r8, r0
    mov r9, r1
    sub sp, #4*POINTS
    // the masks: [sp, #4*i] = -1 if i == abs else 0
    mov r6, sp
    movs r3, #0
1:
    movs r4, r3
    eors r4, r2
    subs r4, #1
    asrs r4, r4, #31
    stm r6!, {r4}
    adds r3, #1
    cmp r3, #POINTS
    bne 1b
    PASS 0
    PASS 3
    PASS 6
    PASS 9
    PASS 12
    PASS 13
    add sp, #4*POINTS
    pop {r4, r5}
    mov r8, r4
    mov r9, r5
    pop {r4, r5, r6, r7, pc}
    .size quill_comb_scan, . - quill_comb_scan
