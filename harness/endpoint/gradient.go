package endpoint

import "math"

// Gradient fills vs with worker member's values of fragment frag: a pure
// function of (seed, member, frag, index), so the PS and every worker can
// compute every worker's gradient. Values lie within ±Amplitude(members),
// so no sum over the job's members overflows int32.
func Gradient(vs []int32, seed uint64, member int, frag uint32, members int) {
	amp := uint64(Amplitude(members))
	base := mix(seed ^ mix(uint64(member)<<32|uint64(frag)))
	for i := range vs {
		vs[i] = int32(int64(mix(base+uint64(i))%(2*amp+1)) - int64(amp))
	}
}

// Amplitude is the largest magnitude Gradient gives when the job has members
// workers: 10^6, less for jobs so large that their sums could overflow.
func Amplitude(members int) int32 {
	return int32(min(1_000_000, math.MaxInt32/max(members, 1)))
}

// ExactSums fills sums with the sum over all members' values of fragment
// frag; scratch holds one gradient.
func ExactSums(sums []int64, scratch []int32, seed uint64, frag uint32, members int) {
	clear(sums)
	for m := 0; m < members; m++ {
		Gradient(scratch, seed, m, frag, members)
		for i, v := range scratch {
			sums[i] += int64(v)
		}
	}
}

// mix is SplitMix64's finaliser: consecutive inputs give independent-looking
// outputs.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
