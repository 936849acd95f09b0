package udat

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// DefaultDatConf is the dat.conf file read when DAT_OVERRIDE is not set.
const DefaultDatConf = "/etc/dat.conf"

// DatConfEnv is the environment variable that, when set, names the dat.conf
// file to read instead of DefaultDatConf.
const DatConfEnv = "DAT_OVERRIDE"

// ProviderInfo is one provider entry of a dat.conf file. A line has eight
// whitespace-separated fields, the last two quoted:
//
//	name api_version threadsafety default library_path provider_version "ia_params" "platform_params"
//
// for example
//
//	ofa-v2-cma-roe-eth0 u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "eth0 0" ""
type ProviderInfo struct {
	// Name is the IA name passed to dat_ia_open.
	Name string
	// APIVersion is the DAT API the provider implements: "u" (uDAPL) or "k"
	// (kDAPL) followed by major.minor, e.g. "u2.0".
	APIVersion string
	// ThreadSafety is "threadsafe" or "nonthreadsafe".
	ThreadSafety string
	// Default reports whether the entry is marked "default" rather than
	// "nondefault".
	Default bool
	// Library is the provider library, e.g. "libdaplofa.so.2".
	Library string
	// ProviderVersion is the provider's id and version, e.g. "dapl.2.0".
	ProviderVersion string
	// IAParams are the provider's IA parameters, without quotes: for the
	// rdma_cm providers the netdev (or address) and 0, for the socket-CM
	// providers the device and port, e.g. "eth0 0" or "rxe0 1".
	IAParams string
	// PlatformParams are the platform parameters, without quotes (usually
	// empty).
	PlatformParams string
}

// ThreadSafe reports whether the entry says "threadsafe".
func (p ProviderInfo) ThreadSafe() bool { return p.ThreadSafety == "threadsafe" }

// NetDev returns the first field of IAParams: the netdev, address or RDMA
// device the entry is bound to ("eth0" for "eth0 0", "rxe0" for "rxe0 1").
// It returns "" when IAParams is empty.
func (p ProviderInfo) NetDev() string {
	f := strings.Fields(p.IAParams)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// Port returns the second field of IAParams as a number: the port of a
// device entry ("rxe0 1" gives 1), 0 for the netdev entries of the rdma_cm
// providers, and 0 when the field is missing or not a number.
func (p ProviderInfo) Port() int {
	f := strings.Fields(p.IAParams)
	if len(f) < 2 {
		return 0
	}
	n, err := strconv.Atoi(f[1])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// DatConfLineError reports a dat.conf line that is not a valid provider
// entry. Such lines are skipped, as the C registry skips them.
type DatConfLineError struct {
	// Path is the file name ("" when parsing a reader).
	Path string
	// Line is the 1-based line number.
	Line int
	// Msg says what is wrong.
	Msg string
}

// Error returns "dat.conf path:line: msg".
func (e *DatConfLineError) Error() string {
	path := e.Path
	if path == "" {
		path = "dat.conf"
	}
	return fmt.Sprintf("udat: %s:%d: %s", path, e.Line, e.Msg)
}

// DatConfPath returns the dat.conf file the registry reads: the value of
// DAT_OVERRIDE when it is set and not empty, else /etc/dat.conf.
func DatConfPath() string {
	if p := os.Getenv(DatConfEnv); p != "" {
		return p
	}
	return DefaultDatConf
}

// ReadDatConf reads the dat.conf file at path and returns its provider
// entries in file order. Blank lines and comments (from a '#' outside
// quotes to the end of the line) are ignored.
//
// A line that is not a valid entry is skipped; the valid entries are still
// returned, together with an error joining one *DatConfLineError per
// skipped line. Any other error (e.g. the file does not exist) comes with
// no entries.
func ReadDatConf(path string) ([]ProviderInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseDatConf(f, path)
}

// Providers returns the providers of the dat.conf file named by
// DatConfPath, like dat_registry_list_providers. As in the C registry,
// invalid lines are skipped, a name that appears twice keeps its first
// entry, and a missing file means no providers (and no error). Other read
// errors are returned.
func Providers() ([]ProviderInfo, error) {
	ps, err := ReadDatConf(DatConfPath())
	if err != nil {
		var le *DatConfLineError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, nil
		case !errors.As(err, &le):
			return nil, err
		}
	}
	seen := make(map[string]bool, len(ps))
	out := ps[:0]
	for _, p := range ps {
		if seen[p.Name] {
			continue
		}
		seen[p.Name] = true
		out = append(out, p)
	}
	return out, nil
}

// parseDatConf parses dat.conf text from r; path is only used in errors.
func parseDatConf(r io.Reader, path string) ([]ProviderInfo, error) {
	var (
		ps   []ProviderInfo
		errs []error
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		fields, err := splitDatConfLine(sc.Text())
		if err == nil && len(fields) == 0 {
			continue
		}
		var p ProviderInfo
		if err == nil {
			p, err = parseDatConfEntry(fields)
		}
		if err != nil {
			errs = append(errs, &DatConfLineError{Path: path, Line: n, Msg: err.Error()})
			continue
		}
		ps = append(ps, p)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return ps, errors.Join(errs...)
}

// datConfField is one field of a dat.conf line.
type datConfField struct {
	text   string
	quoted bool
}

// splitDatConfLine splits a line into whitespace-separated fields. A field
// that starts with '"' runs to the next '"' and may hold spaces; a '#'
// outside quotes starts a comment.
func splitDatConfLine(line string) ([]datConfField, error) {
	var fields []datConfField
	i := 0
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
			i++
		}
		if i == len(line) || line[i] == '#' {
			return fields, nil
		}
		if line[i] == '"' {
			end := strings.IndexByte(line[i+1:], '"')
			if end < 0 {
				return nil, errors.New("unterminated quoted string")
			}
			fields = append(fields, datConfField{text: line[i+1 : i+1+end], quoted: true})
			i += end + 2
			if i < len(line) && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' && line[i] != '#' {
				return nil, errors.New("no space after quoted string")
			}
			continue
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' && line[j] != '\r' && line[j] != '#' && line[j] != '"' {
			j++
		}
		if j < len(line) && line[j] == '"' {
			return nil, errors.New("quote inside a field")
		}
		fields = append(fields, datConfField{text: line[i:j]})
		i = j
	}
}

