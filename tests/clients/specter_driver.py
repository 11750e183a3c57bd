"""Drives Specter Desktop's own Python classes, in Specter's virtual environment (not Quill's).

Run as ``<specter-venv>/bin/python specter_driver.py DATA_FOLDER``. It reads one JSON command a
line on stdin and answers each with one line ``SPECTER-DRIVER <json>`` on stdout (Specter's own
logging goes to stderr). The test (tests/clients/test_specter.py) owns the chain and the checks;
this file only does what Specter's web endpoints do when a user clicks: connect a node, add
devices, create wallets, read a wallet's history, balance and UTXOs, build a PSBT. The data
folder it leaves is one `python -m cryptoadvance.specter server` then opens as its own.

It imports nothing from Quill: it must run under Specter's own interpreter and packages.
"""
import json
import logging
import os
import sys
import time
import traceback

PREFIX = "SPECTER-DRIVER "


def answer(payload):
    sys.stdout.write(PREFIX + json.dumps(payload, default=str) + "\n")
    sys.stdout.flush()


class Driver:
    def __init__(self, data_folder):
        from cryptoadvance.specter.managers.device_manager import DeviceManager
        from cryptoadvance.specter.managers.node_manager import NodeManager
        from cryptoadvance.specter.util.specter_migrator import SpecterMigrator

        self.data_folder = data_folder
        os.makedirs(data_folder, exist_ok=True)
        # What the server's first start does to a new data folder: it is then one that
        # `python -m cryptoadvance.specter server` opens as its own (no old-format migrations)
        SpecterMigrator(data_folder).execute_migrations()
        self.node_manager = NodeManager(data_folder=os.path.join(data_folder, "nodes"))
        self.device_manager = DeviceManager(os.path.join(data_folder, "devices"))
        self.node = None
        self.wallet_manager = None

    def connect(self, host, port, user, password):
        """What the node settings page does: add an external node, test it, keep it."""
        from cryptoadvance.specter.managers.config_manager import ConfigManager

        self.node = self.node_manager.add_external_node("BTC", "quill", False, "", user, password,
                                                        str(port), host, "http")
        ConfigManager(self.data_folder).update_active_node(self.node.alias)   # the "use this node" choice
        return self.attach()

    def attach(self):
        """Open the data folder's active node (as the server does at start) and its wallets."""
        from cryptoadvance.specter.managers.config_manager import ConfigManager
        from cryptoadvance.specter.managers.wallet_manager import WalletManager

        config = ConfigManager(self.data_folder)
        self.node = self.node_manager.get_by_alias(config.data["active_node_alias"])
        test = self.node.test_rpc()
        self.node.check_info()
        # the admin user's wallets, under the name the server gives them in Core: specter<uid>/<alias>
        uid = config.data["uid"]
        self.wallet_manager = WalletManager(os.path.join(self.data_folder, "wallets"), self.node.rpc,
                                            self.node.chain, self.device_manager, path=f"specter{uid}")
        # the wallets already in the folder (made by the server's pages) load in a thread: wait
        deadline = time.monotonic() + 120
        while self.wallet_manager.is_loading and time.monotonic() < deadline:
            time.sleep(0.1)
        return {"test_rpc": test, "is_running": self.node.is_running, "chain": self.node.chain,
                "blocks": self.node.info.get("blocks"), "core_version": self.node.bitcoin_core_version_raw,
                "mempool_info": self.node.info.get("mempool_info"),
                "blockfilterindex": self.node.info.get("blockfilterindex")}

    def create_wallet(self, name, sigs_required, key_type, xpubs):
        """The new-wallet pages: one device per key, then the wallet over their keys."""
        from cryptoadvance.specter.key import Key

        keys, devices = [], []
        for i, xpub in enumerate(xpubs):
            key = Key.parse_xpub(xpub)
            device = self.device_manager.add_device(f"{name} signer {i}", "other", [key])
            keys.append(key)
            devices.append(device)
        wallet = self.wallet_manager.create_wallet(name, sigs_required, key_type, keys, devices)
        return {"alias": wallet.alias, "core_wallet": f"{self.wallet_manager.rpc_path}/{wallet.alias}",
                "descriptor": str(wallet.descriptor),
                "recv_descriptor": wallet.recv_descriptor, "change_descriptor": wallet.change_descriptor,
                "addresses": [wallet.get_address(i) for i in range(3)],
                "change_address": wallet.change_address}

    def _wallet(self, name):
        return self.wallet_manager.wallets[name]

    def wallet_info(self, name):
        """What a wallet's settings page shows of a wallet made elsewhere (e.g. in the browser)."""
        if name not in self.wallet_manager.wallets:
            raise KeyError(f"{name} not loaded; failed: {self.wallet_manager.failed_load_wallets}")
        wallet = self._wallet(name)
        return {"alias": wallet.alias, "recv_descriptor": wallet.recv_descriptor,
                "change_descriptor": wallet.change_descriptor,
                "addresses": [wallet.get_address(i) for i in range(3)]}

    def balance(self, name):
        """The balance line above a wallet's pages (getbalances alone)."""
        wallet = self._wallet(name)
        wallet.update_balance()
        return {"balance": wallet.balance, "amount_total": wallet.amount_total,
                "amount_available": wallet.amount_available}

    def report(self, name):
        """The wallet's pages: history, balance, UTXOs, as the UI shows them."""
        wallet = self._wallet(name)
        wallet.update()
        wallet.update_balance()
        txs = wallet.txlist()
        return {
            "txlist": [{k: tx.get(k) for k in ("txid", "category", "flow_amount", "address", "confirmations",
                                                "blockheight", "ismine")} for tx in txs],
            "balance": wallet.balance,
            "amount_total": wallet.amount_total,
            "amount_confirmed": wallet.amount_confirmed,
            "amount_unconfirmed": wallet.amount_unconfirmed,
            "utxo": [{k: u.get(k) for k in ("txid", "vout", "amount", "address", "confirmations", "locked")}
                     for u in wallet.full_utxo],
            "address_index": wallet.address_index,
        }

    def createpsbt(self, name, address, amount, fee_rate, selected_coins):
        """The send page: a PSBT for one payment, from the coins chosen (coin control) or any."""
        wallet = self._wallet(name)
        wallet.update_balance()
        psbt = wallet.createpsbt([address], [amount], fee_rate=fee_rate, selected_coins=selected_coins)
        shown = psbt.to_dict()
        return {"psbt": psbt.to_string(), "txid": psbt.txid, "fee": psbt.fee, "fee_rate": shown["fee_rate"],
                "address": shown["address"], "amount": shown["amount"],
                "pending": sorted(wallet.pending_psbts)}

    def sign_and_send(self, name, txid, seeds):
        """The signing devices (embit, with these seeds) sign the pending PSBT one after the other;
        each signature goes through the combine page (combinepsbt, finalizepsbt) and the finished
        transaction through the broadcast button (testmempoolaccept, sendrawtransaction)."""
        from embit.bip32 import HDKey
        from embit.networks import NETWORKS
        from embit.psbt import PSBT

        wallet = self._wallet(name)
        current = wallet.pending_psbts[txid].to_string()
        raw, signed_by = {}, []
        for seed in seeds:
            device_psbt = PSBT.from_string(current)
            signed_by.append(device_psbt.sign_with(HDKey.from_seed(bytes.fromhex(seed), NETWORKS["regtest"]["xprv"])))
            combined = self.node.rpc.combinepsbt([current, device_psbt.to_string()])
            raw = self.node.rpc.finalizepsbt(combined)
            if "psbt" not in raw:
                raw["psbt"] = combined
            wallet.update_pending_psbt(combined, txid, raw)
            current = combined
        accepted = wallet.rpc.testmempoolaccept([raw["hex"]])[0]
        sent = self.node.rpc.sendrawtransaction(raw["hex"])
        wallet.delete_spent_pending_psbts([raw["hex"]])
        return {"signatures": signed_by, "complete": raw["complete"], "accepted": accepted, "sent": sent,
                "pending": sorted(wallet.pending_psbts)}

    def send_signed(self, name, txid, signed):
        """The signing devices' PSBTs (signed elsewhere, e.g. files a hardware wallet wrote) through
        the combine page (combinepsbt, finalizepsbt) and the broadcast button."""
        wallet = self._wallet(name)
        combined = self.node.rpc.combinepsbt([wallet.pending_psbts[txid].to_string(), *signed])
        raw = self.node.rpc.finalizepsbt(combined)
        if "psbt" not in raw:
            raw["psbt"] = combined
        wallet.update_pending_psbt(combined, txid, raw)
        accepted = wallet.rpc.testmempoolaccept([raw["hex"]])[0]
        sent = self.node.rpc.sendrawtransaction(raw["hex"])
        wallet.delete_spent_pending_psbts([raw["hex"]])
        return {"complete": raw["complete"], "accepted": accepted, "sent": sent,
                "pending": sorted(wallet.pending_psbts)}

    def discard_psbts(self, name):
        """The pending-PSBT page's delete button, for each: the coins are unlocked again."""
        wallet = self._wallet(name)
        for txid in list(wallet.pending_psbts):
            wallet.delete_pending_psbt(txid)
        return sorted(wallet.pending_psbts)


def main():
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    driver = Driver(sys.argv[1])
    for line in sys.stdin:
        command = json.loads(line)
        op = command.pop("op")
        try:
            answer({"ok": getattr(driver, op)(**command)})
        except Exception as e:  # reported to the test, which shows it
            answer({"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()})


if __name__ == "__main__":
    main()
