// Package endpoint runs the emulated training job's endpoints — the workers
// and the parameter server (PS) of one job — as ordinary processes with
// kernel UDP sockets on port 18258 inside the hosts' network namespaces. The
// GRID switches between them aggregate, multicast results and answer
// collisions (p4/README.md); the endpoints follow the recovery protocol of
// gradproto.Worker and gradproto.PS, the Go reference model, and check every
// sum exactly.
//
// Nobody ships gradient data around: worker i's value v of fragment f is a
// pure function of (seed, i, f, v) (Gradient), so every worker verifies each
// result it receives, and the PS each fragment it completes, against the
// exact sum over all workers.
//
// # Spec
//
// One JSON file per job, shared by the PS and all workers (the runner writes
// it). Durations are Go duration strings ("20ms", "1m"). Unknown fields are
// errors.
//
//	{
//	  "job": {                        // the job as the endpoints see it (gradproto.Plan)
//	    "id": 1,                      // GRID job id, 1..65535
//	    "ps_node": 0,                 // the PS's aggregation node id
//	    "ps_aliases": [81, 82],       // optional: the PS's further node ids, one per 64 workers beyond its first 64
//	    "ps_ip": "10.0.0.9",          // the PS's address
//	    "ps_host": "ps",              // optional: the PS's host name (reports only)
//	    "values": 32,                 // int32 values per packet: 32, or 64 for the GRID_VALUES_64 build (must match the switches')
//	    "members": [                  // the workers, in plan order; --index picks one
//	      {"host": "w1", "ip": "10.0.0.1", "mac": "02:00:00:00:00:01", "node": 1, "slot": 0},
//	      ...
//	    ]
//	  },
//	  "role": "worker",               // optional: "worker" or "ps"; the command must match
//	  "index": 0,                     // optional: the worker's member index (else --index)
//	  "fragments": 1000,              // fragments per worker
//	  "first_fragment": 0,            // optional: id of the first fragment (ids first..first+fragments-1)
//	  "seed": 42,                     // gradient seed
//	  "window": {"initial": 8, "max": 64},  // fragments in flight per worker (AIMD, and Vegas below: see RunWorker)
//	  // optionally also "queued_alpha": 2, "queued_beta": 4: the fragments a worker keeps waiting in queues
//	  // (its window stops growing above alpha and shrinks above beta; a beta below 1 allows windows below one
//	  // fragment, paced); the runner lowers them when many workers' streams share the PS's link
//	  "timeout": "20ms",              // retransmission timeout until round trips are measured (at least 300µs)
//	  "min_timeout": "10ms",          // optional: floor of the measured timeout (default 10ms, never above timeout)
//	  "max_timeout": "1s",            // optional: cap of the timeout, estimate and back-off (default 1s, never below timeout)
//	  "deadline": "60s",              // the endpoint gives up this long after it started (a worker on "signal": after the signal)
//	  "start_wait": "30s",            // optional: how long a worker on "signal" waits for it (default: deadline)
//	  "linger": "1s",                 // optional: the PS stops once it has heard nothing of the job this long after the last result (default 2 × max_timeout)
//	  "results": "broadcast",         // optional: "broadcast" (default; the switches multicast) or "unicast" (a copy per worker; no switch needed)
//	  "start": "now"                  // optional: workers send at once ("now", default) or, once bound, on a start signal ("signal": grid worker waits for SIGUSR1)
//	}
//
// Fragment ids must not repeat on a switch within a job until its units are
// reset (the switch drops late duplicates by fragment id): a runner that runs
// a job several times on the same switches moves first_fragment on.
//
// A member's node is the aggregation node the plan chose for it (a switch's
// id, or ps_node or one of ps_aliases for workers the PS aggregates
// directly) and slot its bit in that node's bitmap; a bitmap has 64 slots,
// so a node with more workers has one id per 64 of them. The member's mac is informational (the host's
// interface has it); hosts reach the PS through their gateway with static
// neighbours (harness/fabric sets them up).
//
// # Sockets and addressing
//
// Every endpoint binds its own address, port 18258 (so one endpoint per host
// address: two jobs' endpoints on one host address would share the port),
// and sends with UDP checksum 0 (SO_NO_CHECK), as p4/README.md says senders
// do. Workers send to ps_ip. The PS sends each result to 255.255.255.255
// from its bound address: the first switch multicasts it by job and arrival
// port (job_mcast), and the last one rewrites the destination to each
// worker's MAC and IP (result_host), so the workers' kernels accept it.
//
// # Reports
//
// RunWorker and RunPS return a Report; WriteReport writes it as JSON
// atomically (a temporary file in the same directory, then rename).
//
// # Limits
//
// One endpoint per host address (the port is fixed), so jobs must not share
// a host. The PS keeps every fragment's sums and result (gradproto.PS), to
// answer late resends: memory grows with the fragments of a run, about a
// kilobyte per fragment (32 values).
package endpoint
