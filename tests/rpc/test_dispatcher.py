"""The dispatcher's handling of what handlers do wrong (in-process)."""
from quill.rpc.jsonrpc import CallContext, Dispatcher
from quill.rpc.registry import STR, Method, Param, Registry


def test_a_handler_bug_reports_only_its_type():
    """An unexpected exception's text can quote the request; the client gets its type only."""
    def buggy(ctx, args):
        return int(args[0])  # ValueError quoting the argument

    registry = Registry()
    registry.add([Method("buggy", "test", buggy, [Param("secret", STR, required=True)])])
    secret = "cVt4o7BGAig1UXywgGSmARhxMdzP5qvQsxKkSsc1XEkw3tDTQFpy"
    status, body = Dispatcher(registry).process_body(
        ('{"id":1,"method":"buggy","params":["%s"]}' % secret).encode(), CallContext(node=None))
    assert status == 500
    assert body == b'{"result":null,"error":{"code":-1,"message":"Internal error (ValueError)"},"id":1}\n'
