"""pyboard v1.1: USB as serial port plus the /flash drive.

'VCP+MSC' is MicroPython's default mode, stated here because the USB id the
host looks for depends on it: F055:9800 (board.json usb_pid).
"""
import pyb

pyb.usb_mode("VCP+MSC")
