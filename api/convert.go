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
	for _, f := range k.Functions() {
		out.Functions = append(out.Functions, functionToProto(f))
	}
	return out
}

func functionToProto(f *schema.Function) *pb.Function {
	out := &pb.Function{
		Keyspace: f.Keyspace, Name: f.Name, Kind: f.Kind.String(), Signature: f.Signature(),
		ArgNames: f.ArgNames, ReturnType: typeText(f.ReturnType),
		CalledOnNullInput: f.CalledOnNullInput, Language: f.Language, Body: f.Body,
		StateFunc: f.StateFunc, StateType: typeText(f.StateType), FinalFunc: f.FinalFunc, InitCond: f.InitCond,
	}
	for _, t := range f.ArgTypes {
		out.ArgTypes = append(out.ArgTypes, t.String())
	}
	return out
}

// typeText is t's CQL text, "" for none.
func typeText(t schema.Type) string {
	if t == nil {
		return ""
	}
	return t.String()
}

func tableToProto(t *schema.Table) *pb.Table {
	out := &pb.Table{
		Keyspace:     t.Keyspace,
		Name:         t.Name,
		Id:           t.ID.String(),
		PartitionKey: t.PartitionKey,
		Options:      t.Options,
	}
	for _, c := range t.Columns {
		pc := &pb.Column{Name: c.Name, Type: c.Type.String(), Kind: c.Kind.String()}
		if c.Mask != nil {
			pc.Mask = c.Mask.String()
		}
		out.Columns = append(out.Columns, pc)
	}
	for _, c := range t.Clustering {
		out.Clustering = append(out.Clustering, &pb.ClusteringColumn{Name: c.Name, Order: c.Order.String()})
	}
	for _, d := range t.DroppedColumns {
		out.DroppedColumns = append(out.DroppedColumns, &pb.DroppedColumn{Name: d.Name, Type: d.Type.String(), Epoch: d.Epoch})
	}
	for _, tr := range t.Triggers {
		out.Triggers = append(out.Triggers, &pb.Trigger{Name: tr.Name, Class: tr.Class})
	}
	if v := t.View; v != nil {
		out.View = &pb.View{BaseTable: v.Base, IncludeAllColumns: v.AllColumns, WhereClause: schema.WhereText(v.Where)}
	}
	return out
}
