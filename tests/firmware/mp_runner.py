"""Run one firmware test module under the MicroPython unix port.

    micropython mp_runner.py <firmware_dir> <repo_dir> <module> [test_name ...]

<module> is a dotted name under the repository (tests.firmware.test_cbor): the
test modules import their helpers as the package tests.firmware, as under pytest.

Calls every `test_*` function of the module (or the named ones) and prints one
line per test: `PASS name`, `SKIP name: reason` or `FAIL name: error`, then a
summary line `N passed, N failed, N skipped`. Exit status 1 if any failed.
"""
import sys


def main(argv):
    fw_dir, repo_dir, modname = argv[1], argv[2], argv[3]
    wanted = argv[4:]
    # This runs inside the MicroPython subprocess, which has no pytest to set its path.
    sys.path.insert(0, repo_dir)
    sys.path.insert(0, fw_dir)
    from tests.firmware import fwtest
    mod = __import__(modname)
    for part in modname.split(".")[1:]:  # __import__ returns the top package
        mod = getattr(mod, part)
    names = wanted or sorted(n for n in dir(mod) if n.startswith("test_"))
    passed = failed = skipped = 0
    for name in names:
        fn = getattr(mod, name)
        try:
            fn()
            passed += 1
            print("PASS", name)
        except fwtest.Skipped as e:
            skipped += 1
            print("SKIP", name + ":", e)
        except Exception as e:  # report and go on: one failure must not hide others
            failed += 1
            print("FAIL", name + ":", type(e).__name__, e)
            sys.print_exception(e)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


sys.exit(main(sys.argv))
