// libsecp256k1's src/secp256k1.c (compiled from ../shared, not copied), with the
// functions that need its internals in the same translation unit: Core's grinding
// (quill_ecdsa_grind.h). ARMv6-M compiles quill_libsecp256k1_armv6m.c instead, which
// also swaps in its Thumb-1 parts.
#include "secp256k1.c"
#include "quill_ecdsa_grind.h"
