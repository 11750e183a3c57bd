"""Control RPCs, as Core's rpc/server.cpp and rpc/node.cpp: help, stop,
uptime, getrpcinfo, and the hidden echo/echojson used to test the transport."""

from quill.rpc.errors import RPC_MISC_ERROR, RPCError
from quill.rpc.registry import ANY, HIDDEN, INLINE, STR, Method, Param


def help_(ctx, args):
    registry = ctx.node.registry
    command = args[0]
    if command is None:
        return _overview(registry)
    method = registry.get(command)
    if method is None:
        return f"help: unknown command: {command}"
    if method.core_help:
        return method.core_help  # Core's text ends with its newline
    return method.help_text().rstrip("\n")


def _overview(registry) -> str:
    sections = []
    for category, methods in registry.by_category().items():
        if category == HIDDEN:
            continue
        lines = [f"== {category[:1].upper() + category[1:]} =="]
        lines += [m.usage() for m in methods]
        sections.append("\n".join(lines))
    return "\n\n".join(sections)


def stop(ctx, args):
    ctx.node.request_shutdown()
    return "Quill stopping"


def uptime(ctx, args):
    return ctx.node.uptime()


def getrpcinfo(ctx, args):
    return {"active_commands": ctx.node.rpc_active_commands(), "logpath": ctx.node.log_path}


def echo(ctx, args):
    if args[9] == "trigger_internal_bug":
        raise RPCError(RPC_MISC_ERROR, "Internal bug detected: echo trigger_internal_bug")
    return list(args[:args.given])


_ECHO_PARAMS = [Param(f"arg{i}", ANY) for i in range(10)]

METHODS = [
    Method("help", "control", help_, [Param("command", STR)], lane=INLINE),
    Method("stop", "control", stop, lane=INLINE),
    Method("uptime", "control", uptime, lane=INLINE),
    Method("getrpcinfo", "control", getrpcinfo,
           lane=INLINE),
    Method("echo", HIDDEN, echo, _ECHO_PARAMS,
           lane=INLINE),
    Method("echojson", HIDDEN, echo, _ECHO_PARAMS,
           lane=INLINE),
]
