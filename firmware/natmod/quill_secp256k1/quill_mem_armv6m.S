// memcpy and memset for the module's own code on ARMv6-M (the Makefile renames the
// C objects' calls to quill_memcpy and quill_memset):
//
//   void *quill_memcpy(void *dst, const void *src, size_t n)   (no overlap)
//   void *quill_memset(void *dst, int c, size_t n)
//
// Without them a native module's memcpy and memset are the firmware's, through
// MicroPython's function table (mpy_ld maps memcpy to memmove): an indirect call, an
// overlap test, and a copy loop of one word (or one byte) per iteration. GCC's -Os
// compiles libsecp256k1's structure copies (a field element is 40 bytes: point
// additions copy several per call) and its SHA-256 buffer writes into such calls.
// Here: three words per LDM/STM when both pointers are word-aligned, else bytes.
// Every branch depends on the length and the pointers' alignment only, never on
// the data: constant time for the secrets copied.

    .syntax unified
    .thumb
    .text

    .global quill_memcpy
    .type quill_memcpy, %function
    .thumb_func
quill_memcpy:
    push {r0, r4, r5, lr}
    movs r3, r0
    orrs r3, r1
    lsls r3, r3, #30        // either pointer not word-aligned: bytes
    bne 3f
    subs r2, #12
    blo 2f
1:  ldm r1!, {r3, r4, r5}
    stm r0!, {r3, r4, r5}
    subs r2, #12
    bhs 1b
2:  adds r2, #12            // 0 to 11 bytes left
    subs r2, #4
    blo 4f
5:  ldm r1!, {r3}
    stm r0!, {r3}
    subs r2, #4
    bhs 5b
4:  adds r2, #4             // 0 to 3 bytes left
3:  subs r2, #1             // bytes, the last first
    bmi 9f
6:  ldrb r3, [r1, r2]
    strb r3, [r0, r2]
    subs r2, #1
    bpl 6b
9:  pop {r0, r4, r5, pc}
    .size quill_memcpy, . - quill_memcpy

    .global quill_memset
    .type quill_memset, %function
    .thumb_func
quill_memset:
    push {r0, r4, r5, lr}
    uxtb r1, r1             // the byte in all four lanes
    lsls r3, r1, #8
    orrs r1, r3
    lsls r3, r1, #16
    orrs r1, r3
    lsls r3, r0, #30
    bne 3f
    movs r3, r1
    movs r4, r1
    subs r2, #12
    blo 2f
1:  stm r0!, {r1, r3, r4}
    subs r2, #12
    bhs 1b
2:  adds r2, #12
    subs r2, #4
    blo 4f
5:  stm r0!, {r1}
    subs r2, #4
    bhs 5b
4:  adds r2, #4
3:  subs r2, #1
    bmi 9f
6:  strb r1, [r0, r2]
    subs r2, #1
    bpl 6b
9:  pop {r0, r4, r5, pc}
    .size quill_memset, . - quill_memset
