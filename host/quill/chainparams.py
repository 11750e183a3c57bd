"""Per-chain constants of the daemon, as Core's chainparamsbase.cpp."""

from dataclasses import dataclass


@dataclass(frozen=True)
class BaseChainParams:
    name: str          # Core's chain name, as -chain takes it
    rpc_port: int
    datadir_subdir: str  # "" for mainnet: the datadir itself


CHAINS = {
    "main": BaseChainParams("main", 8332, ""),
    "test": BaseChainParams("test", 18332, "testnet3"),
    "testnet4": BaseChainParams("testnet4", 48332, "testnet4"),
    "signet": BaseChainParams("signet", 38332, "signet"),
    "regtest": BaseChainParams("regtest", 18443, "regtest"),
}

# -regtest, -testnet, ... as shorthands for -chain=NAME
CHAIN_FLAGS = {"regtest": "regtest", "testnet": "test", "testnet4": "testnet4", "signet": "signet"}
