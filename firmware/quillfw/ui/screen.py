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
        private  a secret's screen (a seed's words): on the panel only

    lines(screen)            the logical text: the title, then one line per item
    layout(screen, cols, rows, want) -> (pages, rows of page want: each (text, inverted))
"""
HOST = "\x02"           # a part supplied by the host (never an address or an amount)


def host(text):
    """Host-supplied text as a part: printable ASCII only, anything else shown as '?'."""
    return HOST + "".join(c if " " <= c <= "~" else "?" for c in text)


def plain(part):
    return '"%s"' % part[1:] if part[:1] == HOST else part


class Screen:
    def __init__(self, name, title, items, action="Approve", private=False):
        """private: a secret (a seed's words): drawn on the panel only, never in
        prompt() (the approver's line) nor in the emulator's debug link."""
        self.name = name
        self.title = title
        self.items = items
        self.action = action
        self.private = private

    def lines(self):
        return [self.title] + [" ".join(plain(p) for p in item) for item in self.items]

    def prompt(self):
        """One line: what a device without a display passes to its approver."""
        if self.private:
            return self.title
        return "; ".join(self.lines()[1:])


def layout(screen, cols, rows, want=-1):
    """(pages, the rows of page `want`): the screen laid out at cols characters by rows
    rows per page, each row (text, inverted). An item starts a new page when it does
    not fit on the current one (a blank row separates items on a page); one longer
    than a page goes on over the next. Only page `want`'s rows are made (the heap
    holds one page's text), so a draw lays the screen out again."""
    page, used, out = 0, 0, []
    for item in screen.items:
        n = 0
        for part in item:
            n += max(1, -(-len(plain(part)) // cols))
        if used and used + 1 + n > rows:
            page, used = page + 1, 0
        elif used:
            if page == want:
                out.append(("", False))
            used += 1
        for part in item:
            inverted = part[:1] == HOST
            text = plain(part)
            for start in range(0, max(len(text), 1), cols):
                if used == rows:
                    page, used = page + 1, 0
                if page == want:
                    out.append((text[start:start + cols], inverted))
                used += 1
    return page + 1, out
