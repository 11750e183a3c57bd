"""quill-cli as a subprocess against a real quilld (bitcoin-cli conventions)."""
import json
import subprocess

from tests.kit.rpc_daemon import VENV_BIN, QuillDaemon


def test_uptime_with_the_cookie(daemon):
    proc = daemon.cli("uptime")
    assert proc.returncode == 0 and proc.stdout.strip().isdigit()


def test_strings_print_raw_and_json_indented(daemon):
    assert daemon.cli("help", "uptime").stdout.startswith("uptime\n\nReturns the total uptime")
    proc = daemon.cli("echo", "a", "1", "[2]")
    assert proc.stdout == '[\n  "a",\n  "1",\n  "[2]"\n]\n'
    proc = daemon.cli("echojson", '"a"', "1.50", '{"k":[true,null]}')
    assert proc.stdout == '[\n  "a",\n  1.50,\n  {\n    "k": [\n      true,\n      null\n    ]\n  }\n]\n'
    assert json.loads(daemon.cli("echojson", "[]").stdout) == [[]]


def test_named_and_stdin(daemon):
    proc = daemon.cli("-named", "echo", "arg2=two", "arg0=zero")
    assert json.loads(proc.stdout) == ["zero", None, "two"]
    proc = daemon.cli("-named", "echojson", "arg1=[1,2]", "\"pos\"")
    assert json.loads(proc.stdout) == ["pos", [1, 2]]
    proc = daemon.cli("-stdin", "echo", "first", stdin="second line\nthird\n")
    assert json.loads(proc.stdout) == ["first", "second line", "third"]


def test_errors_print_code_and_message_with_nonzero_status(daemon):
    proc = daemon.cli("nosuchmethod")
    assert proc.returncode != 0
    assert proc.stderr == "error code: -32601\nerror message:\nMethod not found\n"
    proc = daemon.cli("echojson", "{bad json")
    assert proc.returncode == 1 and proc.stderr == "error: Error parsing JSON: {bad json\n"
    proc = daemon.cli("help", "x", "y")
    assert proc.returncode == 1 and proc.stderr.startswith("error code: -1\nerror message:\nhelp (")


def test_wrong_password_and_no_server(tmp_path, daemon):
    proc = daemon.cli("-rpcuser=x", "-rpcpassword=y", "uptime")
    assert proc.returncode == 1
    assert proc.stderr == "error: Authorization failed: Incorrect rpcuser or rpcpassword\n"
    proc = subprocess.run([str(VENV_BIN / "quill-cli"), f"-datadir={tmp_path}", "-regtest", "-rpcport=1",
                           "-rpcpassword=p", "uptime"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1 and proc.stderr.startswith("error: Could not connect to the server 127.0.0.1:1")
    proc = subprocess.run([str(VENV_BIN / "quill-cli"), f"-datadir={tmp_path}", "-regtest", "uptime"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1 and "Could not locate RPC credentials" in proc.stderr


def test_rpcwait_waits_for_the_server(tmp_path):
    d = QuillDaemon(tmp_path, wait=False)
    cli = subprocess.Popen([str(VENV_BIN / "quill-cli"), f"-datadir={tmp_path}", "-regtest",
                            f"-rpcport={d.port}", "-rpcwait", "-rpcwaittimeout=60", "echo", "waited"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    import time
    time.sleep(1.5)
    with d:
        out, err = cli.communicate(timeout=60)
    assert cli.returncode == 0, err
    assert json.loads(out) == ["waited"]


def test_rpcwallet_goes_to_the_wallet_uri(daemon):
    proc = daemon.cli("-rpcwallet=w1", "echo", "x")
    assert proc.returncode == 0 and json.loads(proc.stdout) == ["x"]


def test_config_file_credentials(tmp_path):
    (tmp_path / "quill.conf").write_text("regtest=1\nrpcuser=conf\nrpcpassword=fromfile\n")
    with QuillDaemon(tmp_path, "-rpcuser=conf", "-rpcpassword=fromfile", chain_from_conf=True) as d:
        proc = subprocess.run([str(VENV_BIN / "quill-cli"), f"-datadir={tmp_path}", f"-rpcport={d.port}", "uptime"],
                              capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0, proc.stderr
