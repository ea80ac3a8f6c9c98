package lp

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkMaxMinLP solves the max-min LPs of lp_test's randomLP at growing
// sizes with each backend.
func BenchmarkMaxMinLP(b *testing.B) {
	backends := []Backend{Embedded}
	if CBCAvailable() {
		backends = append(backends, CBC)
	}
	for _, size := range []int{10, 40, 100} {
		m := randomLP(uint64(size), size, size)
		for _, be := range backends {
			b.Run(fmt.Sprintf("%dx%d/%s", size, size, be), func(b *testing.B) {
				for b.Loop() {
					if _, err := Solve(context.Background(), m, Options{Backend: be}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(m.NumVars()), "vars")
				b.ReportMetric(float64(m.NumConstraints()), "rows")
			})
		}
	}
}
