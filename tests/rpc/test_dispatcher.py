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
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "Internal bug detected in RPC method buggy: ValueError" in logged
    assert "return int(args[0])" in logged and secret not in logged
