"""A board's panel, from the pins of its boards/<board>/board.json "display" (a
board's main.py passes them in the display spec, quillfw.signing.confirm):

    display("st7789", width, height, pins, x_offset, y_offset, madctl, spi_id)
        pins: {sck, mosi, cs, dc, rst, bl, ? power}
    display("ssd1306", width, height, pins, address, i2c_id)
        pins: {scl, sda}

`machine` exists only on the boards: imported here, when a confirmation draws.
"""


def _out(pin, value=0):
    from machine import Pin
    return None if pin is None else Pin(pin, Pin.OUT, value=value)


def display(panel, width, height, pins, *options):
    from machine import Pin
    if panel == "st7789":
        from machine import SPI

        from quillfw.ui.st7789 import ST7789
        x_offset, y_offset, madctl, spi_id = options
        if pins.get("power") is not None:
            _out(pins["power"], 1)      # the Feather's TFT_I2C_POWER: the panel's supply
        spi = SPI(spi_id, 40000000, polarity=0, phase=0, sck=Pin(pins["sck"]),
                  mosi=Pin(pins["mosi"]))
        return ST7789(spi, _out(pins["cs"], 1), _out(pins["dc"]), _out(pins.get("rst"), 1),
                      _out(pins.get("bl")), width, height, x_offset, y_offset, madctl)
    if panel == "ssd1306":
        from machine import I2C

        from quillfw.ui.ssd1306 import SSD1306
        address, i2c_id = options
        try:
            i2c = I2C(i2c_id, scl=Pin(pins["scl"]), sda=Pin(pins["sda"]), freq=400000)
        except TypeError:       # the stm32 port: a bus number has its fixed pins (X9, X10)
            i2c = I2C(i2c_id, freq=400000)
        return SSD1306(i2c, width, height, address)
    raise ValueError("unknown panel " + panel)
