"""Waits for changes made by someone else to reach the driver's metadata.

Request: {"keyspace": name, "tables": {table: [column, ...]},
"types": [type, ...], "indexes": [index, ...], "wait_seconds": s}.
Prints {"ready": true, "known": whether the keyspace is known yet} once
connected, then polls the metadata (never refreshing it: only the
SCHEMA_CHANGE events the control connection receives can change it)
until the keyspace is known, prints {"keyspace": true}, and polls on
until the keyspace has every table with its columns, every type and
every index, or wait_seconds have passed. Result: whether it did, the
driver's metadata of the keyspace and the errors the server answered.

The keyspace comes first because the driver refreshes its metadata for
each event on a pool of threads: a type's refresh that runs before its
keyspace's has added the keyspace is dropped (Metadata._update_type),
against Cassandra too, so a test that creates both at once is flaky.
"""

import time

import mlcql


def complete(ks, req):
    if ks is None:
        return False
    for table, columns in req["tables"].items():
        t = ks.tables.get(table)
        if t is None or any(c not in t.columns for c in columns):
            return False
    return all(u in ks.user_types for u in req["types"]) and all(i in ks.indexes for i in req["indexes"])


def main():
    args = mlcql.parse_args()
    req = mlcql.request()
    cluster, _, info = mlcql.connect(args)
    try:
        mlcql.emit({"ready": True, "known": req["keyspace"] in cluster.metadata.keyspaces})
        deadline = time.monotonic() + req["wait_seconds"]
        while req["keyspace"] not in cluster.metadata.keyspaces and time.monotonic() < deadline:
            time.sleep(0.05)
        mlcql.emit({"keyspace": req["keyspace"] in cluster.metadata.keyspaces})
        seen = False
        while not seen and time.monotonic() < deadline:
            seen = complete(cluster.metadata.keyspaces.get(req["keyspace"]), req)
            if not seen:
                time.sleep(0.05)
        mlcql.emit({
            "info": info,
            "seen": seen,
            "keyspace": mlcql.dump_keyspace(cluster.metadata.keyspaces.get(req["keyspace"])),
            "server_errors": mlcql.server_errors,
        })
    finally:
        cluster.shutdown()


main()
