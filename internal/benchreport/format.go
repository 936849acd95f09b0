package benchreport

import (
	"fmt"
	"strconv"
	"strings"
)

// dash stands for a value that is missing.
const dash = "–"

// Num formats v with digits decimals and thousands separators, or a dash
// when v is nil.
func Num(v *float64, digits int) string {
	if v == nil {
		return dash
	}
	s := strconv.FormatFloat(*v, 'f', digits, 64)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	ip, fp, _ := strings.Cut(s, ".")
	if fp != "" {
		fp = "." + fp
	}
	var b strings.Builder
	for i, c := range ip {
		if i > 0 && (len(ip)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return sign + b.String() + fp
}

// Ratio is a/b with two decimals, or "" when either is missing or b is not
// positive. Targets are judged on this rounded ratio, as the tables show it.
func Ratio(a, b *float64) string {
	if a == nil || b == nil || *b <= 0 {
		return ""
	}
	return fmt.Sprintf("%.2f", *a / *b)
}

// ratioAtLeast reports whether the ratio r is given and at least t.
func ratioAtLeast(r string, t float64) bool {
	v, err := strconv.ParseFloat(r, 64)
	return err == nil && v >= t
}

// ratioAtMost reports whether the ratio r is given and at most t.
func ratioAtMost(r string, t float64) bool {
	v, err := strconv.ParseFloat(r, 64)
	return err == nil && v <= t
}

// orDash is s, or a dash when s is empty.
func orDash(s string) string {
	if s == "" {
		return dash
	}
	return s
}

// pratio formats a paired ratio with two decimals, or "".
func pratio(v *float64) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%.2f", *v)
}

// plural is "N thing" or "N things".
func plural(n int, thing string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, thing)
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
