package lazyre

import (
	"sync"
	"testing"
)

func TestGetCompilesOnceConcurrently(t *testing.T) {
	l := &Regexp{Expr: `a+b`}
	if l.re != nil {
		t.Fatal("compiled before the first Get")
	}
	var wg sync.WaitGroup
	got := make([]any, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = l.Get()
		}()
	}
	wg.Wait()
	for _, g := range got {
		if g != got[0] {
			t.Fatal("Get returned different compilations")
		}
	}
	if !l.Get().MatchString("xaab") || l.Get().MatchString("b") {
		t.Fatal("wrong expression compiled")
	}
}

func TestGetPanicsOnInvalidExpression(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for an invalid expression")
		}
	}()
	(&Regexp{Expr: `(`}).Get()
}
