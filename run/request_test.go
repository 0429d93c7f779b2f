package run

import (
	"context"
	"net"
	"net/netip"
	"reflect"
	"testing"
)

// TestRequestCopiesEveryField: Sandbox.request hands every field of a
// Sandbox to the planning, so a field added to Sandbox and not to
// plan.Request (or not copied) fails here instead of being ignored.
func TestRequestCopiesEveryField(t *testing.T) {
	var s Sandbox
	v := reflect.ValueOf(&s).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if !f.CanSet() {
			continue // the unexported test hooks, set below
		}
		setNonZero(t, v.Type().Field(i).Name, f)
	}
	s.Pool = &Pool{}
	s.resolve = func(context.Context, string) ([]netip.Addr, error) { return nil, nil }
	s.dial = func(context.Context, netip.AddrPort) (net.Conn, error) { return nil, nil }
	s.sharedNobody = true
	r := reflect.ValueOf(s.request()).Elem()
	for i := 0; i < r.NumField(); i++ {
		name := r.Type().Field(i).Name
		if name == "Pool" {
			continue // nil: the Pool above has no native pool
		}
		if r.Field(i).IsZero() {
			t.Errorf("plan.Request.%s is zero: Sandbox.request does not copy it", name)
		}
	}
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Name
		if v.Field(i).CanSet() && name != "Pool" && !r.FieldByName(name).IsValid() {
			t.Errorf("Sandbox.%s has no field in plan.Request", name)
		}
	}
}

// setNonZero sets f to a value other than its zero value.
func setNonZero(t *testing.T, name string, f reflect.Value) {
	switch f.Kind() {
	case reflect.String:
		f.SetString("x")
	case reflect.Bool:
		f.SetBool(true)
	case reflect.Int, reflect.Int64:
		f.SetInt(-7) // not a default: defaults replace zero only
	case reflect.Float64:
		f.SetFloat(1.5)
	case reflect.Slice:
		f.Set(reflect.MakeSlice(f.Type(), 1, 1))
	case reflect.Map:
		f.Set(reflect.MakeMap(f.Type()))
	case reflect.Pointer:
		f.Set(reflect.New(f.Type().Elem()))
	case reflect.Interface:
		f.Set(reflect.ValueOf(struct{ reflectWriter }{}))
	default:
		t.Fatalf("Sandbox.%s: kind %s not handled by the test", name, f.Kind())
	}
}

// reflectWriter is an io.Reader and io.Writer for the interface fields.
type reflectWriter struct{}

func (reflectWriter) Read([]byte) (int, error)  { return 0, nil }
func (reflectWriter) Write([]byte) (int, error) { return 0, nil }
