# The pyboard runs Quill frozen (board.json deploy: frozen): its ~97 KiB heap
# cannot also hold the modules' bytecode. Build and flash the image with
#   make -C ports/stm32 BOARD=PYBV11 FROZEN_MANIFEST=<repo>/boards/pyboard/manifest.py
#   make -C ports/stm32 BOARD=PYBV11 deploy      (board in DFU mode)
# Paths are relative to this file. boot.py and main.py stay on /flash.
include("$(PORT_DIR)/boards/manifest.py")
package("quillfw", base_path="../../firmware")
