"""The board's LED and confirmation button, from the pins of boards/<board>/board.json.

    Led(pin)                  a GPIO LED, lit when the pin is high
    NeoPixelLed(pin)          a one-pixel WS2812 (ESP32-S3 DevKitC), lit white
    Button(pin, active_low)   a push button read through machine.Pin
    BootselButton()           the Raspberry Pi Pico's BOOTSEL button (rp2.bootsel_button())

`machine`, `neopixel` and `rp2` exist only on the boards: they are imported when
a board's main.py builds its objects, never by the modules the emulator or the
tests load. Every class offers on(), off() (LED) or pressed() (button), which is
all the button approver (quillfw.signing.approvers.ButtonApprover) needs.
"""


class Led:
    def __init__(self, pin):
        from machine import Pin
        self._pin = Pin(pin, Pin.OUT, value=0)

    def on(self):
        self._pin.value(1)

    def off(self):
        self._pin.value(0)


class NeoPixelLed:
    def __init__(self, pin, level=32):
        from machine import Pin
        from neopixel import NeoPixel
        self._pixel = NeoPixel(Pin(pin, Pin.OUT), 1)
        self._level = level
        self.off()

    def _show(self, level):
        self._pixel[0] = (level, level, level)
        self._pixel.write()

    def on(self):
        self._show(self._level)

    def off(self):
        self._show(0)


class Button:
    def __init__(self, pin, active_low=True):
        from machine import Pin
        self._pin = Pin(pin, Pin.IN, Pin.PULL_UP if active_low else Pin.PULL_DOWN)
        self._pressed_level = 0 if active_low else 1

    def pressed(self):
        return self._pin.value() == self._pressed_level


class BootselButton:
    def __init__(self):
        import rp2
        self._read = rp2.bootsel_button

    def pressed(self):
        return bool(self._read())


def approver(name, button, led=None, led_kind="gpio"):
    """The board's confirmation approver, named in main.py by the spec
    ("button", "quillfw.board.hal", button, led, led_kind) (quillfw.signing.confirm):
    button is a pin or "bootsel", led_kind "gpio" or "neopixel"."""
    from quillfw.signing.approvers import ButtonApprover
    button = BootselButton() if button == "bootsel" else Button(button)
    if led is not None:
        led = NeoPixelLed(led) if led_kind == "neopixel" else Led(led)
    return ButtonApprover(button, led)
