package cli

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/approve-tui/approve-tui/agent"
	"github.com/approve-tui/approve-tui/model"
	"github.com/approve-tui/approve-tui/storage"
)

// BenchmarkHermesTransport measures Hermes' transport end to end, with the
// Python stand-in of Hermes' host running the plugin, which runs the real
// binary: request → row (from Hermes creating the request to its row seen
// by a store watcher, as the console sees it) and decision → answer (from
// the approval committed to Hermes holding the answer). p50/p99 of each;
// go test ./cli -run '^$' -bench HermesTransport -benchtime 50x
func BenchmarkHermesTransport(b *testing.B) {
	hs := newHermesSetup(b)
	host := hs.startHost(b, map[string]any{"binary": hs.bin})
	s, err := storage.Open(context.Background(), hs.db, storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	w, err := s.Watch(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	var toRow, toAnswer []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tag := fmt.Sprintf("b%d", i)
		cmd := fmt.Sprintf("rm -rf /srv/bench/%d", i)
		host.ask(tag, cmd, 120, nil)
		var rec *storage.Record
		var seen time.Time
		for rec == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			if err := w.Wait(ctx); err != nil {
				cancel()
				b.Fatalf("no row for %s: %v\n%s", tag, err, host.log())
			}
			cancel()
			recs, err := s.List(context.Background(), storage.ListOptions{})
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range recs {
				if r.Command == cmd {
					rec, seen = r, time.Now()
				}
			}
		}
		// The hook must be the live waiter before the decision counts.
		for {
			ws, err := s.WaiterState(context.Background(), rec.ApprovalID)
			if err == nil && ws.State == storage.WaiterLive {
				break
			}
			time.Sleep(time.Millisecond)
		}
		if _, err := s.Consume(context.Background(), rec.ApprovalID, rec.ApprovalID, model.Actor{Surface: model.SurfaceCLI, Name: "bench"}); err != nil {
			b.Fatal(err)
		}
		decided := time.Now()
		r := host.result(tag, 30*time.Second)
		if r.Choice != "once" || rec.ApprovalID != agent.HermesHookID(r.RequestID) {
			b.Fatalf("%+v", r)
		}
		toRow = append(toRow, model.Epoch(seen)-r.CreatedAt)
		toAnswer = append(toAnswer, r.AnsweredAt-model.Epoch(decided))
	}
	b.StopTimer()
	b.ReportMetric(quantileMs(toRow, 0.5), "row-p50-ms")
	b.ReportMetric(quantileMs(toRow, 0.99), "row-p99-ms")
	b.ReportMetric(quantileMs(toAnswer, 0.5), "answer-p50-ms")
	b.ReportMetric(quantileMs(toAnswer, 0.99), "answer-p99-ms")
}

// quantileMs is the q quantile of secs (seconds), in milliseconds.
func quantileMs(secs []float64, q float64) float64 {
	if len(secs) == 0 {
		return 0
	}
	s := append([]float64(nil), secs...)
	sort.Float64s(s)
	i := int(q * float64(len(s)-1))
	return s[i] * 1000
}
