package member

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// Member is one running member of a metalog cluster: the metadata state
// machine fed by the raft node, the peer transport and the peer server on
// the peer port, and in front of them three services: its writes
// (Writes), its reads (Reads) and the cluster's membership (Cluster).
// Start it with Start and stop it with Close; its methods and its
// services' are safe for concurrent use.
type Member struct {
	// core holds what the services and the peer side share: the id, the
	// state machine, the raft node, the transport, the config.
	core    *core
	writes  *Writes
	reads   *Reads
	cluster *Cluster

	peerLis net.Listener
	peerSrv *grpc.Server

	degraded degradation
	scrub    *storeScrub // nil: store scrubs off

	stopc     chan struct{} // closed by Close: background work ends
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
	errc      chan error // the first fatal errors
}

// Start opens the data dir, replays the log, binds the peer listener and
// starts the member: bootstrapping a new cluster from Config.InitialCluster,
// joining one (Config.Join), or restarting from the data dir.
func Start(cfg Config) (*Member, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	mt := newMetrics(cfg.Registerer, cfg.MetricsIdentityLabels)
	handshakes := raftlog.NewHandshakeLog(cfg.Logger)
	c := &core{
		name: cfg.Name, peerAddr: cfg.PeerAddr, grpcAddr: cfg.GRPCAddr, httpAddr: cfg.HTTPAddr, cqlAddr: cfg.CQLAddr,
		timeout: cfg.RequestTimeout, handshakes: handshakes,
		logger: cfg.Logger, statusCalls: mt.statusCalls, cfg: cfg, metrics: mt, expected: new(metadata.Expected),
	}
	c.trust = newPeerTrust(c, &c.cfg)
	// Dials to peers check that the peer is a member too.
	c.peerDial = peerDialOption(c.trust.gate.ClientTLS(cfg.PeerClientTLS), handshakes)
	c.statusConns = &statusConns{dial: c.peerDial}
	m := &Member{core: c, stopc: make(chan struct{}), errc: make(chan error, 4)}
	if err := m.start(); err != nil {
		m.shutdown()
		return nil, err
	}
	return m, nil
}

func (m *Member) start() error {
	c := m.core
	plan, err := m.planStartup()
	if err != nil {
		return err
	}
	c.id = plan.id
	if m.peerLis = c.cfg.peerListener; m.peerLis == nil {
		if m.peerLis, err = net.Listen("tcp", c.cfg.PeerAddr); err != nil {
			return fmt.Errorf("peer listener: %w", err)
		}
	}
	// Every listener is bound (the API binds the client ones first):
	// from here on the data dir is written.
	if err := mkdirDataDir(c.cfg.DataDir); err != nil {
		return err
	}
	c.space = newSpaceAlarm(c.cfg.DataDir, c.cfg.MinFreeSpaceBytes, c.cfg.freeSpace, c.logger)
	c.space.check()
	rebuild := storeRebuild{member: &c.cfg, logger: c.logger, now: time.Now, sm: metadata.Config{
		Dir:              c.cfg.DataDir,
		Logger:           c.logger,
		FlushWindow:      c.cfg.FlushWindow,
		MaxSnapshotBytes: int(c.cfg.MaxMutationSize),
		Metrics:          c.metrics.store,
		HistoryRetention: c.cfg.HistoryRetention,
		OnFlushError:     func(err error) { c.space.failedWrite("schema store write", err) },
		Expected:         c.expected,
	}}
	if c.sm, plan.rebuilt, err = rebuild.open(); err != nil {
		return err
	}
	if err := m.startRaft(plan); err != nil {
		return err
	}
	c.names = &historyNamer{cluster: c.node.ClusterID(), naming: c.node.HistoryNaming(), sm: c.sm, node: c.node, logger: c.logger, timeout: c.cfg.RequestTimeout, hold: holdHistoryName(&c.cfg, m.stopc)}
	m.writes = newWrites(c)
	m.reads = newReads(c, m.stopc)
	m.cluster = &Cluster{c: c}
	m.warnIgnored(plan)
	c.metrics.watch(m)
	m.run()
	return nil
}

// run starts the member's background work, which stops when stopc is
// closed: the peer server, the watch of the raft node, the prober and the
// vouching, the history namer and copier, the feeds' pacer, the config
// file's guardrails, the free space check and the store scrub.
func (m *Member) run() {
	c := m.core
	if c.cfg.PeerClientTLS != nil {
		m.wg.Go(func() { c.probePeers(m.stopc) })
	}
	m.wg.Go(func() { c.names.run(m.stopc) })
	m.wg.Go(func() { m.reads.pace.run(m.stopc) })
	m.wg.Go(func() {
		if err := m.peerSrv.Serve(c.transport.Listen(m.peerLis)); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			m.fatal(fmt.Errorf("peer server: %w", err))
		}
	})
	m.wg.Go(func() { c.trust.vouchLoop(m.stopc) })
	m.wg.Go(func() {
		<-c.node.Done()
		if err := c.node.Err(); err != nil {
			m.fatal(withForcerName(err, c.node.Members()))
		}
	})
	m.wg.Go(func() {
		m.writes.applyConfigKeyspaceGuardrails(c.node.Ready(), m.stopc)
		m.writes.applyConfigGuardrails(c.node.Ready(), m.stopc)
	})
	m.wg.Go(func() { c.copyHistory(m.stopc) })
	m.wg.Go(func() { c.watchSpace(m.stopc) })
	startStoreScrub(m)
	followFaultFile(m)
}

