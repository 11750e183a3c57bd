"""RPC errors as values: a code and a message, as Bitcoin Core's src/rpc/protocol.h.

Every layer raises RPCError; the JSON-RPC layer maps it once into the error
object. Messages never carry key material.
"""

# Standard JSON-RPC 2.0 errors
RPC_INVALID_REQUEST = -32600
RPC_METHOD_NOT_FOUND = -32601
RPC_INVALID_PARAMS = -32602
RPC_INTERNAL_ERROR = -32603
RPC_PARSE_ERROR = -32700

# General application defined errors
RPC_MISC_ERROR = -1
RPC_TYPE_ERROR = -3
RPC_INVALID_ADDRESS_OR_KEY = -5
RPC_OUT_OF_MEMORY = -7
RPC_INVALID_PARAMETER = -8
RPC_DATABASE_ERROR = -20
RPC_DESERIALIZATION_ERROR = -22
RPC_VERIFY_ERROR = -25
RPC_VERIFY_REJECTED = -26
RPC_VERIFY_ALREADY_IN_UTXO_SET = -27
RPC_IN_WARMUP = -28
RPC_METHOD_DEPRECATED = -32

# P2P client errors
RPC_CLIENT_NOT_CONNECTED = -9
RPC_CLIENT_IN_INITIAL_DOWNLOAD = -10

# Wallet errors
RPC_WALLET_ERROR = -4
RPC_WALLET_INSUFFICIENT_FUNDS = -6
RPC_WALLET_INVALID_LABEL_NAME = -11
RPC_WALLET_KEYPOOL_RAN_OUT = -12
RPC_WALLET_UNLOCK_NEEDED = -13
RPC_WALLET_NOT_FOUND = -18
RPC_WALLET_NOT_SPECIFIED = -19
RPC_WALLET_ALREADY_LOADED = -35
RPC_WALLET_ALREADY_EXISTS = -36


class RPCError(Exception):
    """An error with Core's code and message, raised anywhere, rendered once."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message

    def to_json(self) -> dict:
        return {"code": self.code, "message": self.message}

    def __repr__(self) -> str:
        return f"RPCError({self.code}, {self.message!r})"
