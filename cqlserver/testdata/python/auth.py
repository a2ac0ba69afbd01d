"""Connects with the credentials given, if any, and reports what the
connection may see and do.

Request: {"ddl": [statement, ...]}. Result: whether the driver connected
(and if not, why), the keyspaces of its metadata, and for each statement
the error it got (null when it applied).
"""

from cassandra.cluster import NoHostAvailable
from cassandra.policies import DCAwareRoundRobinPolicy

import mlcql


def main():
    args = mlcql.parse_args()
    req = mlcql.request()
    cluster = mlcql._cluster(args, DCAwareRoundRobinPolicy(local_dc="datacenter1"))
    try:
        try:
            session = cluster.connect()
        except NoHostAvailable as e:
            mlcql.emit({"connected": False, "error": str(e)})
            return
        errors = []
        for stmt in req["ddl"]:
            try:
                session.execute(stmt)
                errors.append(None)
            except Exception as e:  # the test reads what the server said
                errors.append("%s: %s" % (type(e).__name__, e))
        cluster.refresh_schema_metadata()
        mlcql.emit({"connected": True, "keyspaces": sorted(cluster.metadata.keyspaces), "ddl_errors": errors})
    finally:
        cluster.shutdown()


main()
