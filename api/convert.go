package api

import (
	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/schema"
)

// keyspaceToProto converts k with its types, indexes and functions, and
// with its tables and views when withTables is set.
func keyspaceToProto(k *schema.Keyspace, withTables bool) *pb.Keyspace {
	out := keyspaceOnlyToProto(k)
	if withTables {
		for _, t := range k.Tables() {
			out.Tables = append(out.Tables, tableToProto(t))
		}
	}
	for _, ut := range k.UserTypes() {
		out.Types = append(out.Types, userTypeToProto(ut))
	}
	for _, ix := range k.Indexes() {
		out.Indexes = append(out.Indexes, indexToProto(ix))
	}
	for _, f := range k.Functions() {
		out.Functions = append(out.Functions, functionToProto(f))
	}
	return out
}

// keyspaceOnlyToProto converts k's own properties, without its objects:
// the keyspace as an object of the change feed.
func keyspaceOnlyToProto(k *schema.Keyspace) *pb.Keyspace {
	return &pb.Keyspace{
		Name:             k.Name,
		ReplicationClass: k.Replication.Class,
		Replication:      k.Replication.Options,
		DurableWrites:    k.DurableWrites,
	}
}

func userTypeToProto(ut *schema.UserType) *pb.UserType {
	out := &pb.UserType{Keyspace: ut.Keyspace, Name: ut.Name}
	for _, f := range ut.Fields {
		out.Fields = append(out.Fields, &pb.Column{Name: f.Name, Type: f.Type.String(), Kind: "field"})
	}
	return out
}

func indexToProto(ix *schema.Index) *pb.Index {
	return &pb.Index{
		Keyspace: ix.Keyspace, Table: ix.Table, Name: ix.Name,
		Column: ix.Target.Column, Target: ix.Target.Kind.String(),
		Custom: ix.Custom, Class: ix.Class, Options: ix.Options,
	}
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
		Options:      t.Options(),
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
	for _, d := range t.DroppedColumns() {
		out.DroppedColumns = append(out.DroppedColumns, &pb.DroppedColumn{Name: d.Name, Type: d.Type.String(), Epoch: d.Epoch})
	}
	for _, tr := range t.Triggers() {
		out.Triggers = append(out.Triggers, &pb.Trigger{Name: tr.Name, Class: tr.Class})
	}
	if v := t.View(); v != nil {
		out.View = &pb.View{BaseTable: v.Base, IncludeAllColumns: v.AllColumns, WhereClause: schema.WhereText(v.Where)}
	}
	return out
}

// objectToProto converts one object of the schema as the change feed
// carries it (metadata.Event.BeforeObject): a keyspace without its
// objects, a table or view, a type, an index, a function or aggregate;
// nil for nil or a value of another type.
func objectToProto(v any) *pb.SchemaObject {
	switch v := v.(type) {
	case *schema.Keyspace:
		if v != nil {
			return &pb.SchemaObject{Object: &pb.SchemaObject_Keyspace{Keyspace: keyspaceOnlyToProto(v)}}
		}
	case *schema.Table:
		if v != nil {
			return &pb.SchemaObject{Object: &pb.SchemaObject_Table{Table: tableToProto(v)}}
		}
	case *schema.UserType:
		if v != nil {
			return &pb.SchemaObject{Object: &pb.SchemaObject_Type{Type: userTypeToProto(v)}}
		}
	case *schema.Index:
		if v != nil {
			return &pb.SchemaObject{Object: &pb.SchemaObject_Index{Index: indexToProto(v)}}
		}
	case *schema.Function:
		if v != nil {
			return &pb.SchemaObject{Object: &pb.SchemaObject_Function{Function: functionToProto(v)}}
		}
	}
	return nil
}

// resyncKeyspaces is the schema a resync of a feed filtered by keyspace
// ks and table carries (s is already limited to what the reader may
// see): every keyspace; keyspace ks; or ks's own properties with only the
// table and its indexes. It holds the objects the feed's events are
// about, as the resync's CQL (member's filteredCQL) describes them.
func resyncKeyspaces(s schema.Schema, ks, table string) []*pb.Keyspace {
	out := []*pb.Keyspace{}
	if ks == "" {
		for _, k := range s.Keyspaces() {
			out = append(out, keyspaceToProto(k, true))
		}
		return out
	}
	k, ok := s.Keyspace(ks)
	switch {
	case !ok:
		return out
	case table == "":
		return append(out, keyspaceToProto(k, true))
	}
	pk := keyspaceOnlyToProto(k)
	if t, ok := k.Table(table); ok {
		pk.Tables = append(pk.Tables, tableToProto(t))
		for _, ix := range k.TableIndexes(table) {
			pk.Indexes = append(pk.Indexes, indexToProto(ix))
		}
	}
	return append(out, pk)
}

// clusterStatusToProto converts the cluster as a member sees it.
func clusterStatusToProto(cs *member.ClusterStatus) *pb.ListMembersResponse {
	resp := &pb.ListMembersResponse{Leader: cs.Leader, Term: cs.Term, ClusterId: cs.ClusterID, HistoryNamed: cs.HistoryNamed,
		Members: make([]*pb.Member, len(cs.Members))}
	for i, ms := range cs.Members {
		resp.Members[i] = memberToProto(ms)
	}
	for _, f := range cs.Forcings {
		resp.Forcings = append(resp.Forcings, &pb.ClusterForcing{From: f.From, To: f.To, Index: f.Index, By: f.By})
	}
	return resp
}

// memberToProto converts one member's status.
func memberToProto(ms *member.MemberStatus) *pb.Member {
	pm := &pb.Member{
		Id: ms.ID, Name: ms.Name, PeerAddr: ms.PeerAddr, GrpcAddr: ms.GRPCAddr, HttpAddr: ms.HTTPAddr, CqlAddr: ms.CQLAddr, Role: ms.Role,
		Leader: ms.Leader, Reachable: ms.Reachable, Term: ms.Term, CommitIndex: ms.CommitIndex, AppliedIndex: ms.AppliedIndex,
		Epoch: ms.Epoch, Digest: ms.Digest, Error: ms.Error, Alarms: ms.Alarms, ClusterId: ms.ClusterID, KnownLeader: ms.KnownLeader,
	}
	for _, e := range ms.History {
		pm.History = append(pm.History, &pb.EpochDigest{Epoch: e.Epoch, Digest: e.Digest})
	}
	for _, c := range ms.Configuration {
		pm.Configuration = append(pm.Configuration, &pb.ConfigMember{Id: c.ID, Name: c.Name, Role: c.Role, PeerAddr: c.PeerAddr})
	}
	return pm
}

// clusterCheckToProto converts the verdict of an agreement check.
func clusterCheckToProto(cc *member.ClusterCheck) *pb.CheckClusterResponse {
	resp := &pb.CheckClusterResponse{Agreement: cc.Agreement, Reference: cc.Reference, Rpcs: cc.RPCs, ClusterId: cc.ClusterID, Reason: cc.Reason}
	for _, c := range cc.Members {
		resp.Members = append(resp.Members, &pb.MemberCheck{Name: c.Name, Id: c.ID, Epoch: c.Epoch, Digest: c.Digest, AppliedIndex: c.AppliedIndex,
			State: c.State, DivergedSinceEpoch: c.DivergedSinceEpoch, Detail: c.Detail, ClusterId: c.ClusterID})
	}
	return resp
}
