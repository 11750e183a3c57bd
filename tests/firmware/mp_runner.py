"""Run one firmware test module under the MicroPython unix port.

    micropython mp_runner.py <firmware_dir> <tests_dir> <module> [test_name ...]

Calls every `test_*` function of the module (or the named ones) and prints one
line per test: `PASS name`, `SKIP name: reason` or `FAIL name: error`, then a
summary line `N passed, N failed, N skipped`. Exit status 1 if any failed.
"""
import sys


def main(argv):
    fw_dir, tests_dir, modname = argv[1], argv[2], argv[3]
    wanted = argv[4:]
    sys.path.insert(0, tests_dir)
    sys.path.insert(0, fw_dir)
    import fwtest
    mod = __import__(modname)
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
