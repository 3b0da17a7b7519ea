#!/usr/bin/env python3
"""Waits until every named worker is live and in service (site.yml runs it on
the master host with the script module).

  mr_wait_workers.py --ids w1,w2 [--since EPOCH_S] [--timeout S] [--config FILE]

--since: a worker counts only once the master heard from it after EPOCH_S
(a worker just restarted, not its old registration that the master has not
yet declared dead). Prints the final table; exits 1 naming the workers that
were not ready when the timeout ran out.
"""
import argparse
import json
import subprocess
import sys
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ids", required=True)
    p.add_argument("--since", type=float, default=0)
    p.add_argument("--timeout", type=float, default=180)
    p.add_argument("--config", default="/etc/mr/cluster.toml")
    a = p.parse_args()
    want = [i for i in a.ids.split(",") if i]
    deadline = time.time() + a.timeout
    last = "no answer from the master yet"
    while True:
        now = time.time()
        r = subprocess.run(["mrctl", "--config", a.config, "cluster", "status", "--json"],
                           capture_output=True, text=True, timeout=60)
        if r.returncode == 0:
            workers = {w["id"]: w for w in json.loads(r.stdout)["workers"]}
            missing = []
            for i in want:
                w = workers.get(i)
                if w is None:
                    missing.append(i + " (not registered)")
                elif not w["live"]:
                    missing.append(i + " (dead)")
                elif w["admin_state"] != "in-service":
                    missing.append(i + " (" + w["admin_state"] + ")")
                elif a.since and now - w["last_heartbeat_ms_ago"] / 1000.0 < a.since:
                    missing.append(i + " (no heartbeat since its restart)")
            if not missing:
                print("live and in service: " + ", ".join(
                    "%s %s %s" % (i, workers[i]["address"], workers[i]["datacenter"]) for i in want))
                return 0
            last = "not ready: " + ", ".join(missing)
        else:
            last = "mrctl cluster status: " + (r.stderr.strip() or "exit %d" % r.returncode)
        if time.time() >= deadline:
            print("mr_wait_workers: after %.0f s, %s" % (a.timeout, last), file=sys.stderr)
            return 1
        time.sleep(1)


if __name__ == "__main__":
    sys.exit(main())
