package client

import (
	"slices"
	"sync/atomic"
)

// endpointSet is a list of endpoints that calls go round, and the one
// that answered last, where the next call starts.
type endpointSet struct {
	eps  []int         // indexes in Client.eps, in the configuration's order
	last atomic.Uint32 // index in eps of the endpoint that answered last
}

func (s *endpointSet) len() int {
	if s == nil {
		return 0
	}
	return len(s.eps)
}

// route is the order in which one call (or one watch) tries the
// endpoints in each round: those of its first set from the one that
// answered last, then, for a read with read endpoints, those of its
// fallback set (the Endpoints that are not read endpoints) likewise. A
// route is a value made when the call starts: a call allocates nothing
// for it.
type route struct {
	sets  [2]*endpointSet // sets[1]: the fallback, nil when there is none
	start [2]int          // each set's last, when the call started
}

// routes are the endpoint sets of a Client: writes are Endpoints, reads
// ReadEndpoints, fallback the Endpoints that are not read endpoints,
// where a read goes when no read endpoint answers.
type routes struct {
	writes, reads, fallback endpointSet
}

// write is the route of a change, or of the cluster's administration:
// Endpoints only.
func (rs *routes) write() route { return newRoute(&rs.writes, nil) }

// read is the route of a read or a watch: the read endpoints then the
// other Endpoints, or Endpoints alone when there are no read endpoints.
func (rs *routes) read() route {
	if rs.reads.len() == 0 {
		return rs.write()
	}
	return newRoute(&rs.reads, &rs.fallback)
}

func newRoute(first, then *endpointSet) route {
	r := route{sets: [2]*endpointSet{first, then}}
	for j, s := range r.sets {
		if s.len() > 0 {
			r.start[j] = int(s.last.Load())
		}
	}
	return r
}

// len is how many endpoints a round tries.
func (r *route) len() int { return r.sets[0].len() + r.sets[1].len() }

// locate returns the set of the k-th endpoint of a round and its index
// in that set's eps.
func (r *route) locate(k int) (*endpointSet, int) {
	j := 0
	if n := r.sets[0].len(); k >= n {
		j, k = 1, k-n
	}
	s := r.sets[j]
	return s, (r.start[j] + k) % len(s.eps)
}

// at returns the k-th endpoint of a round (0 <= k < len()), an index in
// Client.eps.
func (r *route) at(k int) int {
	s, p := r.locate(k)
	return s.eps[p]
}

// answered notes that the k-th endpoint of a round answered: the next
// call on its set starts there.
func (r *route) answered(k int) {
	s, p := r.locate(k)
	if int(s.last.Load()) != p {
		s.last.Store(uint32(p))
	}
}

// answeredBy is answered for endpoint i (an index in Client.eps) of the
// route.
func (r *route) answeredBy(i int) {
	for k := range r.len() {
		if r.at(k) == i {
			r.answered(k)
			return
		}
	}
}

// newEndpoints returns every distinct address of cfg, the read
// endpoints first (so that an error naming them all names them in the
// order a read tries them), and the routes over them.
func newEndpoints(cfg Config) ([]endpoint, *routes) {
	var eps []endpoint
	rs := new(routes)
	index := make(map[string]int)
	add := func(set *endpointSet, addr string) {
		i, ok := index[addr]
		if !ok {
			i = len(eps)
			index[addr] = i
			eps = append(eps, endpoint{addr: addr})
		}
		if !slices.Contains(set.eps, i) {
			set.eps = append(set.eps, i)
		}
	}
	for _, addr := range cfg.ReadEndpoints {
		add(&rs.reads, addr)
	}
	for _, addr := range cfg.Endpoints {
		if _, isRead := index[addr]; !isRead {
			add(&rs.fallback, addr)
		}
		add(&rs.writes, addr)
	}
	return eps, rs
}