// parseDatConfEntry checks the eight fields of an entry.
func parseDatConfEntry(f []datConfField) (ProviderInfo, error) {
	if len(f) != 8 {
		return ProviderInfo{}, fmt.Errorf("%d fields, want 8", len(f))
	}
	for k := 0; k < 6; k++ {
		if f[k].quoted {
			return ProviderInfo{}, fmt.Errorf("field %d must not be quoted", k+1)
		}
	}
	p := ProviderInfo{
		Name:            f[0].text,
		APIVersion:      f[1].text,
		ThreadSafety:    f[2].text,
		Library:         f[4].text,
		ProviderVersion: f[5].text,
		IAParams:        f[6].text,
		PlatformParams:  f[7].text,
	}
	if !validAPIVersion(p.APIVersion) {
		return ProviderInfo{}, fmt.Errorf("bad api version %q (want u<major>.<minor> or k<major>.<minor>)", p.APIVersion)
	}
	if p.ThreadSafety != "threadsafe" && p.ThreadSafety != "nonthreadsafe" {
		return ProviderInfo{}, fmt.Errorf("bad thread safety %q (want threadsafe or nonthreadsafe)", p.ThreadSafety)
	}
	switch f[3].text {
	case "default":
		p.Default = true
	case "nondefault":
	default:
		return ProviderInfo{}, fmt.Errorf("bad default field %q (want default or nondefault)", f[3].text)
	}
	if !validProviderVersion(p.ProviderVersion) {
		return ProviderInfo{}, fmt.Errorf("bad provider version %q (want <id>.<major>.<minor>)", p.ProviderVersion)
	}
	return p, nil
}

// validAPIVersion accepts "u2.0" and "k1.2" style versions.
func validAPIVersion(s string) bool {
	if len(s) < 2 || (s[0] != 'u' && s[0] != 'k') {
		return false
	}
	return validMajorMinor(s[1:])
}

// validProviderVersion accepts "dapl.2.0" style versions: an id, a dot,
// and major.minor.
func validProviderVersion(s string) bool {
	i := strings.IndexByte(s, '.')
	return i > 0 && validMajorMinor(s[i+1:])
}

// validMajorMinor accepts two dot-separated decimal numbers.
func validMajorMinor(s string) bool {
	major, minor, ok := strings.Cut(s, ".")
	return ok && isDigits(major) && isDigits(minor)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
