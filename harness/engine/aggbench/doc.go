// Package aggbench benchmarks the engine on GRID's aggregator program
// (p4/aggregator, compiled by harness/p4c) against the Go reference model
// of the same switch (gradproto.Switch). It lives apart from package engine
// so that the engine's own tests do not depend on the aggregator packages.
//
//	go test -run '^$' -bench Aggregator ./harness/engine/aggbench
package aggbench
