"""Specter Desktop 2.1 in a real browser (headless Chromium through Selenium) on quilld, with
keys that stay on Quill devices (issue 25). From a fresh Specter data folder: the user adds three
devices by uploading each one's Coldcard generic JSON (`quill-signer export --format=coldcard`,
device A through quilld's bridge) on Specter's "Upload Keys" page, makes a single-sig wallet of A
and a 2-of-3 P2WSH multisig of A, B and C on Specter's new-wallet pages, and reads the receive
addresses Specter shows. The chain pays both; Specter's send page makes each spend, the devices
sign it from PSBT files (`signtx --in/--out`; the multisig's policy registered on each device from
Specter's descriptors), the signed files go back through "Paste signed transaction", "Send
Transaction" broadcasts through quilld, and the spends confirm; the browser then shows each
wallet's history. Screenshots of every page go to the test's tmp directory
(`screenshots/`). Nothing is typed by hand but the device and wallet names."""
from __future__ import annotations

import base64
import json
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.clients.specter_env import specter_python
from tests.clients.test_specter import Server, Specter
from tests.clients.test_specter_keyfiles import ELSEWHERE, PASSWORD, USER, devices_behind_quilld, run_signer
from tests.kit.rpc_daemon import QuillDaemon
from tests.kit.toolchains import unavailable

DEVICES = ("Quill A", "Quill B", "Quill C")


def browser() -> Any:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        unavailable("selenium is not installed (pip install selenium)")
        raise
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or chromedriver is None:
        unavailable("Chromium and chromedriver are not installed (make browser, as root: apt-get install "
                    "chromium chromium-driver)")
        raise AssertionError("unreachable")
    options = Options()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1100"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(chromedriver), options=options)


@dataclass
class Scene:
    quilld: QuillDaemon
    where: list[str]
    files: list[Path]
    python: Path
    data: Path
    shots: Path
    work: Path


class Page:
    """The browser on Specter's server, a screenshot of every page it ends on."""

    def __init__(self, driver: Any, server: Server, shots: Path) -> None:
        self.driver, self.server, self.shots = driver, server, shots
        self.count = 0

    def open(self, path: str) -> None:
        self.driver.get(f"http://127.0.0.1:{self.server.port}{path}")

    def wait(self, condition: Any, what: str, timeout: float = 60.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            try:
                found = condition()
            except Exception:   # noqa: BLE001 - the page is still loading
                found = None
            if found:
                return found
            if time.monotonic() > deadline:
                self.shot(f"timeout-{what}")
                raise AssertionError(f"{what}: not found on {self.driver.current_url}")
            time.sleep(0.3)

    def shot(self, name: str) -> Path:
        self.count += 1
        path = self.shots / f"{self.count:02d}-{name}.png"
        self.driver.save_screenshot(str(path))
        return path

    def css(self, selector: str) -> Any:
        return self.driver.find_element("css selector", selector)


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scene]:
    python = specter_python()
    work = tmp_path_factory.mktemp("specter-browser")
    shots = work / "screenshots"
    shots.mkdir()
    with devices_behind_quilld(work) as (quilld, where):
        files = []
        for i, option in enumerate(where):
            files.append(work / f"quill-{'abc'[i]}-export.json")
            run_signer(option, "export", "--format=coldcard", "--out", str(files[-1]))
        data = work / "specter-data"
        specter = Specter(python, data)       # the node settings page's work: connect to quilld
        try:
            specter.call("connect", host="127.0.0.1", port=quilld.port, user=USER, password=PASSWORD)
        finally:
            specter.close()
        yield Scene(quilld, where, files, python, data, shots, work)


@pytest.fixture(scope="module")
def page(scene: Scene) -> Iterator[Page]:
    driver = browser()
    server = Server(scene.python, scene.data)
    try:
        assert server.get("/")[0] == 200
        yield Page(driver, server, scene.shots)
    finally:
        driver.quit()
        server.stop()


