package api

import (
	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/schema"
)

func keyspaceToProto(k *schema.Keyspace, withTables bool) *pb.Keyspace {
	out := &pb.Keyspace{
		Name:             k.Name,
		ReplicationClass: k.Replication.Class,
		Replication:      k.Replication.Options,
		DurableWrites:    k.DurableWrites,
	}
	if withTables {
		for _, t := range k.Tables() {
			out.Tables = append(out.Tables, tableToProto(t))
		}
	}
	return out
}

func tableToProto(t *schema.Table) *pb.Table {
	out := &pb.Table{
		Keyspace:     t.Keyspace,
		Name:         t.Name,
		Id:           t.ID,
		PartitionKey: t.PartitionKey,
		Options:      t.Options,
	}
	for _, c := range t.Columns {
		out.Columns = append(out.Columns, &pb.Column{Name: c.Name, Type: c.Type.String(), Kind: c.Kind.String()})
	}
	for _, c := range t.Clustering {
		out.Clustering = append(out.Clustering, &pb.ClusteringColumn{Name: c.Name, Order: c.Order.String()})
	}
	return out
}
