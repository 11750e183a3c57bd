"""Quill host: the quilld bridge, quill-cli and quill-emu."""

__version__ = "0.1.0"
