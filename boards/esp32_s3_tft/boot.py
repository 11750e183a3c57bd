"""ESP32-S3: keep ESP-IDF's log lines off the serial port.

On the UART connector the REPL shares UART0 with ESP-IDF's logging; a log line
in the middle of a frame would corrupt the protocol stream.
"""
import esp

esp.osdebug(None)
