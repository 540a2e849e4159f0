"""CI's check of the user's pass (.ci/run): every skipped test says it needs one of the things a user
may lack, by name, so no test can skip for a reason nobody chose (a missing folder, a typo'd path).

    python .ci/check_skips.py pass1.xml     # pytest --junitxml output; exit 1 naming each other skip

Expected failures (xfail, reported as skips in JUnit XML) are left to pytest's own strict check.
"""

import sys
import xml.etree.ElementTree as ET
from collections import Counter

#: What a user may lack, as the skip reasons name it: the full data and faces mirrors, the SLURM
#: cluster and torch (the `deep` extra), each supplied in CI's second pass; and a documented code
#: block its page marks as not runnable in a test, with the reason (tests/test_doc_examples.py
#: refuses a mark without one), which no pass runs.
NEEDS = ("REJECTOPT_DATA_MIRROR", "REJECTOPT_FACES_MIRROR", "REJECTOPT_SLURM", "torch", "marked in the page: ")


def main(path):
    reasons, other = Counter(), []
    for case in ET.parse(path).getroot().iter("testcase"):
        skipped = case.find("skipped")
        if skipped is None or skipped.get("type") == "pytest.xfail":
            continue
        # a module-level skip says "collection skipped" in the attribute and its reason in the text
        message = f'{skipped.get("message", "")} {skipped.text or ""}'.strip()
        need = next((name for name in NEEDS if name in message), None)
        if need is None:
            other.append(f"{case.get('classname')}::{case.get('name')}: {message}")
        else:
            reasons[need] += 1
    print("skipped in the user's pass: " + (", ".join(f"{n} for {k.rstrip(': ')}" for k, n in reasons.items()) or "none"))
    if other:
        print(f"CI: FAILED: {len(other)} test(s) skipped for a reason that names none of {', '.join(NEEDS)}:",
              *other, sep="\n  ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
