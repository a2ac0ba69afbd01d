"""Shared by the scripts the Python driver tests of package cqlserver run.

Each script is run as `python3 -B SCRIPT --port PORT --protocol 4|5
[--username U --password P] [--timeout SECONDS]`, reads its request as one
JSON object on standard input and prints one JSON object per line on
standard output, the last one being its result. Nothing here asserts: the
Go test compares what the scripts print with what the server holds.
"""

import argparse
import json
import sys

import cassandra
import cassandra.protocol
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from cassandra.policies import DCAwareRoundRobinPolicy, HostDistance, WhiteListRoundRobinPolicy

# Every ERROR the server answered, whatever the driver made of it: the
# driver tolerates some (it reads a table it does not need and goes on),
# and the tests want none they did not cause.
server_errors = []

_recv_error = cassandra.protocol.ErrorMessage.recv_body.__func__


def _record_error(cls, *args, **kwargs):
    msg = _recv_error(cls, *args, **kwargs)
    server_errors.append(str(msg))
    return msg


cassandra.protocol.ErrorMessage.recv_body = classmethod(_record_error)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--protocol", type=int, required=True)
    p.add_argument("--username")
    p.add_argument("--password")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds for a connection or a request")
    return p.parse_args()


def request():
    """The script's request: the JSON object on standard input."""
    return json.load(sys.stdin)


def emit(obj):
    """Prints obj as one line of JSON."""
    sys.stdout.write(json.dumps(obj, sort_keys=True) + "\n")
    sys.stdout.flush()


def _cluster(args, policy):
    auth = None
    if args.username is not None:
        auth = PlainTextAuthProvider(username=args.username, password=args.password or "")
    profile = ExecutionProfile(load_balancing_policy=policy, request_timeout=args.timeout)
    return Cluster(
        [args.host],
        port=args.port,
        protocol_version=args.protocol,
        auth_provider=auth,
        execution_profiles={EXEC_PROFILE_DEFAULT: profile},
        connect_timeout=args.timeout,
        control_connection_timeout=args.timeout,
        max_schema_agreement_wait=args.timeout,
    )


def local_dc(args):
    """The data center system.local reports, read through the contact point."""
    cluster = _cluster(args, WhiteListRoundRobinPolicy([args.host]))
    try:
        row = cluster.connect().execute("SELECT data_center FROM system.local WHERE key = 'local'").one()
        return row.data_center
    finally:
        cluster.shutdown()


def connect(args):
    """Connects as a program would: DC-aware, its local data center the one
    system.local reports. Returns the cluster, the session and what the
    connection says of the versions and of the host."""
    dc = local_dc(args)
    policy = DCAwareRoundRobinPolicy(local_dc=dc)
    cluster = _cluster(args, policy)
    session = cluster.connect()
    hosts = cluster.metadata.all_hosts()
    local = session.execute("SELECT release_version, cql_version, native_protocol_version FROM system.local").one()
    info = {
        "driver_version": cassandra.__version__,
        "python_version": sys.version.split()[0],
        "protocol_version": cluster.protocol_version,
        "release_version": local.release_version,
        "cql_version": local.cql_version,
        "native_protocol_version": local.native_protocol_version,
        "local_dc": dc,
        "hosts": [{"address": h.address, "datacenter": h.datacenter, "rack": h.rack,
                   "distance": "local" if policy.distance(h) == HostDistance.LOCAL else "not local"} for h in hosts],
    }
    return cluster, session, info


def dump_keyspace(ks):
    """The driver's metadata of keyspace ks, as plain values; None when the
    driver does not know it."""
    if ks is None:
        return None
    tables = {}
    for name, t in ks.tables.items():
        tables[name] = {
            "columns": [{"name": c.name, "type": c.cql_type, "static": c.is_static} for c in t.columns.values()],
            "partition_key": [c.name for c in t.partition_key],
            "clustering_key": [{"name": c.name, "order": "DESC" if c.is_reversed else "ASC"} for c in t.clustering_key],
            "indexes": {n: {"kind": i.kind, "options": dict(i.index_options)} for n, i in t.indexes.items()},
        }
    return {
        "name": ks.name,
        "durable_writes": ks.durable_writes,
        "replication": ks.replication_strategy.export_for_schema(),
        "tables": tables,
        "user_types": {n: {"fields": [{"name": f, "type": ty} for f, ty in zip(u.field_names, u.field_types)]}
                       for n, u in ks.user_types.items()},
    }
