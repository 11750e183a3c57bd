// SHA-256's compression function on ARMv6-M, given to libsecp256k1 through its own
// hook (secp256k1_context_set_sha256_compression, which checks it against a known
// answer first; quill_secp256k1.c's mpy_init):
//
//   void quill_sha256_compress(uint32_t state[8], const unsigned char *blocks, size_t n);
//
// FIPS 180-4 section 6.2.2 for each 64-byte block (any alignment). The message
// schedule W is a ring of 16 words on the stack (W[t] overwrites W[t-16]); the
// working variables a..h are eight stack slots whose roles rotate with the round (the
// 16 rounds of a pass are unrolled, so every slot is a constant offset), with a and e
// also kept in registers from the round that computes them. Maj(a,b,c) is
// ((a^b) & (b^c)) ^ b, where b^c is the round before's a^b (kept in r4). Rotations
// by a register (RORS), each sum of three rotations as two: Sigma1(e) =
// ror(ror(ror(e,14) ^ e, 5) ^ e, 6), Sigma0(a) = ror(ror(ror(a,9) ^ a, 11) ^ a, 2),
// sigma0(x) = ror(ror(x,11) ^ x, 7) ^ x >> 3, sigma1(x) = ror(ror(x,2) ^ x, 17) ^ x >> 10.
// No branch or address depends on the data: constant time.
//
// Registers in the rounds: r0 the round's sum, r1-r3 scratch, r4 b^c, r5 &K[pass],
// r6 e, r7 a.

    .syntax unified
    .thumb
    .text

#define SLOTS 64
#define STATE 96
#define INPUT 100
#define COUNT 104
#define PASS 108
#define FRAME 112

// the stack offset of working variable x (0 = a .. 7 = h) at round i
#define VAR(x, i) (SLOTS + 4 * (((x) - (i)) & 7))

// r0 = W[j] (mod 16) + sigma0(W[j+1]) + W[j+9] + sigma1(W[j+14]), stored as W[j]
.macro SCHED j
    ldr r1, [sp, #4 * (((\j) + 1) & 15)]
    mov r2, r1
    movs r3, #11
    rors r2, r3
    eors r2, r1
    movs r3, #7
    rors r2, r3
    lsrs r1, r1, #3
    eors r2, r1                 // sigma0(W[j+1])
    ldr r1, [sp, #4 * (((\j) + 14) & 15)]
    mov r0, r1
    movs r3, #2
    rors r0, r3
    eors r0, r1
    movs r3, #17
    rors r0, r3
    lsrs r1, r1, #10
    eors r0, r1                 // sigma1(W[j+14])
    adds r0, r2
    ldr r1, [sp, #4 * (((\j) + 9) & 15)]
    adds r0, r1
    ldr r1, [sp, #4 * (\j)]
    adds r0, r1
    str r0, [sp, #4 * (\j)]
.endm

// round i of a pass (r0 = W[i] on entry)
.macro ROUND i
    ldr r1, [r5, #4 * (\i)]
    adds r0, r1                 // W + K
    ldr r1, [sp, #VAR(7, \i)]
    adds r0, r1                 // + h
    mov r1, r6
    movs r3, #14
    rors r1, r3
    eors r1, r6
    movs r3, #5
    rors r1, r3
    eors r1, r6
    movs r3, #6
    rors r1, r3
    adds r0, r1                 // + Sigma1(e)
    ldr r1, [sp, #VAR(5, \i)]
    ldr r2, [sp, #VAR(6, \i)]
    eors r1, r2
    ands r1, r6
    eors r1, r2
    adds r0, r1                 // + Ch(e, f, g): t1
    ldr r1, [sp, #VAR(3, \i)]
    adds r6, r1, r0
    str r6, [sp, #VAR(3, \i)]   // e = d + t1 (d's slot is the next round's e)
    mov r1, r7
    movs r3, #9
    rors r1, r3
    eors r1, r7
    movs r3, #11
    rors r1, r3
    eors r1, r7
    movs r3, #2
    rors r1, r3
    adds r0, r1                 // t1 + Sigma0(a)
    ldr r1, [sp, #VAR(1, \i)]
    mov r2, r7
    eors r2, r1                 // a ^ b
    ands r4, r2
    eors r4, r1                 // Maj(a, b, c)
    adds r0, r4
    mov r4, r2                  // the next round's b ^ c
    mov r7, r0
    str r0, [sp, #VAR(7, \i)]   // a = t1 + t2 (h's slot is the next round's a)
.endm

    .global quill_sha256_compress
    .type quill_sha256_compress, %function
    .thumb_func
quill_sha256_compress:
    push {r4-r7, lr}
    sub sp, #FRAME
    str r0, [sp, #STATE]
    str r1, [sp, #INPUT]
    str r2, [sp, #COUNT]
    cmp r2, #0
    bne 1f
    add sp, #FRAME
    pop {r4-r7, pc}
1:  // the block's 16 words, big-endian, into W
    ldr r1, [sp, #INPUT]
    movs r2, #0
2:  ldrb r0, [r1, #0]
    lsls r0, r0, #24
    ldrb r3, [r1, #1]
    lsls r3, r3, #16
    orrs r0, r3
    ldrb r3, [r1, #2]
    lsls r3, r3, #8
    orrs r0, r3
    ldrb r3, [r1, #3]
    orrs r0, r3
    mov r3, sp
    str r0, [r3, r2]
    adds r1, #4
    adds r2, #4
    cmp r2, #64
    bne 2b
    str r1, [sp, #INPUT]
    // a..h into their slots; a, e and b^c into registers
    ldr r0, [sp, #STATE]
    ldm r0!, {r1-r4}
    add r5, sp, #SLOTS
    stm r5!, {r1-r4}
    mov r7, r1
    eors r2, r3
    mov r6, r2                  // b ^ c, for a moment
    ldm r0!, {r1-r4}
    stm r5!, {r1-r4}
    mov r4, r6
    mov r6, r1                  // e
    ldr r5, .Lk_offset
.Lk_base:
    add r5, pc                  // &K[0]
    b 5f
    .p2align 2
.Lk_offset:
    .word .Lk - (.Lk_base + 4)
5:
    .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
    ldr r0, [sp, #4 * \i]
    ROUND \i
    .endr
    movs r0, #3
    str r0, [sp, #PASS]
3:  adds r5, #64                // the next 16 round constants
    .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
    SCHED \i
    ROUND \i
    .endr
    ldr r0, [sp, #PASS]
    subs r0, #1
    str r0, [sp, #PASS]
    beq 6f
    bl 3b                       // BL: the one branch that reaches back over a pass (LR is saved)
6:
    // state += a..h
    ldr r0, [sp, #STATE]
    add r5, sp, #SLOTS
    movs r6, #8
4:  ldr r1, [r0]
    ldm r5!, {r2}
    adds r1, r2
    stm r0!, {r1}
    subs r6, #1
    bne 4b
    ldr r2, [sp, #COUNT]
    subs r2, #1
    str r2, [sp, #COUNT]
    beq 7f
    bl 1b
7:  add sp, #FRAME
    pop {r4-r7, pc}

    .p2align 2
.Lk:
    .word 0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5
    .word 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174
    .word 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da
    .word 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967
    .word 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85
    .word 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070
    .word 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3
    .word 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
    .size quill_sha256_compress, . - quill_sha256_compress
