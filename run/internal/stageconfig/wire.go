package stageconfig

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
)

// The init process's config travels in a flat binary encoding: the exported
// fields of Config in declaration order, recursively, each as
//
//	string, []byte   uvarint length, then the bytes as they are
//	bool             one byte, 0 or 1
//	int kinds        varint (zig-zag)
//	uint kinds       uvarint
//	slice            uvarint count, then the elements
//	struct           its exported fields
//
// Strings are byte-exact (JSON would replace bytes that are not UTF-8 with
// U+FFFD, so a script, folder or argument named in another encoding would
// reach execve as a different name than the one checked). It replaces gob,
// which every start paid for twice: its package initialiser (about
// 0.1 ms, GODEBUG=inittrace=1) in both processes, and a first Encode and
// Decode that build coders for the type by reflection (60-100 µs each);
// the first decode of this walk over the fields takes about 4 µs. The
// supervisor and the init process
// are the same binary, so both agree on the field order; a field of a kind
// not listed above is an error at encoding time, which the round-trip test
// (every field set) catches when the field is added.

// errTruncated is returned for a config that ends inside a value.
var errTruncated = errors.New("truncated")

// Encode appends the encoding of cfg to b.
func Encode(b []byte, cfg *Config) ([]byte, error) {
	return appendValue(b, reflect.ValueOf(cfg).Elem())
}

// Decode decodes data, which must hold exactly one config.
func Decode(data []byte, cfg *Config) error {
	d := decoder{data: data}
	if err := d.value(reflect.ValueOf(cfg).Elem()); err != nil {
		return fmt.Errorf("at byte %d: %v", d.off, err)
	}
	if d.off != len(d.data) {
		return fmt.Errorf("%d bytes after the config", len(d.data)-d.off)
	}
	return nil
}

func appendValue(b []byte, v reflect.Value) ([]byte, error) {
	switch v.Kind() {
	case reflect.String:
		b = binary.AppendUvarint(b, uint64(v.Len()))
		return append(b, v.String()...), nil
	case reflect.Bool:
		if v.Bool() {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return binary.AppendVarint(b, v.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return binary.AppendUvarint(b, v.Uint()), nil
	case reflect.Slice:
		b = binary.AppendUvarint(b, uint64(v.Len()))
		var err error
		for i := 0; i < v.Len() && err == nil; i++ {
			b, err = appendValue(b, v.Index(i))
		}
		return b, err
	case reflect.Struct:
		t := v.Type()
		var err error
		for i := 0; i < t.NumField() && err == nil; i++ {
			if t.Field(i).IsExported() {
				b, err = appendValue(b, v.Field(i))
			}
		}
		return b, err
	}
	return b, fmt.Errorf("cannot encode a %s", v.Type())
}

// decoder reads the encoding of appendValue; every length is checked
// against what is left, so a bad config cannot make it allocate more than
// its own size per element.
type decoder struct {
	data []byte
	off  int
}

func (d *decoder) uvarint() (uint64, error) {
	n, size := binary.Uvarint(d.data[d.off:])
	if size <= 0 {
		return 0, errTruncated
	}
	d.off += size
	return n, nil
}

// count reads a length and checks that at least that many bytes are left
// (every element takes one byte or more).
func (d *decoder) count() (int, error) {
	n, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	if n > uint64(len(d.data)-d.off) {
		return 0, fmt.Errorf("length %d exceeds the %d bytes left", n, len(d.data)-d.off)
	}
	return int(n), nil
}

func (d *decoder) value(v reflect.Value) error {
	switch v.Kind() {
	case reflect.String:
		n, err := d.count()
		if err != nil {
			return err
		}
		v.SetString(string(d.data[d.off : d.off+n]))
		d.off += n
		return nil
	case reflect.Bool:
		if d.off >= len(d.data) {
			return errTruncated
		}
		b := d.data[d.off]
		if b > 1 {
			return fmt.Errorf("bad bool %d", b)
		}
		d.off++
		v.SetBool(b == 1)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, size := binary.Varint(d.data[d.off:])
		if size <= 0 {
			return errTruncated
		}
		d.off += size
		if v.OverflowInt(n) {
			return fmt.Errorf("%d overflows %s", n, v.Type())
		}
		v.SetInt(n)
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := d.uvarint()
		if err != nil {
			return err
		}
		if v.OverflowUint(n) {
			return fmt.Errorf("%d overflows %s", n, v.Type())
		}
		v.SetUint(n)
		return nil
	case reflect.Slice:
		n, err := d.count()
		if err != nil || n == 0 {
			return err
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < n; i++ {
			if err := d.value(s.Index(i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			if !t.Field(i).IsExported() {
				continue
			}
			if err := d.value(v.Field(i)); err != nil {
				return fmt.Errorf("%s: %v", t.Field(i).Name, err)
			}
		}
		return nil
	}
	return fmt.Errorf("cannot decode a %s", v.Type())
}
