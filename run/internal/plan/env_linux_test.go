package plan

import (
	"strings"
	"testing"
)

func TestEnvHelpers(t *testing.T) {
	for _, c := range []struct {
		lang string
		want bool
	}{{"C.UTF-8", true}, {"en_US.UTF-8", true}, {"de_DE@euro", true}, {"", false}, {"x;rm -rf", false}, {strings.Repeat("a", 65), false}} {
		if got := saneLang(c.lang); got != c.want {
			t.Errorf("saneLang(%q) = %v, want %v", c.lang, got, c.want)
		}
	}
}
