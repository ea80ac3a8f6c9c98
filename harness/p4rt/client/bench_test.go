package client

import (
	"context"
	"testing"
)

// BenchmarkInsertAndDeleteEntry measures a table insert and a delete, each
// one Write round trip to the p4rt server over loopback TCP.
func BenchmarkInsertAndDeleteEntry(b *testing.B) {
	_, c := dialed(b)
	ctx := context.Background()
	e := fwdEntry(2, 1)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.InsertEntry(ctx, e); err != nil {
			b.Fatal(err)
		}
		if err := c.DeleteEntry(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadRegister measures one register cell read.
func BenchmarkReadRegister(b *testing.B) {
	_, c := dialed(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.ReadRegister(ctx, "last_type", 3); err != nil {
			b.Fatal(err)
		}
	}
}
