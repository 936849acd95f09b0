package benchreport

import (
	"slices"
	"strconv"
)

// Stat summarizes the runs of one tool on one row for one metric, over the
// runs that reported it.
type Stat struct {
	Median, Min, Max float64
	Runs             int
}

// median is the median of sorted values: the middle one, or the mean of
// the two middle ones.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// value is a metric's number; ok is false for NA, FAIL or anything else
// that is not a number.
func value(s string) (float64, bool) {
	if s == NA || s == Fail {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// Stat returns the summary of metric m of tool's runs of row; ok is false
// when none reported it.
func (in *Inputs) Stat(row, tool string, m int) (s Stat, ok bool) {
	var vs []float64
	for _, r := range in.Results {
		if r.Row != row || r.Tool != tool {
			continue
		}
		if v, ok := value(r.Values[m]); ok {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return Stat{}, false
	}
	slices.Sort(vs)
	return Stat{Median: median(vs), Min: vs[0], Max: vs[len(vs)-1], Runs: len(vs)}, true
}

// Median is the median of metric m of tool's runs of row, or nil.
func (in *Inputs) Median(row, tool string, m int) *float64 {
	s, ok := in.Stat(row, tool, m)
	if !ok {
		return nil
	}
	return &s.Median
}

// PairedRatio is the median over repetitions of udapl/tool for metric m of
// row, each ratio taken between the runs of one repetition (a few seconds
// apart), or nil when no repetition has both.
func (in *Inputs) PairedRatio(row, tool string, m int) *float64 {
	return in.PairedRatioOf(row, "udapl", tool, m)
}

// PairedRatioOf is the median over repetitions of num/den for metric m of
// row, each ratio taken between the runs of one repetition, or nil when no
// repetition has both.
func (in *Inputs) PairedRatioOf(row, num, den string, m int) *float64 {
	u, o := map[string]float64{}, map[string]float64{}
	for _, r := range in.Results {
		v, ok := value(r.Values[m])
		if r.Row != row || !ok {
			continue
		}
		switch r.Tool {
		case num:
			u[r.Rep] = v
		case den:
			o[r.Rep] = v
		}
	}
	var rs []float64
	for rep, uv := range u {
		if ov, ok := o[rep]; ok && ov > 0 {
			rs = append(rs, uv/ov)
		}
	}
	if len(rs) == 0 {
		return nil
	}
	slices.Sort(rs)
	m2 := median(rs)
	return &m2
}

// Fails counts the failed runs of tool on row.
func (in *Inputs) Fails(row, tool string) int {
	n := 0
	for _, r := range in.Results {
		if r.Row == row && r.Tool == tool && r.Failed() {
			n++
		}
	}
	return n
}

// Failed counts all failed runs.
func (in *Inputs) Failed() int {
	n := 0
	for _, r := range in.Results {
		if r.Failed() {
			n++
		}
	}
	return n
}
