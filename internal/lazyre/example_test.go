package lazyre_test

import (
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/internal/lazyre"
)

// A package-level expression is compiled by its first Get, not when the
// program starts.
var digits = &lazyre.Regexp{Expr: `^[0-9]+$`}

func ExampleRegexp_Get() {
	fmt.Println(digits.Get().MatchString("2026"), digits.Get().MatchString("20x6"))
	// Output: true false
}
