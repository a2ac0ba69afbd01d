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
	for _, ut := range k.UserTypes() {
		pt := &pb.UserType{Keyspace: ut.Keyspace, Name: ut.Name}
		for _, f := range ut.Fields {
			pt.Fields = append(pt.Fields, &pb.Column{Name: f.Name, Type: f.Type.String(), Kind: "field"})
		}
		out.Types = append(out.Types, pt)
	}
	for _, ix := range k.Indexes() {
		out.Indexes = append(out.Indexes, &pb.Index{
			Keyspace: ix.Keyspace, Table: ix.Table, Name: ix.Name,
			Column: ix.Target.Column, Target: ix.Target.Kind.String(),
			Custom: ix.Custom, Class: ix.Class, Options: ix.Options,
		})
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
	for _, d := range t.DroppedColumns {
		out.DroppedColumns = append(out.DroppedColumns, &pb.DroppedColumn{Name: d.Name, Type: d.Type.String(), Epoch: d.Epoch})
	}
	return out
}
