package engine

// ReportRates lets the external benchmarks (package engine_test, which may
// import packages that import the engine) report the same rates as these.
var ReportRates = reportRates

// CPUTime is cpuTime for the external benchmarks.
var CPUTime = cpuTime
