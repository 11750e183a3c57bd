"""A screen's content and its layout on a panel, without drawing (runs on CPython
too): what quillfw.ui.display draws and what the emulator writes as text.

    Screen(name, title, items, action)
        name     the screen's kind ("review", "address", ...): the emulator's file name
        title    one short line, drawn inverted at the top
        items    a list of items; an item is a tuple of parts (strings). Each part
                 starts a new row on the panel and wraps at the panel's width; the
                 item's logical text (one line of text()) is its parts joined by
                 spaces, so an address or an amount is never split there.
                 A part from the host (a wallet's name) is host(text): drawn
                 between quotes and inverted, so it cannot pass for an address.
        action   what approving does ("Approve", "Continue", "Wipe"...), in the footer

    lines(screen)            the logical text: the title, then one line per item
    layout(screen, cols, rows) -> pages: each a list of (row text, inverted)
"""
HOST = "\x02"           # a part supplied by the host (never an address or an amount)


def host(text):
    """Host-supplied text as a part: printable ASCII only, anything else shown as '?'."""
    return HOST + "".join(c if " " <= c <= "~" else "?" for c in text)


def plain(part):
    return '"%s"' % part[1:] if part[:1] == HOST else part


class Screen:
    def __init__(self, name, title, items, action="Approve"):
        self.name = name
        self.title = title
        self.items = items
        self.action = action

    def lines(self):
        return [self.title] + [" ".join(plain(p) for p in item) for item in self.items]

    def prompt(self):
        """One line: what a device without a display passes to its approver."""
        return "; ".join(self.lines()[1:])


def _wrap(text, cols):
    return [text[i:i + cols] for i in range(0, len(text), cols)] or [""]


def layout(screen, cols, rows):
    """The content rows, page by page (rows per page), each row (text, inverted).
    An item is kept on one page when it fits on one; a blank row separates items."""
    pages = [[]]
    for item in screen.items:
        block = []
        for part in item:
            inverted = part[:1] == HOST
            for row in _wrap(plain(part), cols):
                block.append((row, inverted))
        page = pages[-1]
        need = len(block) + (1 if page else 0)
        if len(page) + need > rows and page:
            page = []
            pages.append(page)
        elif page:
            page.append(("", False))
        while block:
            room = rows - len(page)
            page.extend(block[:room])
            block = block[room:]
            if block:
                page = []
                pages.append(page)
    return pages
