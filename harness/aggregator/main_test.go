package aggregator

import (
	"testing"

	"github.com/grid-ina/grid/harness/p4test/targettest"
)

// TestMain builds the grid binary at most once for all tests and removes
// it afterwards.
func TestMain(m *testing.M) { targettest.Main(m) }
