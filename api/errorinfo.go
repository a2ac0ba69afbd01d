package api

import "github.com/metalog/metalog/member"

// clusterIDText is a cluster id as responses carry it: "" for a cluster
// without one.
func clusterIDText(id uint64) string {
	if id == 0 {
		return ""
	}
	return member.FormatID(id)
}
