# Freeze Quill into a unix-port build, e.g. the 32-bit build that mimics the
# boards' 16-bit bignum digits and 4-byte pointers:
#   make -C ports/unix CC="gcc -m32" LD="gcc -m32" FROZEN_MANIFEST=<repo>/boards/unix/manifest.py
# Paths are relative to this file.
include("$(PORT_DIR)/variants/manifest.py")
package("quillfw", base_path="../../firmware")
