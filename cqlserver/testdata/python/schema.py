"""Runs DDL through the driver and prints what its metadata holds.

Request: {"keyspace": name, "statements": [DDL, ...]} (statements may be
empty). Result: the connection's versions and host, for each statement
whether the driver saw the schema agree, the driver's metadata of the
keyspace (mlcql.dump_keyspace), its export_as_string() and the errors
the server answered.
"""

import mlcql


def main():
    args = mlcql.parse_args()
    req = mlcql.request()
    cluster, session, info = mlcql.connect(args)
    try:
        agreed = []
        for stmt in req["statements"]:
            rs = session.execute(stmt)
            agreed.append(rs.response_future.is_schema_agreed)
        ks = cluster.metadata.keyspaces.get(req["keyspace"])
        mlcql.emit({
            "info": info,
            "agreed": agreed,
            "keyspace": mlcql.dump_keyspace(ks),
            "export": ks.export_as_string() if ks is not None else None,
            "server_errors": mlcql.server_errors,
        })
    finally:
        cluster.shutdown()


main()
