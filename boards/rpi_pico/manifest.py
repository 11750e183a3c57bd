# Freeze Quill into a custom RPI_PICO image (optional on the Pico: its heap
# holds the .mpy files, but frozen bytecode stays in flash and leaves more heap):
#   make -C ports/rp2 BOARD=RPI_PICO FROZEN_MANIFEST=<repo>/boards/rpi_pico/manifest.py
# Paths are relative to this file. boot.py and main.py stay on the filesystem.
include("$(PORT_DIR)/boards/manifest.py")
package("quillfw", base_path="../../firmware")
