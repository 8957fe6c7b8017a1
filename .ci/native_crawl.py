"""One demo crawl (example_project/) with the python that runs this script, its index in a temporary
folder: exits 1 unless the crawl's start-up line says the native core and the native HTML walk run.

Usage: ``VENV/bin/python .ci/native_crawl.py WORKDIR`` (``.ci/check-wheel`` runs it in the venv
that installed the built wheels).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "example_project"))
import demo  # example_project/demo.py: the demo site's server and crawl

NATIVE = "native fingerprint core, native HTML walk"


def main(work: Path) -> int:
    work.mkdir(parents=True, exist_ok=True)
    stats_path = work / "stats.json"
    with demo.SiteServer() as server:
        proc = demo.crawl_process(
            server.url("/index.html"),
            items_path=work / "items.jsonl",
            stats_path=stats_path,
            settings={"SIMHASH_DIR": str(work / "simhash")},
            stderr=subprocess.PIPE,
        )
        _, err = proc.communicate(timeout=300)
    log = err.decode("utf-8", "replace")
    opened = [line for line in log.splitlines() if "fingerprint core" in line]
    print("\n".join(opened) or log[-3000:])
    if proc.returncode != 0 or not stats_path.exists():
        print(f"the crawl failed (exit code {proc.returncode})", file=sys.stderr)
        return 1
    stats = json.loads(stats_path.read_text(encoding="utf-8"))
    pages = sum(v for k, v in stats.items() if k in ("simhash/new", "simhash/near_duplicate"))
    print(f"{pages} pages fingerprinted: simhash/new {stats.get('simhash/new')}, "
          f"simhash/near_duplicate {stats.get('simhash/near_duplicate')}")
    if not any(NATIVE in line for line in opened) or pages == 0:
        print(f"the crawl did not run native (expected {NATIVE!r} in its start-up line)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
