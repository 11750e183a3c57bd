"""Raspberry Pi Pico: nothing has to happen before main.py.

Deployed anyway, so that a boot.py left by an earlier project (starting WiFi,
printing on the serial port that carries the protocol) is replaced.
"""
