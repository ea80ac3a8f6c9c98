package endpoint

import (
	"testing"

	"github.com/grid-ina/grid/harness/p4test/targettest"
)

// TestMain removes the grid binary the switch-process tests build.
func TestMain(m *testing.M) { targettest.Main(m) }
