"""The RPC handlers, one module per group of methods.

MODULES is the one list of them, in the order their methods are registered. The daemon's registry
(quill.handlers.lazy) is built from method_table.py, a table generated from these modules' own
METHODS by tools/gen_method_table.py, so that quilld answers without importing them: each module
is imported at its first call. tests/rpc/test_method_table.py fails when the table drifts.
"""

MODULES = ("control", "rawtransactions", "rawtransactions_chain", "signing", "blockchain", "mining", "wallet",
           "device", "confirmation", "psbt", "network", "chainstate", "wallet_coins", "wallet_funding",
           "psbt_process", "feebump", "external_signer", "wallet_send", "wallet_signing", "signer_command")
