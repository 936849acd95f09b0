package cverbs

// enumString returns names[v], or unknown when v is out of range: the
// String methods of the C enums give what libibverbs' and librdmacm's
// *_str functions give.
func enumString(names []string, v int, unknown string) string {
	if v >= 0 && v < len(names) {
		return names[v]
	}
	return unknown
}
