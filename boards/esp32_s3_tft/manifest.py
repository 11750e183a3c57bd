# Freeze Quill into a custom ESP32_GENERIC_S3 image (optional: the heap holds
# the .mpy files, but frozen bytecode stays in flash and leaves more heap):
#   make -C ports/esp32 BOARD=ESP32_GENERIC_S3 FROZEN_MANIFEST=<repo>/boards/esp32_s3_tft/manifest.py
# Paths are relative to this file. boot.py and main.py stay on the filesystem.
include("$(PORT_DIR)/boards/manifest.py")
package("quillfw", base_path="../../firmware")
