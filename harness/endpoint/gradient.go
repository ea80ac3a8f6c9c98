package endpoint

import "math"

// Gradient fills vs with worker member's values of fragment frag: a pure
// function of (seed, member, frag, index), so the PS and every worker can
// compute every worker's gradient.
//
// Value i is a + h(member) − h(member+1 mod members), where a, h are
// pseudo-random per (fragment, i) and per (worker, fragment, i): the h terms
// cancel in the sum over all workers, which is members × a (ExactSums), so
// checking a result costs the same whatever the job's size. A worker counted
// twice or missed leaves its a + h − h' in the sum. Values lie within
// ±Amplitude(members), so no sum over any set of the job's workers overflows
// int32 (a switch never takes the overflow path on these gradients).
func Gradient(vs []int32, seed uint64, member int, frag uint32, members int) {
	amp := termAmplitude(members)
	common := commonKey(seed, frag)
	own := workerKey(seed, member, frag)
	next := workerKey(seed, (member+1)%max(members, 1), frag)
	for i := range vs {
		vs[i] = int32(term(common, i, amp) + term(own, i, amp) - term(next, i, amp))
	}
}

// ExactSums fills sums with the sum over all members' values of fragment
// frag.
func ExactSums(sums []int64, seed uint64, frag uint32, members int) {
	amp := termAmplitude(members)
	common := commonKey(seed, frag)
	for i := range sums {
		sums[i] = int64(members) * term(common, i, amp)
	}
}

// Amplitude is the largest magnitude Gradient gives when the job has members
// workers: about 10^6, less for jobs so large that their sums could overflow.
func Amplitude(members int) int32 { return 3 * int32(termAmplitude(members)) }

// termAmplitude bounds each of a value's three terms.
func termAmplitude(members int) int64 {
	return min(333_333, math.MaxInt32/(3*int64(max(members, 1))))
}

func commonKey(seed uint64, frag uint32) uint64 { return mix(seed ^ mix(1<<63|uint64(frag))) }

func workerKey(seed uint64, member int, frag uint32) uint64 {
	return mix(seed ^ mix(uint64(member)<<32|uint64(frag)))
}

// term is the i-th pseudo-random number of key within ±amp.
func term(key uint64, i int, amp int64) int64 {
	return int64(mix(key+uint64(i))%uint64(2*amp+1)) - amp
}

// mix is SplitMix64's finaliser: consecutive inputs give independent-looking
// outputs.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
