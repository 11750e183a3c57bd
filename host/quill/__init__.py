"""Quill host: the quilld bridge, quill-cli and quill-emu."""

from . import compiled as _compiled

__version__ = "0.1.0"

# the mypyc-compiled modules, or their .py files when the extensions may not be used
_compiled.select()
