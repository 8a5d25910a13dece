"""Read a subunit v2 stream (``stestr last --subunit``) on stdin and write
``{test id: {"status": ..., "reason": ...}}`` as JSON to the path given.

status is tempest's: success, skip, fail (xfail/uxsuccess as subunit names them).
reason is the skip reason, or the failure's traceback (its last 60 lines, without
the plugin's noisy log lines). A class fixture that fails shows as setUpClass (...).
"""
import json
import sys

import subunit
import testtools


def main(path):
    results = {}

    def on_test(test):
        test_id = test["id"]
        details = test["details"]
        text = ""
        for name in ("reason", "traceback"):
            if name in details:
                text = details[name].as_text()
                break
        if test["status"] == "fail" and not text:
            text = "\n".join(f"{k}: {v.as_text()}" for k, v in details.items())
        lines = [line for line in text.strip().splitlines()
                 if line.strip() and "WARNING" not in line]
        results[test_id.split("[")[0]] = {"status": test["status"],
                                          "reason": "\n".join(lines[-60:])}

    stream = subunit.ByteStreamToStreamResult(sys.stdin.buffer, non_subunit_name="stdout")
    result = testtools.StreamToDict(on_test)
    result.startTestRun()
    try:
        stream.run(result)
    finally:
        result.stopTestRun()
    with open(path, "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    counts = {}
    for r in results.values():
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print("heat-tempest: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))


if __name__ == "__main__":
    main(sys.argv[1])
