package p4rt

import (
	"sync/atomic"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/grid-ina/grid/harness/engine"
)

// BenchmarkTableInsertOverGRPC measures one-entry Write RPCs inserting
// distinct /32 routes over loopback gRPC.
func BenchmarkTableInsertOverGRPC(b *testing.B) {
	f := newFixture(b)
	f.setup()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		e := f.route(ip(10, byte(i>>16), byte(i>>8), byte(i)), 32, 1)
		if err := f.write(1, update(p4v1.Update_INSERT, tableEntity(e))); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 999 { // stay below the table's 1024 entries
			b.StopTimer()
			for j := i - 999; j <= i; j++ {
				e := f.route(ip(10, byte(j>>16), byte(j>>8), byte(j)), 32, 1)
				if err := f.write(1, update(p4v1.Update_DELETE, tableEntity(e))); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "inserts/s")
}

// BenchmarkTableInsertBatchOverGRPC measures inserts sent 100 per Write,
// as a controller installing a table does; each round deletes them again
// (untimed) to stay within the table's 1024 entries.
func BenchmarkTableInsertBatchOverGRPC(b *testing.B) {
	f := newFixture(b)
	f.setup()
	const batch = 100
	inserts := make([]*p4v1.Update, batch)
	deletes := make([]*p4v1.Update, batch)
	for i := range batch {
		e := tableEntity(f.route(ip(10, 0, byte(i>>8), byte(i)), 32, 1))
		inserts[i], deletes[i] = update(p4v1.Update_INSERT, e), update(p4v1.Update_DELETE, e)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := f.write(1, inserts...); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := f.write(1, deletes...); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "inserts/s")
}

// BenchmarkProcessRoutedPacket measures one IPv4 packet through Process
// (LPM hit, ACL miss, counter, meter, register) on parallel goroutines.
func BenchmarkProcessRoutedPacket(b *testing.B) {
	f := newFixture(b)
	f.setup()
	f.mustWrite(update(p4v1.Update_INSERT, tableEntity(f.route(ip(10, 0, 0, 0), 8, 3))))
	frame := ipv4Frame([4]byte{10, 0, 0, 1})
	var forwarded atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		out := int64(0)
		emit := func(engine.Output) { out++ }
		for pb.Next() {
			if err := f.srv.Process(1, frame, emit); err != nil {
				b.Error(err)
				return
			}
		}
		forwarded.Add(out)
	})
	if forwarded.Load() != int64(b.N) {
		b.Fatalf("%d of %d packets left the switch", forwarded.Load(), b.N)
	}
}
