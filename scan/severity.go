package scan

import (
	"fmt"
	"strings"
)

// Severity ranks a finding. The zero value is Info.
type Severity int

// Severities, lowest first.
const (
	Info     Severity = iota // inventory, never a problem by itself (endpoints)
	Low                      // worth a look
	Medium                   // needs a reason before install
	High                     // likely hostile or dangerous
	Critical                 // hostile unless proven otherwise
)

var severityNames = [...]string{"info", "low", "medium", "high", "critical"}

// String returns the lowercase name: "info", "low", "medium", "high" or
// "critical".
func (s Severity) String() string {
	if s < Info || s > Critical {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// ParseSeverity parses a severity name, case-insensitively.
func ParseSeverity(name string) (Severity, error) {
	for i, n := range severityNames {
		if strings.EqualFold(name, n) {
			return Severity(i), nil
		}
	}
	return 0, fmt.Errorf("unknown severity %q (want info, low, medium, high or critical)", name)
}

// MarshalText implements encoding.TextMarshaler (JSON output uses names).
func (s Severity) MarshalText() ([]byte, error) {
	return []byte(s.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// sarifLevel maps a severity to a SARIF result level.
func (s Severity) sarifLevel() string {
	switch {
	case s >= High:
		return "error"
	case s == Medium:
		return "warning"
	default:
		return "note"
	}
}

// securitySeverity is the GitHub code scanning "security-severity" score
// (0.0-10.0) of a severity.
func (s Severity) securitySeverity() string {
	return [...]string{"0.0", "3.0", "5.5", "8.0", "9.5"}[s]
}
