"""setconfirmationpolicy: when the signing device asks its user before it
signs (protocol/SPEC.md §8). The device decides: tightening takes effect at
once, loosening waits for the user's confirmation on the device."""
from quill.rpc.args import amount_from_value
from quill.rpc.registry import AMOUNT, DEVICE, STR, Method, Param

from .device import device_of, policy_json


def setconfirmationpolicy(ctx, args):
    policy, amount = args
    params = {"policy": policy}
    if amount is not None:
        params["amount"] = amount_from_value(amount)
    device = device_of(ctx)
    # a pool of devices (several -device): every device, in order, gets the policy
    managers = [m.manager for m in device.members] if hasattr(device, "members") else [device]
    results = []
    for manager in managers:
        # loosening waits for the user's confirmation on the device
        results.append(manager.client().call("set_confirm_policy", params, awaits_user=True))
        manager.info(refresh=True)
    return policy_json(results[0])


METHODS = [
    Method(
        "setconfirmationpolicy", "device", setconfirmationpolicy,
        params=[
            Param("policy", STR, required=True,
                  help="always: confirm every signing session on the device; above: only when the\n"
                       "transaction moves more than amount; never: do not ask"),
            Param("amount", AMOUNT, required=False,
                  help="The threshold in BTC, for policy above (the larger of the inputs' and the\n"
                       "outputs' totals is compared with it)"),
        ],
        description="Sets when the signing device asks its user to confirm before it signs.\n"
                    "Asking more often takes effect at once; asking less often must first be\n"
                    "confirmed on the device (this call waits for it).",
        result="""{                             (json object) the policy now in force
  "policy" : "str",             (string) always, above or never
  "amount" : n                  (numeric, optional) the threshold of policy above
}""",
        examples="> quill-cli setconfirmationpolicy above 0.01\n> quill-cli setconfirmationpolicy always",
        lane=DEVICE,
    )
]
