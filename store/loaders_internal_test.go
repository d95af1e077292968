package store

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"groundwork/grounding"
)

// sliceCursor lists n rows with ids 1..n.
type sliceCursor struct{ next0, n int }

func (c *sliceCursor) next(_ context.Context, dst []exportRow, n int) ([]exportRow, error) {
	for len(dst) < n && c.next0 < c.n {
		c.next0++
		dst = append(dst, exportRow{id: int64(c.next0), parent: "p"})
	}
	return dst, nil
}

func (c *sliceCursor) close() error { return nil }

// TestRunLoadersBoundsBatchesInFlight: while one loader is stuck on the
// first batch, the others may not go on loading the rest of the export
// into memory behind it; once it is released, every batch comes out, in
// cursor order.
func TestRunLoadersBoundsBatchesInFlight(t *testing.T) {
	const batches = 40
	cur := &sliceCursor{n: batches * exportBatch}
	release := make(chan struct{})
	var loaded atomic.Int32
	load := func(_ context.Context, batch []exportRow) ([]*grounding.ExportTrajectory, error) {
		if batch[0].id == 1 {
			<-release
		}
		loaded.Add(1)
		ts := make([]*grounding.ExportTrajectory, len(batch))
		for i, r := range batch {
			ts[i] = &grounding.ExportTrajectory{ID: r.id, ParentID: r.parent}
		}
		return ts, nil
	}
	loaders := []loadFunc{load, load}
	out := make(chan exportLoaded, 2)
	go runLoaders(context.Background(), "test export", cur, loaders, out)

	// Let the free loader run as far as it is allowed to.
	time.Sleep(200 * time.Millisecond)
	if n := loaded.Load(); n > int32(len(loaders)) {
		t.Errorf("%d batches loaded behind a stuck first batch; at most %d may wait", n, len(loaders))
	}
	if len(out) != 0 {
		t.Fatalf("a batch was sent before the first")
	}
	close(release)
	var want int64 = 1
	for b := range out {
		if b.err != nil {
			t.Fatal(b.err)
		}
		for _, tr := range b.ts {
			if tr.ID != want {
				t.Fatalf("trajectory %d came out where %d was due", tr.ID, want)
			}
			want++
		}
	}
	if want != batches*exportBatch+1 {
		t.Errorf("%d trajectories came out, want %d", want-1, batches*exportBatch)
	}
}