def add_device(page: Page, name: str, key_file: Path) -> None:
    page.open("/devices/new_device_keys/coldcard/")
    page.wait(lambda: page.css("#device_name"), "the Upload Keys page")
    page.css("#device_name").send_keys(name)
    upload = page.css("input#file")
    page.driver.execute_script("arguments[0].classList.remove('hidden')", upload)
    upload.send_keys(str(key_file))
    page.wait(lambda: "Vpub" in page.css("#xpubs_table").text or "tpub" in page.css("#xpubs_table").text,
              "the keys of the uploaded file")
    page.shot(f"device-{name.replace(' ', '-')}-keys")
    page.css("#submit-keys").click()
    page.wait(lambda: "/devices/device/" in page.driver.current_url, "the device page")
    page.shot(f"device-{name.replace(' ', '-')}")


def choose_keys(page: Page, keys: list[str]) -> None:
    """On the new wallet's keys page: each device's key from its file (its "Use this key")."""
    chosen = page.driver.execute_script("""
        let n = 0;
        for (const input of document.querySelectorAll('input.device-key')) {
            if (arguments[0].includes(input.value)) { input.click(); n++; }
        }
        return n;""", keys)
    assert chosen == len(keys), page.driver.execute_script(
        "return Array.from(document.querySelectorAll('input.device-key')).map(i => i.value)")


def create_wallet(page: Page, kind: str, name: str, devices: list[str], keys: list[str]) -> None:
    page.open(f"/wallets/new_wallet/{kind}/")
    page.wait(lambda: page.css("#submit-device"), "the new wallet's device page")
    for device in devices:
        page.driver.execute_script("""
            for (const input of document.querySelectorAll('input[name=devices]')) {
                if (input.nextElementSibling && input.nextElementSibling.textContent.includes(arguments[0])) {
                    input.checked = true;
                }
            }""", device)
    page.shot(f"wallet-{name}-devices")
    page.driver.execute_script("document.getElementById('submit-device').click()")
    page.wait(lambda: page.css("#wallet_name"), "the new wallet's keys page")
    page.css("#wallet_name").send_keys(name)
    choose_keys(page, keys)
    if kind == "multisig":
        required = page.css("input[name=sigs_required]")
        required.clear()
        required.send_keys("2")
    page.shot(f"wallet-{name}-keys")
    page.css("button[value=key]").click()
    page.wait(lambda: "/receive" in page.driver.current_url, "the new wallet's receive page", timeout=120)
    page.shot(f"wallet-{name}-receive")


def spend(scene: Scene, page: Page, name: str, alias: str, signers: list[int], amount: str) -> str:
    """Specter's send page makes the PSBT; the devices sign it from files (`signtx --in/--out`);
    each signed PSBT goes back through "Paste signed transaction"; "Send Transaction" broadcasts
    it from the node. The txid."""
    page.open(f"/wallets/wallet/{alias}/send/new")
    page.wait(lambda: page.css("#create_psbt_btn"), f"{name}'s send page")
    # the recipients as text ("address, amount"), one of the page's own two forms
    page.driver.execute_script("document.querySelector('input[name=ui_option][value=text]').click()")
    page.css("#recipients-txt").send_keys(f"{ELSEWHERE}, {amount}")
    page.shot(f"wallet-{name}-send")
    page.css("#create_psbt_btn").click()
    raw = page.wait(lambda: page.css("#raw-psbt").get_attribute("value"), f"{name}'s unsigned transaction")
    page.shot(f"wallet-{name}-unsigned")
    for device in signers:
        unsigned = scene.work / f"{name}-{device}.psbt"
        unsigned.write_bytes(base64.b64decode(raw))
        signed = scene.work / f"{name}-{device}-signed.psbt"
        run_signer(scene.where[device], "signtx", "--in", str(unsigned), "--out", str(signed))
        page.driver.execute_script("document.getElementById('pastetx').click()")
        page.wait(lambda: page.css("#paste-tx-text").is_displayed(), "the paste box")
        page.css("#paste-tx-text").send_keys(base64.b64encode(signed.read_bytes()).decode())
        page.driver.execute_script(
            "document.querySelector('#paste-tx-popup button.bg-accent').click()")
        time.sleep(2)          # Specter combines it with what it has (combinepsbt, finalizepsbt)
    # once complete, Specter offers to broadcast at once (else its "Send Transaction" button does)
    page.wait(lambda: page.css("#send_tx_btn").is_displayed() or page.css("#broadcast_local_btn").is_displayed(),
              f"{name}'s signed transaction")
    if not page.css("#broadcast_local_btn").is_displayed():
        page.driver.execute_script("document.getElementById('send_tx_btn').click()")
    page.wait(lambda: page.css("#broadcast_local_btn").is_displayed(), "the broadcast choices")
    page.shot(f"wallet-{name}-broadcast")
    mempool = set(scene.quilld.rpc("getrawmempool"))
    page.css("#broadcast_local_btn").click()
    new = page.wait(lambda: set(scene.quilld.rpc("getrawmempool")) - mempool, f"{name}'s transaction in quilld")
    (txid,) = new
    # Specter goes on to the wallet's history by itself once the node took it
    page.wait(lambda: "/send" not in page.driver.current_url, f"{name}'s page after broadcasting")
    page.shot(f"wallet-{name}-sent")
    return str(txid)


