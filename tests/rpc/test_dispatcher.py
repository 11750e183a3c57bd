"""The dispatcher's handling of what handlers do wrong (in-process)."""
from quill.rpc.jsonrpc import CallContext, Dispatcher
from quill.rpc.registry import STR, Method, Param, Registry


def test_a_handler_bug_names_no_python_class(caplog):
    """An unexpected exception's text can quote the request: the client gets Core's generic
    form of an internal bug, no Python class name; the log gets the traceback's frames."""
    def buggy(ctx, args):
        return int(args[0])  # ValueError quoting the argument

    registry = Registry()
    registry.add([Method("buggy", "test", buggy, [Param("secret", STR, required=True)])])
    secret = "cVt4o7BGAig1UXywgGSmARhxMdzP5qvQsxKkSsc1XEkw3tDTQFpy"
    status, body = Dispatcher(registry).process_body(
        ('{"id":1,"method":"buggy","params":["%s"]}' % secret).encode(), CallContext(node=None))
    assert status == 500
    assert body == (b'{"result":null,"error":{"code":-1,"message":"Internal bug detected: buggy did not complete; '
                    b'the details are in debug.log"},"id":1}\n')
    from quill.daemon.logging_setup import CoreFormatter
    logged = "\n".join(CoreFormatter().format(r) for r in caplog.records)
    assert "Internal bug detected in RPC method buggy: ValueError" in logged
    assert "return int(args[0])" in logged and secret not in logged


def test_a_handler_bug_is_logged_with_its_traceback_and_never_its_text(caplog):
    """debug.log gets where the bug is (each frame's file, line, function and source line), as
    Core logs an unexpected exception, but not the exception's text, which quotes the request."""
    from quill.daemon.logging_setup import CoreFormatter

    def buggy(ctx, args):
        return int(args[0])  # ValueError quoting the argument

    registry = Registry()
    registry.add([Method("buggy", "test", buggy, [Param("secret", STR, required=True)])])
    secret = "cVt4o7BGAig1UXywgGSmARhxMdzP5qvQsxKkSsc1XEkw3tDTQFpy"
    with caplog.at_level("ERROR", logger="quill.rpc"):
        Dispatcher(registry).process_body(
            ('{"id":1,"method":"buggy","params":["%s"]}' % secret).encode(), CallContext(node=None))
    lines = "\n".join(CoreFormatter().format(r) for r in caplog.records)
    assert ("[error] Internal bug detected in RPC method buggy: ValueError\nTraceback (most recent call last):"
            in lines)
    assert ", in buggy\n    return int(args[0])" in lines
    assert "jsonrpc.py" in lines           # the frames from the dispatcher down
    assert lines.endswith("\nValueError")  # its type, not its text
    assert secret not in lines and secret[:12] not in lines
