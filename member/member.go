package member

import (
	"context"
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
// the peer port, and the write path in front of them. Start it with Start
// and stop it with Close; its methods are safe for concurrent use.
type Member struct {
	// membership holds what the member shares with its membership
	// operations (its id, the state machine, the raft node, the
	// transport), and brings ListMembers, AddMember, RemoveMember,
	// RepairMember and CheckCluster.
	*membership
	// logReader serves the history the member applied: History, Watch
	// and RequestOutcome.
	*logReader
	// peerTrust says who the members are, for the peer port and for a
	// joining member's first call on the client port
	// (CertificateMemberName).
	*peerTrust

	cfg     Config
	peerLis net.Listener
	peerSrv *grpc.Server

	metrics  *metrics
	degraded degradation
	scrub    *storeScrub  // nil: store scrubs off
	rate     *rateLimiter // nil: no rate limit per identity

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
	m := &Member{cfg: cfg, stopc: make(chan struct{}), errc: make(chan error, 4), metrics: newMetrics(cfg.Registerer, cfg.MetricsIdentityLabels)}
	handshakes := raftlog.NewHandshakeLog(cfg.Logger)
	m.membership = &membership{
		name: cfg.Name, peerAddr: cfg.PeerAddr, grpcAddr: cfg.GRPCAddr, httpAddr: cfg.HTTPAddr,
		timeout: cfg.RequestTimeout, handshakes: handshakes,
		logger: cfg.Logger, statusCalls: m.metrics.statusCalls,
	}
	m.peerTrust = newPeerTrust(m.membership, &m.cfg)
	m.membership.trust = m.peerTrust
	// Dials to peers check that the peer is a member too.
	m.peerDial = peerDialOption(m.gate.ClientTLS(cfg.PeerClientTLS), handshakes)
	m.rate = newRateLimiter(cfg.DDLRatePerIdentity, cfg.DDLBurstPerIdentity, cfg.now, m.metrics.countRateLimited)
	if err := m.start(); err != nil {
		m.shutdown()
		return nil, err
	}
	return m, nil
}

func (m *Member) start() error {
	plan, err := m.planStartup()
	if err != nil {
		return err
	}
	m.id = plan.id
	if m.peerLis = m.cfg.peerListener; m.peerLis == nil {
		if m.peerLis, err = net.Listen("tcp", m.cfg.PeerAddr); err != nil {
			return fmt.Errorf("peer listener: %w", err)
		}
	}
	// Every listener is bound (the API binds the client ones first):
	// from here on the data dir is written.
	if err := mkdirDataDir(m.cfg.DataDir); err != nil {
		return err
	}
	m.space = newSpaceAlarm(m.cfg.DataDir, m.cfg.MinFreeSpaceBytes, m.cfg.freeSpace, m.logger)
	m.space.check()
	repair := storeRepair{member: &m.cfg, logger: m.logger, now: time.Now, sm: metadata.Config{
		Dir:              m.cfg.DataDir,
		Logger:           m.logger,
		FlushWindow:      m.cfg.FlushWindow,
		MaxSnapshotBytes: int(m.cfg.MaxMutationSize),
		Metrics:          m.metrics.store,
		HistoryRetention: m.cfg.HistoryRetention,
		OnFlushError:     func(err error) { m.space.failedWrite("schema store write", err) },
	}}
	if m.sm, plan.rebuilt, err = repair.open(); err != nil {
		return err
	}
	if err := m.startRaft(plan); err != nil {
		return err
	}
	names := &historyNamer{cluster: m.node.ClusterID(), naming: m.node.HistoryNaming(), sm: m.sm, node: m.node, logger: m.logger, timeout: m.cfg.RequestTimeout, hold: holdHistoryName(&m.cfg, m.stopc)}
	m.logReader = &logReader{machine: m.sm, counters: m.metrics, progress: m.cfg.WatchProgressInterval, stop: m.stopc, ending: make(chan struct{}),
		linearize: func(ctx context.Context) error { return m.consistent(ctx, Linearizable) }, names: names}
	m.warnIgnored(plan)
	m.metrics.watch(m)
	if m.cfg.PeerClientTLS != nil {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.probePeers(m.stopc)
		}()
	}
	m.wg.Go(func() { names.run(m.stopc) })
	m.wg.Add(6)
	go func() {
		defer m.wg.Done()
		if err := m.peerSrv.Serve(m.transport.Listen(m.peerLis)); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			m.fatal(fmt.Errorf("peer server: %w", err))
		}
	}()
	go func() {
		defer m.wg.Done()
		m.vouchLoop(m.stopc)
	}()
	go func() {
		defer m.wg.Done()
		<-m.node.Done()
		if err := m.node.Err(); err != nil {
			m.fatal(withForcerName(err, m.node.Members()))
		}
	}()
	go func() {
		defer m.wg.Done()
		m.applyConfigKeyspaceGuardrails()
		m.applyConfigGuardrails()
	}()
	go func() {
		defer m.wg.Done()
		m.copyHistory(m.stopc)
	}()
	go func() {
		defer m.wg.Done()
		m.watchSpace()
	}()
	startStoreScrub(m)
	followFaultFile(m)
	return nil
}

// PeerAddr is the address the peer listener is bound to.
func (m *Member) PeerAddr() string { return m.peerLis.Addr().String() }

// ClusterID is the id of the member's cluster, 0 for a cluster
// bootstrapped before clusters had ids.
func (m *Member) ClusterID() uint64 { return m.node.ClusterID() }

// Name is this member's name.
func (m *Member) Name() string { return m.cfg.Name }

// Err reports the fatal errors of the running member: its raft node
// stopped (a storage failure, or ErrRemoved once it learnt it was removed
// from the cluster), the state machine could not persist what it applied,
// or the peer server failed. The caller should Close the member when it
// receives one.
func (m *Member) Err() <-chan error { return m.errc }

func (m *Member) fatal(err error) {
	if errors.Is(err, ErrRemoved) {
		// Not a failure: the cluster removed this member, which stops.
		m.logger.Info("this member was removed from the cluster; it stops", "err", err)
	} else {
		m.logger.Error("fatal", "err", err)
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
	if m.node != nil {
		m.node.Stop()
	}
	if m.transport != nil {
		m.transport.Stop()
	}
	if m.peerSrv != nil {
		m.peerSrv.Stop()
	} else if m.peerLis != nil {
		m.peerLis.Close()
	}
	m.wg.Wait()
	// Says the failed peer handshakes not said yet.
	m.handshakes.Close()
	if m.sm != nil {
		return m.sm.Close()
	}
	return nil
}
