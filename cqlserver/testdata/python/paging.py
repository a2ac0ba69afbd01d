"""Reads system_schema.columns page by page.

Request: {"fetch_size": n}. Result: every row as [keyspace_name,
table_name, column_name], the number of pages and the errors the server
answered.
"""

from cassandra.query import SimpleStatement

import mlcql


def main():
    args = mlcql.parse_args()
    req = mlcql.request()
    cluster, session, info = mlcql.connect(args)
    try:
        rs = session.execute(SimpleStatement("SELECT * FROM system_schema.columns", fetch_size=req["fetch_size"]))
        rows, pages, sizes = [], 0, []
        while True:
            pages += 1
            sizes.append(len(rs.current_rows))
            rows.extend([r.keyspace_name, r.table_name, r.column_name] for r in rs.current_rows)
            if not rs.has_more_pages:
                break
            rs.fetch_next_page()
        mlcql.emit({"info": info, "rows": rows, "pages": pages, "page_sizes": sizes,
                    "server_errors": mlcql.server_errors})
    finally:
        cluster.shutdown()


main()
