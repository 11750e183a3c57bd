// libsecp256k1 (its src/secp256k1.c, compiled from ../shared as on every other core) for
// ARMv6-M, with the k*G comb's constant-time table lookup in Thumb-1
// (quill_comb_armv6m.S) instead of the library's C one.
//
// The library picks the comb entry for a block by a conditional move over every
// entry of the block's row (ecmult_gen_impl.h: secp256k1_ge_storage_cmov(&adds,
// &table[block][index], index == abs) for each index), which the M0+ runs at ~12
// cycles per word, reading and writing the result for each of the row's entries.
// quill_comb_scan reads the whole row once per call and ORs each entry's words under
// an all-ones or all-zero mask into registers: the same entry, the same memory
// accesses whatever the secret index is, at ~4.3 cycles per word.
//
// How: group_impl.h (the function's only definition) is included first, so its
// definition keeps its name; then the name becomes a macro for the rest of the
// library, whose one call is that lookup loop. At the loop's first index the macro
// scans the row (its address is &table[block][0] there) for the loop's `abs`; the
// remaining iterations do nothing. The macro names the loop's variables (index,
// abs): a library whose loop is written differently fails to compile here rather
// than sign wrongly, and tests/mcu/test_native_on_mcu.py checks the signatures
// against libsecp256k1's on the host.
#define SECP256K1_BUILD
#include "secp256k1.h"
#include "secp256k1_preallocated.h"
#include "assumptions.h"
#include "util.h"
#include "field_impl.h"
#include "group_impl.h"

// r = row[abs], reading every entry of row[0 .. COMB_POINTS) (quill_comb_armv6m.S)
void quill_comb_scan(secp256k1_ge_storage *r, const secp256k1_ge_storage *row, uint32_t abs);

#define secp256k1_ge_storage_cmov(r, a, flag) \
    do { \
        if (index == 0) { \
            quill_comb_scan((r), (a), abs); \
        } \
    } while (0)

#include "secp256k1.c"