// newWrites returns the write service of c, with the rate limit per
// identity its config sets.
func newWrites(c *core) *Writes {
	return &Writes{node: c.node, sm: c.sm, cfg: &c.cfg, space: c.space, metrics: c.metrics, logger: c.logger, expected: c.expected,
		rate: newRateLimiter(c.cfg.DDLRatePerIdentity, c.cfg.DDLBurstPerIdentity, c.cfg.now, c.metrics.countRateLimited)}
}

// newReads returns the read service of c, whose feeds end when stop is
// closed (or EndFeeds is called).
func newReads(c *core, stop <-chan struct{}) *Reads {
	return &Reads{machine: c.sm, node: c.node, timeout: c.cfg.RequestTimeout, counters: c.metrics,
		progress: c.cfg.WatchProgressInterval, maxLag: c.cfg.watchMaxLag(), pace: newPacer(c.sm, c.cfg.WatchBatchWindow, c.cfg.watchAfter),
		stop: stop, ending: make(chan struct{}), names: c.names}
}

// Writes is the member's write service: Execute, DryRun, Plan and the
// guardrail changes.
func (m *Member) Writes() *Writes { return m.writes }

// Reads is the member's read service: Read, ReadAt, History, Watch,
// RequestOutcome, Backup and EndFeeds.
func (m *Member) Reads() *Reads { return m.reads }

// Cluster is the member's service of the cluster's membership:
// ListMembers, AddMember, RemoveMember, RepairMember and CheckCluster.
func (m *Member) Cluster() *Cluster { return m.cluster }

// ID is this member's raft id: ID(Name) for a founding member, the one the
// cluster gave it for a member added later; its data dir records it.
func (m *Member) ID() uint64 { return m.core.id }

// Identity is the member's cluster id and history id, which every
// response carries: the same on every member of the cluster. The history
// id is 0 until the cluster has named its history, moments after a
// bootstrap, a restore or a forced new cluster.
func (m *Member) Identity() Identity { return m.core.names.identity() }

// CertificateMemberName returns the name of the current member, other
// than this one, that a peer certificate names: how the client port
// tells a joining member's first call (its ListMembers) by its peer
// certificate.
func (m *Member) CertificateMemberName(cert *x509.Certificate) (string, error) {
	return m.core.trust.CertificateMemberName(cert)
}

// PeerAddr is the address the peer listener is bound to.
func (m *Member) PeerAddr() string { return m.peerLis.Addr().String() }

// ClusterID is the id of the member's cluster, 0 for a cluster
// bootstrapped before clusters had ids.
func (m *Member) ClusterID() uint64 { return m.core.node.ClusterID() }

// Name is this member's name.
func (m *Member) Name() string { return m.core.cfg.Name }

// Err reports the fatal errors of the running member: its raft node
// stopped (a storage failure, or ErrRemoved once it learnt it was removed
// from the cluster), the state machine could not persist what it applied,
// or the peer server failed. The caller should Close the member when it
// receives one.
func (m *Member) Err() <-chan error { return m.errc }

func (m *Member) fatal(err error) {
	if errors.Is(err, ErrRemoved) {
		// Not a failure: the cluster removed this member, which stops.
		m.core.logger.Info("this member was removed from the cluster; it stops", "err", err)
	} else {
		m.core.logger.Error("fatal", "err", err)
	}
	select {
	case m.errc <- err:
	default:
	}
}

// Close stops the raft node, the transport and the peer server, flushes
// the schema store (a drain) and closes the data dir. Requests still
// waiting fail with Unavailable. It is safe to call more than once.
func (m *Member) Close() error {
	m.closeOnce.Do(func() { m.closeErr = m.shutdown() })
	return m.closeErr
}

// shutdown releases what start acquired, in reverse order.
func (m *Member) shutdown() error {
	close(m.stopc)
	if m.core.node != nil {
		m.core.node.Stop()
	}
	if m.core.transport != nil {
		m.core.transport.Stop()
	}
	if m.peerSrv != nil {
		m.peerSrv.Stop()
	} else if m.peerLis != nil {
		m.peerLis.Close()
	}
	m.wg.Wait()
	m.core.statusConns.close()
	// Says the failed peer handshakes not said yet.
	m.core.handshakes.Close()
	if m.core.sm != nil {
		return m.core.sm.Close()
	}
	return nil
}
