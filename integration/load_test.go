package integration

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

// ddlLoad is clients creating tables ks.PREFIX<client>_<i> one after
// another through eps until stopped.
type ddlLoad struct {
	acked atomic.Int64 // tables acknowledged
	stopc chan struct{}
	wg    sync.WaitGroup
}

// startDDLLoad starts n such clients; any error fails t.
func startDDLLoad(t *testing.T, ctx context.Context, eps []string, prefix string, n int) *ddlLoad {
	l := &ddlLoad{stopc: make(chan struct{})}
	for w := range n {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			ddl, err := client.New(client.Config{Endpoints: eps, Timeout: 30 * time.Second})
			if err != nil {
				t.Error(err)
				return
			}
			defer ddl.Close()
			for i := 0; ; i++ {
				select {
				case <-l.stopc:
					return
				default:
				}
				if _, err := ddl.Execute(ctx, &pb.ExecuteRequest{Statements: fmt.Sprintf("CREATE TABLE ks.%s%d_%d (id int PRIMARY KEY)", prefix, w, i)}); err != nil {
					t.Errorf("client %d: %v", w, err)
					return
				}
				l.acked.Add(1)
			}
		}()
	}
	return l
}

// stop stops the clients and waits until they have.
func (l *ddlLoad) stop() {
	close(l.stopc)
	l.wg.Wait()
}
