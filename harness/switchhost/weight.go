package switchhost

import (
	"fmt"
	"math"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// NiceOf is the nice value whose scheduling weight is about that of n
// ordinary processes: the kernel's weights grow by a factor of 1.25 per
// step of nice, and -19 is as far as it goes here.
func NiceOf(n int) int {
	if n <= 1 {
		return 0
	}
	return -min(19, int(math.Round(math.Log(float64(n))/math.Log(1.25))))
}

// TakeWeightOf gives every thread of the calling process the scheduling
// weight of n ordinary processes (threads started later inherit it from
// the thread that starts them) and returns the nice value it set. The
// kernel shares a busy CPU per thread among the threads of one session:
// one process hosting n switches would otherwise get the CPU of one switch
// process next to the run's endpoints, where n processes would get n
// shares. It needs CAP_SYS_NICE for a negative nice.
//
// Between sessions the weight does nothing where the kernel groups tasks
// by session (sched_autogroup_enabled, as on desktop distributions and
// the machine grid is developed on): each session then gets an equal
// share, whatever its threads' nice values. There a fabric of n switch
// processes, each waking for each frame it forwards, still took most of
// a busy machine (a busy loop in another session fell from 80-90% of a
// core to 15% while 80 switch processes forwarded, and to 41% while one
// switch host did), most likely because a task woken for each frame
// preempts the others' running ones more often than a process that keeps
// running is preempted.
func TakeWeightOf(n int) (int, error) {
	nice := NiceOf(n)
	// Twice: a thread started while the first pass ran may have
	// inherited the old value.
	for range 2 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return 0, fmt.Errorf("threads of this process: %w", err)
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			if err := unix.Setpriority(unix.PRIO_PROCESS, tid, nice); err != nil && err != unix.ESRCH {
				return 0, fmt.Errorf("nice %d for thread %d: %w", nice, tid, err)
			}
		}
	}
	return nice, nil
}