def wallet_info(scene: Scene, name: str) -> dict[str, Any]:
    specter = Specter(scene.python, scene.data)
    try:
        specter.call("attach")
        return dict(specter.call("wallet_info", name=name))
    finally:
        specter.close()


def test_specter_in_a_browser_with_the_devices_key_files(scene: Scene, page: Page) -> None:
    exports = [json.loads(f.read_text()) for f in scene.files]
    for name, key_file in zip(DEVICES, scene.files, strict=True):
        add_device(page, name, key_file)
    # the keys as the files hold them (SLIP-132 `_pub`, which Specter's upload takes)
    create_wallet(page, "simple", "Quill", ["Quill A"], [exports[0]["bip84"]["_pub"]])
    create_wallet(page, "multisig", "Vault", list(DEVICES), [e["bip48_2"]["_pub"] for e in exports])
    single, vault = (wallet_info(scene, name) for name in ("Quill", "Vault"))
    # Specter's first address is the device's own (the export's `first`, the device's display)
    assert single["addresses"][0] == exports[0]["bip84"]["first"] == \
        run_signer(scene.where[0], "displayaddress", "--path", "m/84h/1h/0h/0/0")["address"]
    for option in scene.where:
        assert run_signer(option, "register", "--desc", vault["recv_descriptor"], "--desc",
                          vault["change_descriptor"], "--name", "vault") == \
            {"name": "vault", "address": vault["addresses"][0]}
    for address in (single["addresses"][0], vault["addresses"][0]):
        scene.quilld.rpc("generatetoaddress", 1, address)
    scene.quilld.rpc("generatetoaddress", 100, ELSEWHERE)
    page.server.wallets_loaded()
    sent = {"Quill": spend(scene, page, "Quill", single["alias"], [0], "1.5"),
            "Vault": spend(scene, page, "Vault", vault["alias"], [0, 2], "2.25")}
    scene.quilld.rpc("generatetoaddress", 1, ELSEWHERE)
    for name, txid in sent.items():
        assert scene.quilld.rpc("getrawtransaction", txid, True)["confirmations"] == 1
        alias = single["alias"] if name == "Quill" else vault["alias"]
        page.server.wallets_loaded()
        page.open(f"/wallets/wallet/{alias}/history/")
        page.wait(lambda a=alias: a in page.driver.current_url, f"{name}'s history")
        time.sleep(2)    # the history table fills in after the page
        page.shot(f"wallet-{name}-history")
        rows = page.server.csv(f"/wallets/wallet/{alias}/transactions.csv")
        assert txid in {r["TxID"] for r in rows}
    assert len(list(scene.shots.glob("*.png"))) >= 12
