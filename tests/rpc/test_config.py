"""Core-style options and configuration files (quill.config)."""
import pytest

from quill import config
from quill.config import ConfigError


def load(argv, conf_text=None, tmp_path=None):
    argv = list(argv)
    if conf_text is not None:
        (tmp_path / "quill.conf").write_text(conf_text)
        argv.insert(0, f"-datadir={tmp_path}")
    return config.load(argv, config.DAEMON_OPTIONS)


def test_dash_and_double_dash_and_negation(tmp_path):
    args = load(["-rpcuser=alice", "--rpcport=1234", "-noprinttoconsole", "-debug"], "", tmp_path)
    assert args.get("rpcuser") == "alice"
    assert args.get_int("rpcport", 0) == 1234
    assert args.get_bool("printtoconsole", True) is False
    assert args.get_bool("debug", False) is True


def test_unknown_option_is_an_error():
    with pytest.raises(ConfigError, match="Invalid parameter -frobnicate"):
        config.load(["-frobnicate=1"], config.DAEMON_OPTIONS)


def test_unexpected_token_is_an_error():
    with pytest.raises(ConfigError, match="unexpected token 'oops'"):
        config.load(["oops"], config.DAEMON_OPTIONS)


def test_chain_from_conf_and_sections(tmp_path):
    conf = "regtest=1\nrpcuser=top\n[regtest]\nrpcport=19999\nrpcuser=section\n[main]\nrpcport=1\n"
    args = load([], conf, tmp_path)
    assert args.chain == "regtest"
    assert args.get("rpcuser") == "section"      # the chain's section beats the top
    assert args.get_int("rpcport", 0) == 19999


def test_command_line_beats_conf(tmp_path):
    args = load(["-rpcuser=cmd"], "rpcuser=file\n", tmp_path)
    assert args.get("rpcuser") == "cmd"


def test_network_only_option_at_top_applies_to_main_only(tmp_path):
    args = load(["-regtest"], "rpcport=1111\n", tmp_path)
    assert args.get_int("rpcport", 18443) == 18443
    assert any("only applied on regtest network" in w for w in args.warnings)
    assert load([], "rpcport=1111\n", tmp_path).get_int("rpcport", 0) == 1111


def test_prefixed_conf_option(tmp_path):
    args = load(["-chain=signet"], "signet.rpcport=3333\n", tmp_path)
    assert args.get_int("rpcport", 0) == 3333


def test_conflicting_chains():
    with pytest.raises(ConfigError, match="Can use at most one"):
        config.load(["-regtest", "-testnet"], config.DAEMON_OPTIONS)
    with pytest.raises(ConfigError, match="Invalid chain type: moon"):
        config.load(["-chain=moon"], config.DAEMON_OPTIONS)


def test_conf_errors(tmp_path):
    with pytest.raises(ConfigError, match="negated option"):
        load([], "regtest\n", tmp_path)
    with pytest.raises(ConfigError, match="could not be opened"):
        config.load([f"-datadir={tmp_path}", "-conf=missing.conf"], config.DAEMON_OPTIONS)
    with pytest.raises(ConfigError, match="does not exist"):
        config.load([f"-datadir={tmp_path}/nope"], config.DAEMON_OPTIONS)


def test_unknown_conf_key_is_ignored_with_a_warning(tmp_path):
    args = load([], "frobnicate=1\n", tmp_path)
    assert "Ignoring unknown configuration value frobnicate" in args.warnings


def test_list_options_keep_every_value(tmp_path):
    args = load(["-rpcallowip=10.0.0.1", "-deprecatedrpc=addresses"], "rpcallowip=10.0.0.2\n", tmp_path)
    assert args.get_all("rpcallowip") == ["10.0.0.1", "10.0.0.2"]
    assert args.get_all("deprecatedrpc") == ["addresses"]
